//! Adaptive sampling: warm up, then time one call per sample until the median is known
//! precisely enough, the sample cap is reached, or the time budget is spent.
//!
//! Every sample is one call of the operation between `Clock::start` and `Clock::stop`,
//! minus the clock's measured overhead (never below zero). Samples are kept in the order
//! they were taken so that drift over a run can be analysed later. The sampler must never
//! allocate between `start` and `stop`; the caller prepares all buffers beforehand.

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::stats::{median_ci_order_stats, quantile_sorted};

/// How many samples to take and when to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Samples to take before the precision test may stop sampling.
    pub min_samples: usize,
    /// Hard cap on samples (at most [`MAX_SAMPLES`] in a plan read from JSON).
    #[serde(deserialize_with = "at_most_max_samples")]
    pub max_samples: usize,
    /// Stop once the 95% interval of the median is within ± this fraction of it.
    pub target_rel_ci: f64,
    /// Time allowed for warm-up plus sampling of this operation.
    pub budget: Duration,
    /// Warm-up time (at least one call is made and discarded, unless this is zero: the
    /// caller has then already exercised the operation).
    pub warmup: Duration,
    /// Samples taken even when the budget is spent (slow operations still get a median).
    pub floor_samples: usize,
}

/// Most samples a plan read from JSON may ask for: the sampler reserves room for all of
/// them up front (32 bytes each), so a larger number is refused rather than allocated.
pub const MAX_SAMPLES: usize = 10_000_000;

fn at_most_max_samples<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if n > MAX_SAMPLES {
        return Err(serde::de::Error::custom(format!(
            "max_samples {n} is more than {MAX_SAMPLES}"
        )));
    }
    Ok(n)
}

impl Plan {
    /// The default plan of `cryptoscope run`: 100…1000 samples, ±1 %.
    pub fn standard(budget: Duration) -> Plan {
        Plan {
            min_samples: 100,
            max_samples: 1000,
            target_rel_ci: 0.01,
            budget,
            warmup: Duration::from_millis(200),
            floor_samples: 5,
        }
    }

    /// The `--quick` plan: fewer samples, shorter warm-up.
    pub fn quick(budget: Duration) -> Plan {
        Plan {
            min_samples: 20,
            max_samples: 200,
            target_rel_ci: 0.02,
            budget,
            warmup: Duration::from_millis(20),
            floor_samples: 3,
        }
    }
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The 95% interval of the median reached the target precision.
    Converged,
    /// `max_samples` were taken.
    MaxSamples,
    /// The time budget was spent (after at least `floor_samples`).
    Budget,
}

/// Raw samples of one operation, in the order they were taken.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SampleSet {
    /// Overhead-corrected cycles (of the clock's source) per call.
    pub cycles: Vec<f64>,
    /// Overhead-corrected nanoseconds per call.
    pub ns: Vec<f64>,
    pub stop: StopReason,
    pub warmup_calls: usize,
    /// Wall time spent in warm-up and sampling, seconds.
    pub wall_s: f64,
    /// When each sample started, nanoseconds after `started_unix_ms`.
    #[serde(default)]
    pub t_ns: Vec<f64>,
    /// When sampling started (after warm-up), milliseconds since the Unix epoch.
    #[serde(default)]
    pub started_unix_ms: f64,
}

/// What the sampler reads time from: the [`Clock`] in every measurement, and a scripted
/// stand-in in tests, so that stopping rules and the verdicts drawn from samples are tested
/// on samples the test controls (docs/testing.md) rather than on the machine's speed.
pub trait Timer {
    type Stamp: Copy;
    /// Read at the start of a measured region.
    fn start(&self) -> Self::Stamp;
    /// Read at the end of a measured region.
    fn stop(&self) -> Self::Stamp;
    /// Raw (cycles, time-base ticks) between two stamps, before overhead correction.
    fn elapsed(&self, a: Self::Stamp, b: Self::Stamp) -> (u64, u64);
    /// Median cost of an empty measurement, in cycles.
    fn overhead_cycles(&self) -> f64;
    /// Median cost of an empty measurement, in time-base ticks.
    fn overhead_ticks(&self) -> f64;
    /// Time-base ticks to nanoseconds.
    fn ticks_to_ns(&self, ticks: f64) -> f64;
}

