//! Pure statistics over raw samples: no I/O, no clocks, deterministic.
//!
//! Conventions (stated so results can be re-derived from the raw samples):
//! - Quantiles use linear interpolation between order statistics (Hyndman & Fan type 7,
//!   the default of R and NumPy).
//! - Standard deviation is the sample standard deviation (n − 1).
//! - MAD is the raw median absolute deviation (not scaled by 1.4826).
//! - The 95% confidence interval of the median is a percentile bootstrap (Efron & Tibshirani
//!   1993, ch. 13) with 1,000 resamples from a fixed-seed generator, so the same samples
//!   always give the same interval.
//! - Outliers are counted with Tukey's fences: below Q1 − 1.5·IQR or above Q3 + 1.5·IQR
//!   ("severe" beyond 3·IQR). They are counted, never removed.

use serde::{Deserialize, Serialize};

/// Summary statistics of one (subject, operation) sample set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub samples: usize,
    pub median: f64,
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    pub p5: f64,
    pub p95: f64,
    pub p99: f64,
    pub mad: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// Samples outside Tukey's 1.5·IQR fences.
    pub outliers: usize,
    /// Samples outside 3·IQR fences (a subset of `outliers`).
    pub severe_outliers: usize,
}

/// Number of bootstrap resamples for the median's confidence interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1_000;

/// Median of `xs` (reorders the slice). NaN-free input assumed; empty gives NaN.
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    quantile_sorted(xs, 0.5)
}

/// Type-7 quantile of sorted data.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n == 1 {
        return sorted[0];
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Distribution-free 95% interval of the median from order statistics (normal
/// approximation to the binomial: ranks n/2 ± 1.96·√n/2). Cheap enough to evaluate while
/// sampling; the sampler's stopping rule uses it. Needs sorted data.
pub fn median_ci_order_stats(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (lo, hi) = median_ci_ranks(n);
    (sorted[lo], sorted[hi])
}

/// The 0-based ranks [`median_ci_order_stats`] takes for `n` values (n ≥ 1).
pub fn median_ci_ranks(n: usize) -> (usize, usize) {
    let half = 1.96 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half).floor().max(0.0)) as usize;
    let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
    (lo, hi)
}

/// The exact coverage of [`median_ci_order_stats`]'s interval for `n` values of a
/// continuous distribution: P(X₍lo+1₎ ≤ median ≤ X₍hi+1₎) = Σ_{k=lo+1}^{hi} C(n,k) / 2ⁿ,
/// where the normal approximation behind the ranks is rough (few values): 0.9375 for 5,
/// 0.96875 for 6.
pub fn median_ci_coverage(n: usize) -> f64 {
    if n == 0 {
        return f64::NAN;
    }
    let (lo, hi) = median_ci_ranks(n);
    // C(n,k)/2ⁿ accumulated in floating point: exact enough for any n a run can reach.
    let mut p = 0.5f64.powi(n as i32); // C(n,0)/2ⁿ
    let mut sum = 0.0;
    for k in 0..hi {
        p *= (n - k) as f64 / (k + 1) as f64; // now C(n,k+1)/2ⁿ
        if k + 1 > lo {
            sum += p;
        }
    }
    sum
}

/// Distribution-free 95% interval of the `q`-quantile from order statistics (Conover,
/// *Practical Nonparametric Statistics*, 3rd ed., §3.2: ranks n·q ± 1.96·√(n·q·(1−q)),
/// the normal approximation to the binomial). At q = 0.5 it is [`median_ci_order_stats`].
/// Needs sorted data.
pub fn quantile_ci_order_stats(sorted: &[f64], q: f64) -> (f64, f64) {
    let n = sorted.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let nf = n as f64;
    let half = 1.96 * (nf * q * (1.0 - q)).sqrt();
    let lo = ((nf * q - half).floor().max(0.0)) as usize;
    let hi = ((nf * q + half).ceil() as usize).min(n - 1);
    (sorted[lo.min(n - 1)], sorted[hi])
}

/// SplitMix64 (Steele, Lea & Flood 2014): a small, fixed-seed generator for resampling.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        // Lemire's multiply-shift; the tiny bias is irrelevant for resampling.
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// Percentile-bootstrap 95% interval of the median.
pub fn bootstrap_median_ci(samples: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let n = samples.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    if n == 1 {
        return (samples[0], samples[0]);
    }
    let mut rng = SplitMix64(seed);
    let mut buf = vec![0.0; n];
    let mut medians = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in buf.iter_mut() {
            *slot = samples[rng.below(n)];
        }
        medians.push(median_unsorted(&mut buf));
    }
    medians.sort_by(|a, b| a.total_cmp(b));
    (quantile_sorted(&medians, 0.025), quantile_sorted(&medians, 0.975))
}

