//! Paired A/B comparison from interleaved blocks (`cryptoscope ab`).
//!
//! A and B are timed in short alternating blocks in ABBA order — A B B A, A B B A, … — and
//! each block gives one figure, the median of its calls. Two neighbouring blocks share one
//! moment of the machine, so in their ratio B/A the machine's speed of that moment cancels,
//! however much it moves between moments. A quad (A B B A) cancels more: a drift that is
//! linear in the logarithm over its four blocks, since A's blocks sit at positions 0 and 3
//! and B's at 1 and 2, both centred on 1.5. The quad is therefore the unit of the test:
//!
//! * each quad's log ratio is `(ln b₁ + ln b₂ − ln a₁ − ln a₂) / 2`;
//! * the quads come in epochs: the caller restarts the worker processes between epochs,
//!   so that where one process happened to place code and data (which moves identical code
//!   by a percent or two, a different amount in every process) becomes noise between
//!   epochs instead of a bias of the whole run. The unit of the test is then the epoch:
//!   its quads' 20 %-trimmed mean log ratio. With fewer than [`MIN_EPOCHS`] epochs the unit
//!   is the quad;
//! * the estimate is the 20 %-trimmed mean of the units (a unit hit by a burst of other work
//!   is one of the trimmed ones), back-transformed to a ratio B/A;
//! * its 95 % interval is a percentile bootstrap over whole units (2,000 resamples from a
//!   fixed seed, so the same blocks always give the same interval);
//! * the verdict is `compare`'s: slower if the whole interval lies above 1 + threshold,
//!   faster if below 1 − threshold, otherwise no significant change.
//!
//! Nothing here reads a clock: the blocks come from the caller, which is what lets the
//! tests feed streams with drift, level shifts and disturbances they control.

use crate::stats::{quantile_sorted, SplitMix64};
use serde::{Deserialize, Serialize};

/// Share of the quads trimmed from each end before averaging.
pub const TRIM: f64 = 0.2;
/// Bootstrap resamples of the interval.
pub const RESAMPLES: usize = 2_000;
/// Fewest quads a verdict is drawn from.
pub const MIN_QUADS: usize = 4;
/// Fewest epochs that make the epoch the unit of the test.
pub const MIN_EPOCHS: usize = 4;

/// One A B B A quad: the figures of A's two blocks and B's two (any unit, the same for all),
/// and the epoch (worker processes) it was taken in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quad {
    pub a: [f64; 2],
    pub b: [f64; 2],
    #[serde(default)]
    pub epoch: u32,
}

impl Quad {
    /// `ln(B/A)` of this quad: the mean of its two blocks' log ratios. `None` when a
    /// figure is not a positive number.
    pub fn log_ratio(&self) -> Option<f64> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        (self.a.iter().chain(&self.b).all(|&x| ok(x)))
            .then(|| (self.b[0].ln() + self.b[1].ln() - self.a[0].ln() - self.a[1].ln()) / 2.0)
    }
}

/// Whether B differs from A, as `compare` calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Faster,
    Slower,
    NoSignificantChange,
}

impl Change {
    /// The verdict of an interval [lo, hi] of the ratio B/A with a threshold: a change only
    /// when the whole interval lies beyond it.
    pub fn of(lo: f64, hi: f64, threshold: f64) -> Change {
        if lo > 1.0 + threshold {
            Change::Slower
        } else if hi < 1.0 - threshold {
            Change::Faster
        } else {
            Change::NoSignificantChange
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::NoSignificantChange => "no significant change",
        }
    }
}

/// The paired estimate of B/A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    /// B/A: the back-transformed trimmed mean of the quads' log ratios.
    pub ratio: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// Quads the estimate is drawn from.
    pub quads: usize,
    /// Units resampled: epochs, or quads when there were fewer than [`MIN_EPOCHS`].
    pub units: usize,
    /// Whether the units are epochs.
    pub by_epoch: bool,
    pub verdict: Change,
}

impl Paired {
    /// Half the interval's width relative to the ratio (how precise the run was).
    pub fn half_width(&self) -> f64 {
        (self.ci95_high - self.ci95_low) / 2.0 / self.ratio
    }
}