impl Timer for Clock {
    type Stamp = crate::clock::Stamp;
    #[inline(always)]
    fn start(&self) -> Self::Stamp {
        Clock::start(self)
    }
    #[inline(always)]
    fn stop(&self) -> Self::Stamp {
        Clock::stop(self)
    }
    #[inline(always)]
    fn elapsed(&self, a: Self::Stamp, b: Self::Stamp) -> (u64, u64) {
        Clock::elapsed(self, a, b)
    }
    fn overhead_cycles(&self) -> f64 {
        Clock::overhead_cycles(self)
    }
    fn overhead_ticks(&self) -> f64 {
        Clock::overhead_ticks(self)
    }
    fn ticks_to_ns(&self, ticks: f64) -> f64 {
        Clock::ticks_to_ns(self, ticks)
    }
}

/// A [`Timer`] for tests: each measured region lasts what `next` returns (ticks, rounded;
/// one tick = one cycle = 1 ns), with no overhead. With it, the sampler's rules and the
/// dudect loop are tested on durations the test chooses (docs/testing.md).
pub struct ScriptedTimer {
    next: std::cell::RefCell<Box<dyn FnMut() -> f64>>,
}

impl ScriptedTimer {
    /// Regions last `next()` each, called once per region as it ends.
    pub fn new(next: impl FnMut() -> f64 + 'static) -> ScriptedTimer {
        ScriptedTimer {
            next: std::cell::RefCell::new(Box::new(next)),
        }
    }

    /// Regions last `durations[0]`, `durations[1]`, ... in turn (cycling).
    pub fn from_durations(durations: Vec<f64>) -> ScriptedTimer {
        let mut k = 0;
        ScriptedTimer::new(move || {
            let d = durations[k % durations.len()];
            k += 1;
            d
        })
    }
}

impl Timer for ScriptedTimer {
    type Stamp = u64;
    fn start(&self) -> u64 {
        0
    }
    fn stop(&self) -> u64 {
        (self.next.borrow_mut())().max(0.0).round() as u64
    }
    fn elapsed(&self, a: u64, b: u64) -> (u64, u64) {
        (b - a, b - a)
    }
    fn overhead_cycles(&self) -> f64 {
        0.0
    }
    fn overhead_ticks(&self) -> f64 {
        0.0
    }
    fn ticks_to_ns(&self, ticks: f64) -> f64 {
        ticks
    }
}

/// Runs `op` under `plan`, timing each call with `clock`.
///
/// An error from `op` stops sampling and is returned: an operation that fails is never
/// given a number.
pub fn sample<T: Timer, E>(clock: &T, plan: &Plan, mut op: impl FnMut() -> Result<(), E>) -> Result<SampleSet, E> {
    let begin = Instant::now();
    let mut warmup_calls = 0;
    while !plan.warmup.is_zero() {
        op()?;
        warmup_calls += 1;
        let spent = begin.elapsed();
        if spent >= plan.warmup || spent >= plan.budget / 4 {
            break;
        }
    }
    let oc = clock.overhead_cycles();
    let ot = clock.overhead_ticks();
    let mut cycles = Vec::with_capacity(plan.max_samples);
    let mut ticks = Vec::with_capacity(plan.max_samples);
    let mut scratch = Vec::with_capacity(plan.max_samples);
    let mut next_check = plan.min_samples.max(1);
    let mut t_ns = Vec::with_capacity(plan.max_samples);
    let started_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1e3)
        .unwrap_or(0.0);
    let sampling = Instant::now();
    let stop = loop {
        // Outside the timed region: costs the run a few tens of ns per sample, not the sample.
        t_ns.push(sampling.elapsed().as_nanos() as f64);
        let a = clock.start();
        let r = op();
        let b = clock.stop();
        r?;
        let (c, t) = clock.elapsed(a, b);
        cycles.push((c as f64 - oc).max(0.0));
        ticks.push((t as f64 - ot).max(0.0));
        let n = cycles.len();
        if n >= plan.max_samples {
            break StopReason::MaxSamples;
        }
        if n >= plan.floor_samples.max(1) && begin.elapsed() >= plan.budget {
            break StopReason::Budget;
        }
        if n >= next_check {
            scratch.clear();
            scratch.extend_from_slice(&cycles);
            scratch.sort_by(|x, y| x.total_cmp(y));
            let med = quantile_sorted(&scratch, 0.5);
            let (lo, hi) = median_ci_order_stats(&scratch);
            if med > 0.0 && (hi - lo) / 2.0 <= plan.target_rel_ci * med {
                break StopReason::Converged;
            }
            next_check = n + (n / 8).max(10);
        }
    };
    let ns = ticks.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    Ok(SampleSet {
        cycles,
        ns,
        stop,
        warmup_calls,
        wall_s: begin.elapsed().as_secs_f64(),
        t_ns,
        started_unix_ms,
    })
}