/// Median by selection (O(n)), same value as `median`.
fn median_unsorted(xs: &mut [f64]) -> f64 {
    let n = xs.len();
    let mid = n / 2;
    let (_, m, _) = xs.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
    let upper = *m;
    if n % 2 == 1 {
        upper
    } else {
        let lower = xs[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // The same formula as the type-7 quantile, so both give bit-identical results.
        lower + 0.5 * (upper - lower)
    }
}

/// Ratio of medians `median(other) / median(base)` with a percentile-bootstrap 95%
/// interval: both sample sets are resampled independently `resamples` times (fixed seed).
/// Returns `(ratio, low, high)`; NaNs if either set is empty or the base median is 0.
pub fn ratio_of_medians(base: &[f64], other: &[f64], resamples: usize, seed: u64) -> (f64, f64, f64) {
    ratio_of(base, other, resamples, seed, median_unsorted)
}

/// The 5th percentile (type 7) of `xs`, reordering it.
pub fn p5_unsorted(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    quantile_sorted(xs, 0.05)
}

/// The minimum of `xs`.
pub fn min_of(xs: &mut [f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Like [`ratio_of_medians`] for any location statistic `stat` (median, p5, minimum).
pub fn ratio_of(
    base: &[f64],
    other: &[f64],
    resamples: usize,
    seed: u64,
    stat: fn(&mut [f64]) -> f64,
) -> (f64, f64, f64) {
    ratio_of_visits(base, &[], other, &[], resamples, seed, stat)
}

/// Like [`ratio_of`] when the samples were taken in visits (contiguous groups, `visits`
/// gives their lengths in order; empty means one visit). A set with two or more visits is
/// resampled by whole visits (a cluster bootstrap), so the interval carries the variation
/// between moments of the run, not just between neighbouring calls; a set with one visit is
/// resampled by samples. Lengths that do not add up to the set's size count as one visit.
pub fn ratio_of_visits(
    base: &[f64],
    base_visits: &[usize],
    other: &[f64],
    other_visits: &[usize],
    resamples: usize,
    seed: u64,
    stat: fn(&mut [f64]) -> f64,
) -> (f64, f64, f64) {
    if base.is_empty() || other.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut b = base.to_vec();
    let mut o = other.to_vec();
    let mb = stat(&mut b);
    if mb <= 0.0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let ratio = stat(&mut o) / mb;
    let bv = visit_ranges(base.len(), base_visits);
    let ov = visit_ranges(other.len(), other_visits);
    let mut rng = SplitMix64(seed);
    let mut rb = Vec::with_capacity(base.len() * 2);
    let mut ro = Vec::with_capacity(other.len() * 2);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        resample(base, &bv, &mut rng, &mut rb);
        resample(other, &ov, &mut rng, &mut ro);
        let d = stat(&mut rb);
        if d > 0.0 {
            ratios.push(stat(&mut ro) / d);
        }
    }
    ratios.sort_by(|a, b| a.total_cmp(b));
    (ratio, quantile_sorted(&ratios, 0.025), quantile_sorted(&ratios, 0.975))
}

/// Index ranges of the visits of a set of `n` samples; `None` when it is one visit.
fn visit_ranges(n: usize, visits: &[usize]) -> Option<Vec<std::ops::Range<usize>>> {
    if visits.len() < 2 || visits.iter().try_fold(0usize, |s, &v| s.checked_add(v)) != Some(n) || visits.contains(&0) {
        return None;
    }
    let mut at = 0;
    Some(
        visits
            .iter()
            .map(|&len| {
                at += len;
                at - len..at
            })
            .collect(),
    )
}

/// One bootstrap resample of `xs` into `out`: whole visits drawn with replacement, or
/// single samples when `visits` is `None`.
fn resample(xs: &[f64], visits: &Option<Vec<std::ops::Range<usize>>>, rng: &mut SplitMix64, out: &mut Vec<f64>) {
    out.clear();
    match visits {
        Some(v) => {
            for _ in 0..v.len() {
                out.extend_from_slice(&xs[v[rng.below(v.len())].clone()]);
            }
        }
        None => out.extend((0..xs.len()).map(|_| xs[rng.below(xs.len())])),
    }
}

/// Full summary of raw samples. `samples` may be in any order; it is not modified.
pub fn summarize(samples: &[f64]) -> Summary {
    let n = samples.len();
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mean = if n == 0 {
        f64::NAN
    } else {
        sorted.iter().sum::<f64>() / n as f64
    };
    let stddev = if n < 2 {
        0.0
    } else {
        (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    let med = quantile_sorted(&sorted, 0.5);
    let mut dev: Vec<f64> = sorted.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&mut dev);
    let q1 = quantile_sorted(&sorted, 0.25);
    let q3 = quantile_sorted(&sorted, 0.75);
    let iqr = q3 - q1;
    let outside = |k: f64| sorted.iter().filter(|&&x| x < q1 - k * iqr || x > q3 + k * iqr).count();
    // Seed from n so a re-analysis of the same samples reproduces the interval.
    let (lo, hi) = bootstrap_median_ci(samples, BOOTSTRAP_RESAMPLES, 0x5eed_0000 ^ n as u64);
    Summary {
        samples: n,
        median: med,
        mean,
        stddev,
        min: sorted.first().copied().unwrap_or(f64::NAN),
        max: sorted.last().copied().unwrap_or(f64::NAN),
        p5: quantile_sorted(&sorted, 0.05),
        p95: quantile_sorted(&sorted, 0.95),
        p99: quantile_sorted(&sorted, 0.99),
        mad,
        ci95_low: lo,
        ci95_high: hi,
        outliers: outside(1.5),
        severe_outliers: outside(3.0),
    }
}

#[cfg(test)]
mod tests {

    /// Ranks by hand from Conover's formula: n = 200, q = 0.95 gives n·q = 190 and
    /// 1.96·√(200·0.95·0.05) = 6.04, so ranks 183 and 197 (from 0) of the values 0..200;
    /// q = 0.25 gives 50 ± 12.003 → 37.997 and 62.003, rounded outwards to ranks 37 and
    /// 63. At q = 0.5 it is the median's interval.
    #[test]
    fn quantile_intervals_are_the_binomial_order_statistics() {
        let xs: Vec<f64> = (0..200).map(f64::from).collect();
        assert_eq!(quantile_ci_order_stats(&xs, 0.95), (183.0, 197.0));
        assert_eq!(quantile_ci_order_stats(&xs, 0.25), (37.0, 63.0));
        assert_eq!(quantile_ci_order_stats(&xs, 0.5), median_ci_order_stats(&xs));
        let few = [1.0, 2.0, 3.0];
        let (lo, hi) = quantile_ci_order_stats(&few, 0.95);
        assert!(lo <= hi && hi == 3.0);
        assert!(quantile_ci_order_stats(&[], 0.5).0.is_nan());
    }

    use super::*;

    /// Coverage of the order-statistic interval, against the binomial sums worked by hand:
    /// the range of 2, 5 and 6 values covers the median with probability 1/2, 30/32, 62/64.
    #[test]
    fn the_median_intervals_coverage_is_exact_for_few_values() {
        assert_eq!(median_ci_ranks(5), (0, 4));
        assert_eq!(median_ci_coverage(1), 0.0);
        assert_eq!(median_ci_coverage(2), 0.5);
        assert!((median_ci_coverage(5) - 30.0 / 32.0).abs() < 1e-12);
        assert!((median_ci_coverage(6) - 62.0 / 64.0).abs() < 1e-12);
        let c = median_ci_coverage(100);
        assert!((0.94..0.97).contains(&c), "{c}");
        assert_eq!(median_ci_order_stats(&[1.0, 2.0, 3.0, 4.0, 5.0]), (1.0, 5.0));
    }

    use proptest::prelude::*;

    #[test]
    fn textbook_values() {
        // 1..=5: median 3, mean 3, sample variance 2.5, MAD 1 — arithmetic facts.
        let s = summarize(&[5.0, 3.0, 1.0, 4.0, 2.0]);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 3.0);
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.mad, 1.0);
        assert_eq!((s.min, s.max), (1.0, 5.0));
        // Type-7 quantile of 1..=5 at 0.95: 1 + 4·0.95 = 4.8.
        assert!((s.p95 - 4.8).abs() < 1e-12);
        assert_eq!(s.outliers, 0);
    }

    #[test]
    fn even_count_median_is_midpoint() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(median(&mut v), 2.5);
        let mut w = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(median_unsorted(&mut w), 2.5);
    }

    #[test]
    fn tukey_fences_flag_a_far_point() {
        let mut v: Vec<f64> = (0..100).map(|i| 100.0 + (i % 10) as f64).collect();
        v.push(1_000.0);
        let s = summarize(&v);
        assert_eq!(s.outliers, 1);
        assert_eq!(s.severe_outliers, 1);
    }

    #[test]
    fn bootstrap_is_reproducible() {
        let v: Vec<f64> = (0..500).map(|i| ((i * 7919) % 1000) as f64).collect();
        assert_eq!(bootstrap_median_ci(&v, 200, 1), bootstrap_median_ci(&v, 200, 1));
    }

    #[test]
    fn ratio_of_medians_finds_a_slowdown_and_no_change() {
        let base: Vec<f64> = (0..300).map(|i| 1000.0 + (i * 37 % 50) as f64).collect();
        let slow: Vec<f64> = base.iter().map(|x| x * 1.25).collect();
        let (r, lo, hi) = ratio_of_medians(&base, &slow, 500, 7);
        assert!((r - 1.25).abs() < 1e-9, "{r}");
        assert!(lo > 1.2 && hi < 1.3, "{lo} {hi}");
        let (r, lo, hi) = ratio_of_medians(&base, &base, 500, 7);
        assert_eq!(r, 1.0);
        assert!(lo < 1.0 + 1e-9 && hi > 1.0 - 1e-9 && hi - lo < 0.05, "{lo} {hi}");
        assert!(ratio_of_medians(&[], &base, 10, 1).0.is_nan());
    }

    #[test]
    fn visits_carry_the_variation_between_moments() {
        // Five visits per run, each at its own machine speed (±15 %), tight within a visit.
        let levels = [1.0, 1.15, 0.9, 1.1, 0.85];
        let visit =
            |l: f64, k: usize| -> Vec<f64> { (0..100).map(|i| 1000.0 * l + ((i * 13 + k) % 7) as f64).collect() };
        let a: Vec<f64> = levels.iter().enumerate().flat_map(|(k, &l)| visit(l, k)).collect();
        let b: Vec<f64> = levels
            .iter()
            .rev()
            .enumerate()
            .flat_map(|(k, &l)| visit(l * 1.02, k))
            .collect();
        let v = [100; 5];
        // By samples the 2 % difference looks certain; by visits it is within the noise.
        let (_, lo, _) = ratio_of(&a, &b, 500, 3, median_unsorted);
        assert!(lo > 1.0, "sample bootstrap: {lo}");
        let (r, lo, hi) = ratio_of_visits(&a, &v, &b, &v, 500, 3, median_unsorted);
        assert!(lo < 1.0 && hi > 1.04 && (r - 1.02).abs() < 0.05, "{r} [{lo}, {hi}]");
        // A 1.5x slowdown stands out of that noise.
        let slow: Vec<f64> = b.iter().map(|x| x * 1.5).collect();
        let (_, lo, _) = ratio_of_visits(&a, &v, &slow, &v, 500, 3, median_unsorted);
        assert!(lo > 1.1, "{lo}");
        // Lengths that do not describe the set fall back to resampling samples.
        assert_eq!(
            ratio_of_visits(&a, &[3, 4], &b, &[], 200, 9, median_unsorted),
            ratio_of(&a, &b, 200, 9, median_unsorted)
        );
        // So do lengths that add up to it only by wrapping around (a corrupt results file).
        assert_eq!(
            ratio_of_visits(&a, &[usize::MAX, a.len() + 1], &b, &[], 200, 9, median_unsorted),
            ratio_of(&a, &b, 200, 9, median_unsorted)
        );
    }

    proptest! {
        #[test]
        fn order_invariants(mut v in proptest::collection::vec(0.0f64..1e9, 1..400)) {
            let s = summarize(&v);
            prop_assert!(s.min <= s.p5 && s.p5 <= s.median && s.median <= s.p95);
            prop_assert!(s.p95 <= s.p99 && s.p99 <= s.max);
            prop_assert!(s.ci95_low <= s.median + 1e-9 && s.median <= s.ci95_high + 1e-9);
            prop_assert!(s.min <= s.mean && s.mean <= s.max + 1e-6);
            prop_assert!(s.stddev >= 0.0 && s.mad >= 0.0);
            prop_assert!(s.severe_outliers <= s.outliers && s.outliers <= s.samples);
            // Permutation invariance.
            v.reverse();
            let r = summarize(&v);
            prop_assert_eq!(s.median, r.median);
            prop_assert_eq!(s.p95, r.p95);
        }

        #[test]
        fn selection_median_matches_sorting(v in proptest::collection::vec(-1e6f64..1e6, 1..300)) {
            let mut a = v.clone();
            let mut b = v;
            prop_assert_eq!(median(&mut a), median_unsorted(&mut b));
        }

        #[test]
        fn shift_equivariance(v in proptest::collection::vec(0.0f64..1e6, 2..200), k in 0.0f64..1e6) {
            let s = summarize(&v);
            let shifted: Vec<f64> = v.iter().map(|x| x + k).collect();
            let t = summarize(&shifted);
            prop_assert!((t.median - s.median - k).abs() < 1e-6 * (1.0 + k));
            prop_assert!((t.stddev - s.stddev).abs() < 1e-6 * (1.0 + s.stddev));
        }
    }
}