/// Mean of `xs` after removing `trim` of its values from each end (at least none, at most
/// all but one or two). Sorts `xs`.
pub fn trimmed_mean(xs: &mut [f64], trim: f64) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    let k = ((n as f64 * trim).floor() as usize).min(n.saturating_sub(1) / 2);
    let kept = &xs[k..n - k];
    kept.iter().sum::<f64>() / kept.len() as f64
}

/// The paired estimate of B/A from `quads`, its interval and the verdict beyond
/// `threshold`. `None` with fewer than [`MIN_QUADS`] usable quads.
pub fn paired_ratio(quads: &[Quad], threshold: f64, seed: u64) -> Option<Paired> {
    let mut epochs: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    for q in quads {
        if let Some(l) = q.log_ratio() {
            epochs.entry(q.epoch).or_default().push(l);
        }
    }
    let usable: usize = epochs.values().map(Vec::len).sum();
    if usable < MIN_QUADS {
        return None;
    }
    let by_epoch = epochs.len() >= MIN_EPOCHS;
    let logs: Vec<f64> = if by_epoch {
        epochs.into_values().map(|mut l| trimmed_mean(&mut l, TRIM)).collect()
    } else {
        epochs.into_values().flatten().collect()
    };
    let n = logs.len();
    let centre = trimmed_mean(&mut logs.clone(), TRIM);
    let mut rng = SplitMix64(seed);
    let mut buf = vec![0.0; n];
    let mut means = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        for slot in buf.iter_mut() {
            *slot = logs[rng.below(n)];
        }
        means.push(trimmed_mean(&mut buf, TRIM));
    }
    means.sort_by(|a, b| a.total_cmp(b));
    let (lo, hi) = (
        quantile_sorted(&means, 0.025).exp(),
        quantile_sorted(&means, 0.975).exp(),
    );
    Some(Paired {
        ratio: centre.exp(),
        ci95_low: lo,
        ci95_high: hi,
        quads: usable,
        units: n,
        by_epoch,
        verdict: Change::of(lo, hi, threshold),
    })
}

/// The order of the blocks: block `i` (from 0) is B's when this is true. A B B A, A B B A…
pub fn is_b(i: usize) -> bool {
    matches!(i % 4, 1 | 2)
}