#[cfg(test)]
mod tests {
    //! The stopping rules and the drift verdict on scripted samples: a [`ScriptedTimer`]
    //! hands the sampler the durations the test chose (seeded noise, heavy tails, a level
    //! shift), so every assertion here holds on any machine under any load. One test times
    //! a real operation, for the plumbing only.
    use super::*;
    use crate::clock::ClockChoice;
    use cryptoscope_testkit::Samples;

    fn plan(min: usize, max: usize, rel: f64) -> Plan {
        Plan {
            min_samples: min,
            max_samples: max,
            target_rel_ci: rel,
            budget: Duration::from_secs(3600),
            warmup: Duration::ZERO,
            floor_samples: 3,
        }
    }

    fn scripted(durations: Vec<f64>, p: &Plan) -> SampleSet {
        sample::<_, ()>(&ScriptedTimer::from_durations(durations), p, || Ok(())).unwrap()
    }

    #[test]
    fn tight_samples_converge_at_the_first_check() {
        // 1,000 ± 5 with rare 3× interruptions: the median's 95 % interval is well inside
        // ± 1 % after 50 samples, so the first precision check stops the run.
        let d = Samples::new(1).timings(1000, 1000.0, 5.0, 0.02, 2000.0);
        let s = scripted(d, &plan(50, 1000, 0.01));
        assert_eq!(s.stop, StopReason::Converged);
        assert_eq!(s.cycles.len(), 50);
    }

    #[test]
    fn wide_samples_run_to_the_cap() {
        // Bimodal 1,000 / 2,000 half and half: the median never settles within ± 0.1 %.
        let mut g = Samples::new(2);
        let d = (0..1000).map(|_| g.bimodal(1000.0, 2000.0, 20.0, 0.5)).collect();
        let s = scripted(d, &plan(20, 300, 0.001));
        assert_eq!(s.stop, StopReason::MaxSamples);
        assert_eq!(s.cycles.len(), 300);
    }

    #[test]
    fn checks_come_every_eighth_and_stop_once_precise() {
        // Noisy first, then tight: the run continues past the first check (at 20) and
        // stops at a later check, never between checks (20, 30, 40, ...).
        let mut g = Samples::new(3);
        let mut d: Vec<f64> = (0..20).map(|_| g.bimodal(500.0, 1500.0, 10.0, 0.5)).collect();
        d.extend(g.timings(2000, 1000.0, 2.0, 0.0, 0.0));
        let s = scripted(d, &plan(20, 2000, 0.01));
        assert_eq!(s.stop, StopReason::Converged);
        let n = s.cycles.len();
        assert!(
            n > 20,
            "stopped at the first check although half the samples were 500 or 1500"
        );
        let mut check = 20;
        while check < n {
            check += (check / 8).max(10);
        }
        assert_eq!(check, n, "stopped at {n}, which is not a check point");
    }

    #[test]
    fn samples_keep_their_order_and_times() {
        let d: Vec<f64> = (1..=100).map(|i| i as f64 * 10.0).collect();
        let s = scripted(d.clone(), &plan(100, 100, 0.0));
        assert_eq!(s.cycles, d, "in the order taken");
        assert_eq!(s.ns, d);
        assert_eq!(s.t_ns.len(), 100);
        assert!(s.t_ns.windows(2).all(|w| w[1] >= w[0]), "sample times never go back");
        assert!(s.started_unix_ms > 1.6e12, "a wall-clock start");
    }

