//! `external::load`: a vector file a user brings to `verify --vectors FILE` (CAVP hash and
//! NIST KEM KAT .rsp, Wycheproof JSON). Any input is parsed or refused with an error; a file
//! that parses has records whose fields came from the file.
#![no_main]

use cryptoscope_catalogue::external::load;
use cryptoscope_fuzz::put;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Both kinds of name: the parser must decide by content, not by the file name.
    for name in ["user/vectors.rsp", "user/x25519_test.json"] {
        let path = put(name, data);
        if let Err(e) = load(&path) {
            // One line, for the CLI's one-line error.
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
});