/// Groups a sequence of block figures taken in [`is_b`] order into quads of one epoch; a
/// last, incomplete quad is dropped.
pub fn quads_of(blocks: &[f64]) -> Vec<Quad> {
    blocks
        .chunks_exact(4)
        .map(|c| Quad {
            a: [c[0], c[3]],
            b: [c[1], c[2]],
            epoch: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_testkit::Samples;

    /// A machine whose speed the test controls: block `i` of a subject costing `cost`
    /// takes `cost × speed(i) × noise`, where the speed drifts (exponentially, `drift` per
    /// block), jumps between levels (probability `shift_p` per block, to a level drawn from
    /// 0.8–1.5), and a block is hit by a burst of other work (probability `burst_p`, +30 %).
    struct Machine {
        s: Samples,
        level: f64,
        drift: f64,
        shift_p: f64,
        burst_p: f64,
        noise: f64,
    }

    impl Machine {
        fn noisy(seed: u64) -> Machine {
            Machine {
                s: Samples::new(seed),
                level: 1.0,
                drift: 0.002,
                shift_p: 0.01,
                burst_p: 0.05,
                noise: 0.03,
            }
        }

        /// `quads` quads of A (cost 1) and B (cost `ratio`), in ABBA order.
        fn run(&mut self, quads: usize, ratio: f64) -> Vec<Quad> {
            let blocks: Vec<f64> = (0..quads * 4)
                .map(|i| {
                    if self.s.uniform() < self.shift_p {
                        self.level = 0.8 + 0.7 * self.s.uniform();
                    }
                    let burst = if self.s.uniform() < self.burst_p { 1.3 } else { 1.0 };
                    let speed = self.level * (self.drift * i as f64).exp();
                    let cost = if is_b(i) { ratio } else { 1.0 };
                    cost * speed * burst * (self.noise * self.s.normal()).exp()
                })
                .collect();
            quads_of(&blocks)
        }
    }

    #[test]
    fn abba_cancels_a_drift_that_ab_pairs_do_not() {
        // A smooth exponential drift of 1 % per block and no noise at all.
        let speed = |i: usize| (0.01 * i as f64).exp();
        let blocks: Vec<f64> = (0..40).map(|i| if is_b(i) { 1.03 } else { 1.0 } * speed(i)).collect();
        let p = paired_ratio(&quads_of(&blocks), 0.01, 1).unwrap();
        assert!((p.ratio - 1.03).abs() < 1e-12, "{p:?}");
        assert!((p.ci95_low - 1.03).abs() < 1e-12 && (p.ci95_high - 1.03).abs() < 1e-12);
        // The same blocks in plain A B A B order: every pair reads B one block later.
        let ab: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 1 { 1.03 } else { 1.0 } * speed(i))
            .collect();
        let ab_ratio = ab.chunks(2).map(|c| (c[1] / c[0]).ln()).sum::<f64>() / 20.0;
        assert!(
            (ab_ratio.exp() - 1.03 * 0.01f64.exp()).abs() < 1e-12,
            "A B pairs absorb the drift"
        );
    }

    #[test]
    fn a_three_percent_slowdown_is_found_through_drift_shifts_and_bursts() {
        let mut slower = 0;
        let mut widths = Vec::new();
        for seed in 0..200 {
            let p = paired_ratio(&Machine::noisy(seed).run(100, 1.03), 0.01, seed).unwrap();
            assert!(
                p.ci95_low < p.ratio && p.ratio < p.ci95_high,
                "the estimate lies inside its interval"
            );
            slower += usize::from(p.verdict == Change::Slower);
            widths.push(p.half_width());
        }
        let mean_width = widths.iter().sum::<f64>() / widths.len() as f64;
        assert!(slower >= 195, "slower in {slower} of 200, mean half-width {mean_width}");
        let mean_width = widths.iter().sum::<f64>() / widths.len() as f64;
        assert!(mean_width < 0.01, "mean half-width {mean_width}");
    }

    #[test]
    fn identical_subjects_are_rarely_called_different() {
        let mut alarms = 0;
        let mut covered = 0;
        for seed in 0..200 {
            let p = paired_ratio(&Machine::noisy(1000 + seed).run(100, 1.0), 0.01, seed).unwrap();
            alarms += usize::from(p.verdict != Change::NoSignificantChange);
            covered += usize::from(p.ci95_low <= 1.0 && 1.0 <= p.ci95_high);
        }
        assert!(alarms <= 2, "{alarms} false alarms in 200");
        // A 95 % interval should hold the truth about 190 times in 200.
        assert!((180..=200).contains(&covered), "covered {covered} of 200");
    }

    #[test]
    fn a_level_shift_between_two_separate_runs_is_a_false_change_but_not_for_pairs() {
        // Two separate runs: all of A at one speed, then all of B after the machine slowed
        // by 25 % (the same code on both sides).
        let mut s = Samples::new(7);
        let a: Vec<f64> = (0..200).map(|_| 1.0 * (0.02 * s.normal()).exp()).collect();
        let b: Vec<f64> = (0..200).map(|_| 1.25 * (0.02 * s.normal()).exp()).collect();
        let (_, lo, _) = crate::stats::ratio_of_visits(&a, &[], &b, &[], 1_000, 1, crate::stats::median);
        assert_eq!(
            Change::of(lo, f64::INFINITY, 0.01),
            Change::Slower,
            "separate runs blame the code"
        );
        // Interleaved, the same shift lands inside one quad at most.
        let mut m = Machine::noisy(7);
        m.shift_p = 0.0;
        let mut quads = m.run(30, 1.0);
        for q in quads.iter_mut().skip(15) {
            q.a = q.a.map(|x| x * 1.25);
            q.b = q.b.map(|x| x * 1.25);
        }
        let p = paired_ratio(&quads, 0.01, 7).unwrap();
        assert_eq!(p.verdict, Change::NoSignificantChange, "{p:?}");
    }

    /// `epochs` epochs of `per` quads where each epoch's processes add their own bias to B
    /// (normal, `sd`): identical code placed differently. Blocks vary by 1.5 % here (the
    /// noisy machine's 3 % is twice what 25 ms blocks showed on our 2-vCPU guests).
    fn placed(seed: u64, epochs: u32, per: usize, ratio: f64, sd: f64) -> Vec<Quad> {
        let mut m = Machine::noisy(seed);
        m.noise = 0.015;
        let mut s = Samples::new(seed ^ 0x5eed);
        let mut out = Vec::new();
        for e in 0..epochs {
            let bias = (sd * s.normal()).exp();
            out.extend(m.run(per, ratio * bias).into_iter().map(|q| Quad { epoch: e, ..q }));
        }
        out
    }

    #[test]
    fn a_bias_that_changes_with_every_process_is_noise_between_epochs() {
        let (mut alarms, mut alarms_by_quad, mut found) = (0, 0, 0);
        for seed in 0..200 {
            let same = placed(seed, 20, 5, 1.0, 0.01);
            let p = paired_ratio(&same, 0.01, seed).unwrap();
            assert!(p.by_epoch && p.units == 20 && p.quads == 100, "{p:?}");
            alarms += usize::from(p.verdict != Change::NoSignificantChange);
            // The same number of quads from one process: its placement is the whole run's.
            let p = paired_ratio(&placed(seed, 1, 100, 1.0, 0.01), 0.01, seed).unwrap();
            assert!(!p.by_epoch && p.units == 100);
            alarms_by_quad += usize::from(p.verdict != Change::NoSignificantChange);
            let slower = paired_ratio(&placed(seed, 20, 5, 1.03, 0.01), 0.01, seed).unwrap();
            found += usize::from(slower.verdict == Change::Slower);
        }
        assert!(alarms <= 2, "{alarms} false alarms in 200 by epoch");
        assert!(
            alarms_by_quad >= 10,
            "one process: {alarms_by_quad} false alarms in 200"
        );
        assert!(found >= 195, "slower in {found} of 200");
    }

    #[test]
    fn verdicts_orders_and_edges() {
        assert_eq!(Change::of(1.02, 1.05, 0.01), Change::Slower);
        assert_eq!(Change::of(1.005, 1.05, 0.01), Change::NoSignificantChange);
        assert_eq!(Change::of(0.90, 0.98, 0.01), Change::Faster);
        assert_eq!(Change::of(0.90, 0.995, 0.01), Change::NoSignificantChange);
        let order: String = (0..8).map(|i| if is_b(i) { 'B' } else { 'A' }).collect();
        assert_eq!(order, "ABBAABBA");
        assert_eq!(
            quads_of(&[1.0, 2.0, 3.0, 4.0, 5.0]).len(),
            1,
            "the incomplete quad is dropped"
        );
        assert_eq!(
            quads_of(&[1.0, 2.0, 3.0, 4.0])[0],
            Quad {
                a: [1.0, 4.0],
                b: [2.0, 3.0],
                epoch: 0
            }
        );
        let q = Quad {
            a: [1.0, 1.0],
            b: [1.0, 1.0],
            epoch: 0,
        };
        assert!(paired_ratio(&[q; 3], 0.01, 1).is_none(), "too few quads");
        let bad = Quad { a: [0.0, 1.0], ..q };
        assert!(bad.log_ratio().is_none());
        assert!(
            paired_ratio(&[q, q, q, bad], 0.01, 1).is_none(),
            "an unusable quad does not count"
        );
        let mut xs = [5.0, 1.0, 100.0, 2.0, 3.0, 4.0, -50.0, 3.0, 2.0, 4.0];
        assert_eq!(trimmed_mean(&mut xs, 0.2), 3.0, "two trimmed from each end of ten");
        assert_eq!(trimmed_mean(&mut [7.0], 0.2), 7.0);
    }
}
