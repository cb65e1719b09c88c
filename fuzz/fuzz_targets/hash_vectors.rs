//! `vectors::hash_vectors`: NIST CAVP `.rsp` files (`Len`/`Msg`/`MD`, `Output`, `Ptn`) and
//! the SHA-3 competition's KAT text. The first input byte picks the file's place: odd, a
//! `sha3-round2` file (records whose `Len` is not whole bytes are skipped); even, a CAVP
//! file (such records are errors). The rest is the file.
#![no_main]

use cryptoscope_catalogue::vectors::{hash_vectors, partial_bytes_allowed, VectorError};
use cryptoscope_fuzz::{put, selector};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((sel, text)) = selector(data) else { return };
    let partial = sel & 1 == 1;
    let rel = if partial {
        "hash/sha3-round2/cand/ShortMsgKAT_256.txt"
    } else {
        "hash/cavp/SHA256ShortMsg.rsp"
    };
    let path = put(rel, text);
    assert_eq!(partial_bytes_allowed(&path), partial);
    match hash_vectors(&path) {
        Ok(v) => {
            assert!(!v.is_empty(), "Ok with no records");
            // `index` counts every record, skipped ones too: increasing, and exactly the
            // position when nothing may be skipped.
            for (i, h) in v.iter().enumerate() {
                assert!(h.index > i, "index {} at position {i}", h.index);
                if !partial {
                    assert_eq!(h.index, i + 1);
                }
            }
            assert!(v.windows(2).all(|w| w[0].index < w[1].index));
        }
        Err(VectorError::Malformed { .. }) => {}
        // Reading as text fails only for input that is not UTF-8.
        Err(VectorError::Io { .. }) => assert!(std::str::from_utf8(text).is_err()),
        Err(e) => panic!("unexpected error: {e}"),
    }
});