    /// A subject that becomes four times as slow half-way, with noise, heavy tails and a
    /// neighbour's 2× patch before the middle injected on purpose: through the sampler and
    /// the run's shift detector, the step is found where it happened and its size is right.
    #[test]
    fn a_subject_that_slows_down_half_way_is_flagged_when_it_happened() {
        for seed in 0..20 {
            let n = 400;
            let mut g = Samples::new(seed);
            let mut d: Vec<f64> = (0..n)
                .map(|i| {
                    let base = if i < n / 2 { 20_000.0 } else { 80_000.0 };
                    g.timing(base, base * 0.02, 0.03, base)
                })
                .collect();
            for x in &mut d[150..170] {
                *x *= 2.0; // a neighbour's slow patch
            }
            let s = scripted(d, &plan(n, n, 0.0));
            assert_eq!(s.ns.len(), n);
            let shifts = crate::shifts::level_shifts(&s.ns, 0.10);
            let step = shifts
                .iter()
                .find(|sh| (n / 2 - 5..=n / 2 + 5).contains(&sh.at))
                .unwrap_or_else(|| panic!("seed {seed}: no shift near sample {}: {shifts:?}", n / 2));
            let ratio = step.after / step.before;
            assert!(
                (3.5..4.5).contains(&ratio),
                "seed {seed}: a 4x step measured as {ratio}"
            );
        }
    }

    #[test]
    fn a_steady_subject_with_tails_has_no_shift() {
        for seed in 0..20 {
            let d = Samples::new(100 + seed).timings(400, 20_000.0, 400.0, 0.03, 20_000.0);
            let s = scripted(d, &plan(400, 400, 0.0));
            let shifts = crate::shifts::level_shifts(&s.ns, 0.10);
            assert!(shifts.is_empty(), "seed {seed}: {shifts:?}");
        }
    }

    /// Plumbing with the real clock: samples arrive, one per call, non-negative, in order,
    /// with their times. No count, ratio or stop reason that the machine's speed decides.
    #[test]
    fn the_real_clock_delivers_one_sample_per_call() {
        let clock = Clock::new(ClockChoice::Tsc);
        let mut calls = 0usize;
        let mut x = 0u64;
        let s = sample::<_, ()>(&clock, &plan(30, 30, 0.0), || {
            calls += 1;
            for i in 0..2_000u64 {
                x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(s.cycles.len(), 30);
        assert_eq!(calls, 30, "no warm-up asked for, one call per sample");
        assert_eq!(s.ns.len(), 30);
        assert!(s.cycles.iter().chain(&s.ns).all(|&c| c >= 0.0 && c.is_finite()));
        assert!(s.t_ns.windows(2).all(|w| w[1] > w[0]), "sample times increase");
    }

    #[test]
    fn budget_stops_slow_operations_after_floor() {
        // Slowness only makes this more certain: every call sleeps past the budget.
        let clock = Clock::new(ClockChoice::Tsc);
        let plan = Plan {
            min_samples: 100,
            max_samples: 1000,
            target_rel_ci: 0.0,
            budget: Duration::from_millis(30),
            warmup: Duration::from_millis(1),
            floor_samples: 4,
        };
        let s = sample::<_, ()>(&clock, &plan, || {
            std::thread::sleep(Duration::from_millis(10));
            Ok(())
        })
        .unwrap();
        assert_eq!(s.stop, StopReason::Budget);
        assert_eq!(s.cycles.len(), 4, "floor of 4 samples even past the budget");
    }

    #[test]
    fn an_error_is_returned_not_measured() {
        let mut calls = 0;
        let r = sample(
            &ScriptedTimer::from_durations(vec![1.0]),
            &Plan::quick(Duration::from_secs(1)),
            || {
                calls += 1;
                if calls > 5 {
                    Err("boom")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r.unwrap_err(), "boom");
    }
}
