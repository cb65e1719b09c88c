//! `memcheck::parse`: valgrind memcheck's XML, as `cryptoscope ct` reads it. Any input is
//! parsed or refused; a parsed error has a kind and at least one occurrence, and its
//! origin, when it has one, comes from the text.
#![no_main]

use cryptoscope_measure::memcheck::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(errors) = parse(text) {
        for e in errors {
            assert!(e.count >= 1);
            assert!(e.stack.len() <= text.matches("<frame>").count());
            // An origin (--track-origins=yes) comes from an <auxwhat> that says so, and its
            // frames are frames of the text too.
            if let Some(o) = &e.origin {
                assert!(o.what.contains("was created by"));
                assert!(e.stack.len() + o.stack.len() <= text.matches("<frame>").count());
            }
        }
    }
});
