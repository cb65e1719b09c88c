//! `vectors::extremely_long`: a SHA-3 competition `ExtremelyLongMsgKAT_256.txt` file
//! (`Repeat`, `Text`, `MD` lines).
#![no_main]

use cryptoscope_catalogue::vectors::{extremely_long, VectorError};
use cryptoscope_fuzz::put;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = put("hash/sha3-round2/cand/ExtremelyLongMsgKAT_256.txt", data);
    match extremely_long(&path) {
        Ok((_repeat, text, md)) => {
            // Both come from lines of the file.
            assert!(text.len() < data.len() && md.len() * 2 < data.len());
            assert!(!text.contains(&b'\n'));
        }
        Err(VectorError::Malformed { .. }) => {}
        Err(VectorError::Io { .. }) => assert!(std::str::from_utf8(data).is_err()),
        Err(e) => panic!("unexpected error: {e}"),
    }
});
