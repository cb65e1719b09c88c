//! The JSON known-answer files under `vectors/`: `kat_digest` (liboqs KAT digests),
//! `x25519`, `p256`, `ffdhe2048` and `block_cipher_vectors` (GIFT and Camellia). The first
//! input byte picks the function (and file, algorithm); the rest is the file.
#![no_main]

use cryptoscope_catalogue::vectors::{self, VectorError};
use cryptoscope_fuzz::{fresh_dir, put, selector};
use libfuzzer_sys::fuzz_target;

const CIPHERS: [&str; 5] = ["GIFT-64", "GIFT-128", "GIFTb-128", "Camellia-128", "Camellia-256"];

fn expect_parse_error<T>(r: Result<T, VectorError>, text: &[u8]) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(VectorError::Malformed { .. }) => None,
        Err(VectorError::Io { .. }) if std::str::from_utf8(text).is_err() => None,
        // `kat_digest`: a well-formed file without the entry.
        Err(VectorError::Missing { .. }) => None,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((sel, text)) = selector(data) else { return };
    let dir = fresh_dir("vj");
    let dir = dir.as_path();
    match sel % 10 {
        k @ (0 | 1) => {
            let file = ["liboqs-kats.json", "liboqs-0.13.0-kats.json"][k as usize];
            put(&format!("vj/kem/{file}"), text);
            let name = if sel & 0x80 != 0 { "ML-KEM-768" } else { "HQC-128" };
            if let Some(d) = expect_parse_error(vectors::kat_digest(dir, file, name), text) {
                for v in [&d.single, &d.all] {
                    assert!(v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()), "{v:?}");
                }
            }
        }
        2 => {
            put("vj/kex/x25519-rfc7748.json", text);
            expect_parse_error(vectors::x25519(dir), text);
        }
        3 => {
            put("vj/kex/p256-ecdh.json", text);
            expect_parse_error(vectors::p256(dir), text);
        }
        4 => {
            put("vj/kex/ffdhe2048-rfc7919.json", text);
            expect_parse_error(vectors::ffdhe2048(dir), text);
        }
        k => {
            let alg = CIPHERS[(k - 5) as usize];
            let file = if alg.starts_with("GIFT") {
                "gift.json"
            } else {
                "camellia.json"
            };
            put(&format!("vj/block-ciphers/{file}"), text);
            if let Some(v) = expect_parse_error(vectors::block_cipher_vectors(dir, alg), text) {
                for c in &v {
                    assert_eq!(c.plaintext.len(), c.ciphertext.len());
                    assert!(c.plaintext.len() == 8 || c.plaintext.len() == 16);
                    assert!(c.label.starts_with("row "));
                }
            }
        }
    }
});
