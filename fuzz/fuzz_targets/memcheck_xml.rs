//! `memcheck::parse`: valgrind memcheck's XML, as `cryptoscope ct` reads it. Any input is
//! parsed or refused; a parsed error has a kind and at least one occurrence.
#![no_main]

use cryptoscope_measure::memcheck::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(errors) = parse(text) {
        for e in errors {
            assert!(e.count >= 1 || text.contains("<count>0</count>"));
            assert!(e.stack.len() <= text.matches("<frame>").count());
        }
    }
});
