//! A configuration's figures over its repeats (`tunnel --repeats`): the median of each
//! figure with a distribution-free interval, and a verdict against the baseline that says
//! `faster` or `slower` only where the two intervals do not overlap.
//!
//! Repeats are interleaved (every configuration once per round, the baseline first), as
//! `run --rounds` does, so that a slow spell of the machine falls on all of them alike.

use cryptoscope_measure::stats;
use cryptoscope_model::apps::tunnel::{Repeats, Spread, Transfer};
use std::collections::BTreeMap;

/// What one repeat measured: the transfer and, where pings went through, each size's p50.
pub struct One {
    pub transfer: Transfer,
    pub ping_p50_ms: Option<BTreeMap<u32, f64>>,
}

/// The spread of `values` (non-finite ones left out), or `None` when none is finite.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let kept: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if kept.is_empty() {
        return None;
    }
    let mut sorted = kept.clone();
    sorted.sort_by(f64::total_cmp);
    let (low, high) = stats::median_ci_order_stats(&sorted);
    Some(Spread {
        median: stats::quantile_sorted(&sorted, 0.5),
        low,
        high,
        coverage: stats::median_ci_coverage(sorted.len()),
        values: kept,
    })
}

/// `slower` or `faster` (a throughput against the baseline's) only where the intervals are
/// apart; with overlapping intervals the run shows no difference, whatever the medians.
pub fn verdict(ours: &Spread, base: &Spread) -> &'static str {
    if ours.high < base.low {
        "slower"
    } else if ours.low > base.high {
        "faster"
    } else {
        "no difference shown"
    }
}

/// The repeats of one configuration, in the order measured; `base` is the baseline's
/// throughput spread when this is not the baseline.
pub fn summarize(all: &[One], base: Option<&Spread>) -> Option<Repeats> {
    let mb: Vec<f64> = all.iter().map(|o| o.transfer.mb_per_s).collect();
    let mb_per_s = spread(&mb)?;
    let mut sizes: Vec<u32> = all
        .iter()
        .filter_map(|o| o.ping_p50_ms.as_ref())
        .flat_map(|p| p.keys().copied())
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let ping_p50_ms = sizes
        .into_iter()
        .filter_map(|s| {
            let v: Vec<f64> = all
                .iter()
                .filter_map(|o| o.ping_p50_ms.as_ref()?.get(&s).copied())
                .collect();
            spread(&v).map(|sp| (s, sp))
        })
        .collect();
    Some(Repeats {
        n: all.len() as u32,
        vs_plain: base.map(|b| verdict(&mb_per_s, b).to_string()),
        mb_per_s,
        ping_p50_ms,
    })
}

/// The repeat to show as the configuration's own transfer (with its CPU and retransmits):
/// the one whose throughput is the lower median.
pub fn representative(all: &[One]) -> usize {
    let mut idx: Vec<usize> = (0..all.len()).collect();
    idx.sort_by(|&a, &b| all[a].transfer.mb_per_s.total_cmp(&all[b].transfer.mb_per_s));
    idx[(idx.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(mb: f64, p50: Option<f64>) -> One {
        One {
            transfer: Transfer {
                mb_per_s: mb,
                ..Transfer::default()
            },
            ping_p50_ms: p50.map(|p| BTreeMap::from([(64, p)])),
        }
    }

    #[test]
    fn five_repeats_give_the_median_and_the_range_at_its_true_coverage() {
        let s = spread(&[300.0, 280.0, f64::NAN, 310.0, 290.0, 305.0]).unwrap();
        assert_eq!(
            s.values,
            [300.0, 280.0, 310.0, 290.0, 305.0],
            "the unmeasurable one is left out"
        );
        assert_eq!((s.median, s.low, s.high), (300.0, 280.0, 310.0));
        assert!((s.coverage - 0.9375).abs() < 1e-12);
        assert!(spread(&[f64::NAN]).is_none());
    }

    /// Medians 30 % apart are no finding when the intervals overlap (the machines' own
    /// noise); intervals apart are, either way.
    #[test]
    fn faster_or_slower_only_where_the_intervals_are_apart() {
        let base = spread(&[1000.0, 900.0, 1100.0, 950.0, 1050.0]).unwrap();
        let noisy = spread(&[700.0, 1000.0, 650.0, 720.0, 680.0]).unwrap();
        assert!(noisy.median < 0.75 * base.median);
        assert_eq!(verdict(&noisy, &base), "no difference shown");
        let slow = spread(&[400.0, 420.0, 410.0, 390.0, 430.0]).unwrap();
        assert_eq!(verdict(&slow, &base), "slower");
        let fast = spread(&[1200.0, 1300.0, 1250.0, 1210.0, 1280.0]).unwrap();
        assert_eq!(verdict(&fast, &base), "faster");
    }

    #[test]
    fn a_configuration_sums_up_its_repeats() {
        let base = spread(&[1000.0, 990.0, 1010.0]).unwrap();
        let all = [
            one(500.0, Some(0.2)),
            one(520.0, Some(0.3)),
            one(480.0, None),
            one(510.0, Some(0.25)),
        ];
        let r = summarize(&all, Some(&base)).unwrap();
        assert_eq!(r.n, 4);
        assert_eq!(r.mb_per_s.median, 505.0);
        assert_eq!(r.vs_plain.as_deref(), Some("slower"));
        assert_eq!(
            r.ping_p50_ms[&64].values,
            [0.2, 0.3, 0.25],
            "a repeat without pings adds none"
        );
        assert_eq!(all[representative(&all)].transfer.mb_per_s, 500.0, "the lower median");
        assert!(summarize(&all, None).unwrap().vs_plain.is_none());
    }
}
