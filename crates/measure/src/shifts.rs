//! Level shifts in a series of samples taken in order: the machine got slower or faster
//! part-way through a measurement (frequency changes, noisy neighbours on a shared host).
//!
//! Method: the series is cut into blocks (at least 5 samples, at most 40 blocks) and each
//! block is summarised by its median, which ignores isolated outliers. Binary segmentation
//! (Scott & Knott 1974) then finds the split of the block medians that maximises the
//! difference between the means of the two sides (the least-squares change point); it is
//! accepted when that difference is at least `min_ratio` (relative) and each side spans at
//! least two blocks, and the search recurses into both sides (depth 4). A cut is reported
//! when the medians of the segments on either side of it still differ by `min_ratio` or
//! more. Pure function.

use serde::{Deserialize, Serialize};

use crate::stats::quantile_sorted;

/// A change of level at sample index `at`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shift {
    /// Index of the first sample of the new level.
    pub at: usize,
    /// Median of the segment before.
    pub before: f64,
    /// Median of the segment after.
    pub after: f64,
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    quantile_sorted(&v, 0.5)
}

/// Level shifts of at least `min_ratio` (e.g. 0.10 for 10%) in `samples`, in order.
pub fn level_shifts(samples: &[f64], min_ratio: f64) -> Vec<Shift> {
    let n = samples.len();
    if n < 20 {
        return Vec::new();
    }
    let block = (n / 40).max(5);
    let meds: Vec<f64> = samples.chunks(block).map(median).collect();
    let mut cuts = Vec::new();
    split(&meds, 0, meds.len(), min_ratio, 4, &mut cuts);
    cuts.sort_unstable();
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(meds.len()))
        .collect();
    bounds
        .windows(3)
        .map(|w| Shift {
            at: w[1] * block,
            before: median(&samples[w[0] * block..(w[1] * block).min(n)]),
            after: median(&samples[w[1] * block..(w[2] * block).min(n)]),
        })
        // Between neighbouring segments the change must still reach the threshold (a cut
        // found inside a wider segment can separate two levels that are close).
        .filter(|s| s.before > 0.0 && s.after > 0.0 && (s.after / s.before).max(s.before / s.after) >= 1.0 + min_ratio)
        .collect()
}

/// The share of `samples` taken while the machine ran at least `min_ratio` slower than the
/// fastest level it reached during them: the series is cut where [`level_shifts`] finds a
/// shift, each segment judged by its own median. 0 when the series holds one level.
pub fn off_fast_fraction(samples: &[f64], min_ratio: f64) -> f64 {
    let cuts: Vec<usize> = level_shifts(samples, min_ratio).iter().map(|s| s.at).collect();
    if cuts.is_empty() {
        return 0.0;
    }
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts)
        .chain(std::iter::once(samples.len()))
        .collect();
    let segments: Vec<(usize, f64)> = bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| (w[1] - w[0], median(&samples[w[0]..w[1]])))
        .collect();
    let fastest = segments.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    let slow: usize = segments
        .iter()
        .filter(|s| s.1 >= fastest * (1.0 + min_ratio))
        .map(|s| s.0)
        .sum();
    slow as f64 / samples.len() as f64
}

fn split(meds: &[f64], lo: usize, hi: usize, min_ratio: f64, depth: u32, cuts: &mut Vec<usize>) {
    if depth == 0 || hi - lo < 4 {
        return;
    }
    let mut best: Option<(usize, f64)> = None;
    for k in lo + 2..=hi - 2 {
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        let (a, b) = (mean(&meds[lo..k]), mean(&meds[k..hi]));
        let rel = (a - b).abs() / a.min(b).max(f64::MIN_POSITIVE);
        if best.is_none_or(|(_, r)| rel > r) {
            best = Some((k, rel));
        }
    }
    if let Some((k, rel)) = best {
        if rel >= min_ratio {
            cuts.push(k);
            split(meds, lo, k, min_ratio, depth - 1, cuts);
            split(meds, k, hi, min_ratio, depth - 1, cuts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(level: f64, n: usize, seed: u64) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + 0.01 * (((i as u64 * 2654435761 + seed) % 100) as f64 / 100.0 - 0.5)))
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let mut s = noisy(100.0, 400, 1);
        s.extend(noisy(150.0, 400, 2));
        let shifts = level_shifts(&s, 0.10);
        assert_eq!(shifts.len(), 1, "{shifts:?}");
        assert!((380..=420).contains(&shifts[0].at), "{shifts:?}");
        assert!((shifts[0].before - 100.0).abs() < 2.0 && (shifts[0].after - 150.0).abs() < 3.0);
    }

    #[test]
    fn up_and_down_again() {
        let mut s = noisy(70.0, 300, 1);
        s.extend(noisy(110.0, 300, 2));
        s.extend(noisy(70.0, 300, 3));
        let shifts = level_shifts(&s, 0.10);
        assert_eq!(shifts.len(), 2, "{shifts:?}");
        assert!(shifts[0].after > shifts[0].before && shifts[1].after < shifts[1].before);
    }

    #[test]
    fn time_off_the_fast_level() {
        // 300 fast, 300 at +57%, 300 fast again: a third of the samples ran slow.
        let mut s = noisy(70.0, 300, 1);
        s.extend(noisy(110.0, 300, 2));
        s.extend(noisy(70.0, 300, 3));
        let f = off_fast_fraction(&s, 0.10);
        assert!((f - 1.0 / 3.0).abs() < 0.03, "{f}");
        assert_eq!(off_fast_fraction(&noisy(100.0, 500, 4), 0.10), 0.0);
        // Slow first, then fast for good: the slow start is what counts.
        let mut t = noisy(150.0, 200, 5);
        t.extend(noisy(100.0, 600, 6));
        let f = off_fast_fraction(&t, 0.10);
        assert!((f - 0.25).abs() < 0.03, "{f}");
    }

    #[test]
    fn flat_noise_and_outliers_are_not_shifts() {
        let mut s = noisy(100.0, 1000, 5);
        for i in (0..1000).step_by(97) {
            s[i] = 400.0;
        }
        assert!(level_shifts(&s, 0.10).is_empty());
        assert!(level_shifts(&s[..10], 0.10).is_empty(), "too short to judge");
    }
}
