//! `secrets::scrub_args`, what every recorded command line passes through: arguments
//! separated by NUL bytes, with a canary password typed in a URL appended to one of them
//! (after a space, so the argument's own text cannot make it part of a word of its own).
#![no_main]

use cryptoscope_model::secrets::{scrub_args, MASK};
use libfuzzer_sys::fuzz_target;

const CANARY: &str = "Canary-Pw-7f3e";

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    // The canary must be ours alone (masking only replaces text, so it cannot make one).
    if text.contains(CANARY) {
        return;
    }
    let mut args: Vec<String> = text.split('\0').map(str::to_string).collect();
    let k = pick as usize % args.len();
    args[k].push_str(&format!(" postgresql://bench:{CANARY}@127.0.0.1/postgres"));
    let once = scrub_args(&args);
    assert_eq!(once.len(), args.len(), "one argument out per argument in");
    for a in &once {
        assert!(!a.contains(CANARY), "the canary survived in {a:?}");
    }
    assert!(once[k].contains(MASK), "{:?}", once[k]);
    // Scrubbing a scrubbed line changes nothing.
    assert_eq!(scrub_args(&once), once);
});
