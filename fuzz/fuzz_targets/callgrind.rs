//! `callgrind::parse`: callgrind's output format, then what `cryptoscope profile` does
//! with it (crates/engine/src/profile.rs): several dumps parsed and merged into one profile,
//! then inclusive costs, call counts, reachability from the profiled root and callees.
//! Input: the dumps, separated by form feeds (0x0c).
#![no_main]

use cryptoscope_measure::callgrind::{parse, Profile};
use libfuzzer_sys::fuzz_target;

const ROOT: &str = "cryptoscope_profiled_op";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut merged = Profile::default();
    for part in text.split('\x0c') {
        let p = match parse(part) {
            Ok(p) => p,
            Err(e) => {
                // The line named exists (or is the last, for a missing header).
                assert!(e.line <= part.lines().count().max(1), "{e}");
                let _ = e.to_string();
                return;
            }
        };
        assert!(!p.events.is_empty());
        for a in &p.arcs {
            assert!(a.caller < p.functions.len() && a.callee < p.functions.len());
        }
        merged.merge(&p);
    }
    let p = &merged;
    let inside = match p.find(ROOT) {
        Some(r) => p.reachable(r),
        None => vec![true; p.functions.len()],
    };
    assert_eq!(inside.len(), p.functions.len());
    for i in 0..p.functions.len() {
        let inclusive = p.inclusive(i);
        assert!(inclusive >= p.functions[i].self_cost);
        let _ = p.calls(i);
        let c = p.callees(i);
        assert!(c.windows(2).all(|w| w[0].cost >= w[1].cost));
    }
});
