//! The sampling plan (`cryptoscope_measure::sampler::Plan`) as a worker reads it from its
//! `--plan` argument (JSON), then sampled with it: a stand-in operation that fails after a
//! fixed number of calls keeps every plan finite, so what is checked is that no plan makes
//! the sampler panic, allocate absurdly or break its own invariants.
#![no_main]

use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_measure::sampler::{sample, Plan, StopReason};
use libfuzzer_sys::fuzz_target;

/// Calls after which the stand-in operation fails.
const CALLS: usize = 400;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(plan) = serde_json::from_str::<Plan>(text) else {
        return;
    };
    // A known TSC frequency: no calibration per input.
    let clock = Clock::with_tsc_hz(ClockChoice::Tsc, Some(1e9));
    let mut calls = 0usize;
    let r = sample(&clock, &plan, || {
        calls += 1;
        if calls > CALLS {
            Err(())
        } else {
            Ok(())
        }
    });
    if let Ok(s) = r {
        let n = s.cycles.len();
        assert!(n >= 1 && n <= plan.max_samples.max(1), "{n} samples, plan {plan:?}");
        assert_eq!((s.ns.len(), s.t_ns.len()), (n, n));
        assert!(s.cycles.iter().chain(&s.ns).all(|&x| x >= 0.0));
        if s.stop == StopReason::MaxSamples {
            assert_eq!(n, plan.max_samples.max(1));
        }
        assert!(s.warmup_calls + n <= CALLS);
    }
});
