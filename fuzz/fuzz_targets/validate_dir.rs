//! `vectors::validate_dir`: the whole vectors directory as the gate checks it up front. The
//! scratch directory holds the repository's own JSON vector files; the first input byte
//! picks one of them to replace with the rest of the input (or, last choice, the first
//! hash known-answer file, in a `hash/` directory that has only it), so every file is
//! reached with the others valid.
#![no_main]

use cryptoscope_catalogue::names::ALGORITHMS;
use cryptoscope_catalogue::vectors::{hash_files, validate_dir, VectorError};
use cryptoscope_catalogue::Family;
use cryptoscope_fuzz::{put, scratch, selector, VECTOR_FILES};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        for (rel, text) in VECTOR_FILES {
            put(&format!("vd/{rel}"), text.as_bytes());
        }
        let d = scratch().join("vd");
        // The untouched copy must pass, or fuzzing later files would be meaningless.
        validate_dir(&d).expect("the repository's vector files fail validate_dir");
        d
    })
}

fn first_hash_file() -> &'static str {
    let alg = ALGORITHMS
        .iter()
        .find(|a| a.family == Family::Hash)
        .expect("a hash algorithm");
    hash_files(alg.name)[0]
}

fuzz_target!(|data: &[u8]| {
    let Some((sel, text)) = selector(data) else { return };
    let d = dir();
    let k = sel as usize % (VECTOR_FILES.len() + 1);
    let r = if k < VECTOR_FILES.len() {
        let (rel, original) = VECTOR_FILES[k];
        put(&format!("vd/{rel}"), text);
        let r = validate_dir(d);
        put(&format!("vd/{rel}"), original.as_bytes());
        r
    } else {
        put(&format!("vd/hash/{}", first_hash_file()), text);
        let r = validate_dir(d);
        std::fs::remove_dir_all(d.join("hash")).expect("cannot remove the scratch hash directory");
        // The other hash files are absent: never Ok.
        assert!(r.is_err(), "validate_dir passed with hash files missing");
        r
    };
    match r {
        Ok(()) => {}
        Err(VectorError::Malformed { .. }) | Err(VectorError::Io { .. }) => {}
        Err(e) => panic!("unexpected error: {e}"),
    }
});
