//! Details on demand and the run's stability, said once. Each result's samples fold into a
//! `<details>` cell: the trace in the order the samples were taken (bucket medians, at most
//! `TRACE_POINTS`) with the operation's fastest level drawn, and the distribution in at
//! most `BINS` bins, both computed here so the page holds no raw arrays. The share of samples
//! taken off the fast level is the results table's column; the run gets one sentence.
//!
//! Levels are those of `cryptoscope_measure::shifts` at `SHIFT_RATIO`, the detector and
//! threshold the run's stability verdict uses.

use super::SHIFT_RATIO;
use crate::{ResultRow, RunFile};
use cryptoscope_measure::shifts::level_shifts;
use std::fmt::Write as _;

/// Points of a drawn trace: one per bucket of consecutive samples.
pub const TRACE_POINTS: usize = 80;

/// Bins of a drawn distribution.
pub const BINS: usize = 30;

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The levels of a series: (first index, end index, median) per segment between the level
/// shifts found in it; one segment when there are none.
fn levels(samples: &[f64]) -> Vec<(usize, usize, f64)> {
    let mut bounds = vec![0];
    bounds.extend(level_shifts(samples, SHIFT_RATIO).iter().map(|s| s.at));
    bounds.push(samples.len());
    bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| (w[0], w[1], median(&samples[w[0]..w[1]])))
        .collect()
}

/// The median of the fastest level of `samples`, if there are any.
pub fn fast_level(samples: &[f64]) -> Option<f64> {
    levels(samples).iter().map(|l| l.2).reduce(f64::min)
}

/// The share (0 to 1) of `samples` taken while the operation ran at a level at least
/// `SHIFT_RATIO` slower than its fastest one; `None` without samples.
pub fn off_fast_share(samples: &[f64]) -> Option<f64> {
    let levels = levels(samples);
    let fast = levels.iter().map(|l| l.2).reduce(f64::min)?;
    let off: usize = levels
        .iter()
        .filter(|l| l.2 >= fast * (1.0 + SHIFT_RATIO))
        .map(|l| l.1 - l.0)
        .sum();
    Some(off as f64 / samples.len() as f64)
}

/// "0%", "37%" (below one percent but not zero: "<1%"), or "" without samples.
pub fn off_fast_cell(samples: &[f64]) -> String {
    match off_fast_share(samples) {
        None => String::new(),
        Some(x) if x <= 0.0 => "0%".into(),
        Some(x) if x < 0.01 => "<1%".into(),
        Some(x) => format!("{:.0}%", x * 100.0),
    }
}

/// A sparkline of the samples in the order they were taken: each of at most
/// `TRACE_POINTS` buckets of consecutive samples drawn as its median (a level stays
/// visible, isolated outliers do not), the fastest level dashed.
pub fn sparkline(samples: &[f64]) -> String {
    if samples.len() < 2 {
        return String::new();
    }
    let per = samples.len().div_ceil(TRACE_POINTS);
    let pts: Vec<f64> = samples.chunks(per).map(median).collect();
    let (w, h) = (160.0, 24.0);
    let lo = pts.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pts.iter().copied().fold(0.0f64, f64::max);
    let span = (hi - lo).max(1e-9);
    let n = (pts.len() as f64 - 1.0).max(1.0);
    let y = |v: f64| h - 2.0 - (h - 4.0) * (v - lo) / span;
    let line: Vec<String> = pts
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.0},{:.1}", w * i as f64 / n, y(*v)))
        .collect();
    let fast = fast_level(samples)
        .map(|f| {
            let fy = y(f.clamp(lo, hi));
            format!(r#"<line class="fast" x1="0" x2="{w}" y1="{fy:.1}" y2="{fy:.1}"><title>fastest level: {f:.0}</title></line>"#)
        })
        .unwrap_or_default();
    format!(
        r#"<svg class="spark" width="{w}" height="{h}" viewBox="0 0 {w} {h}"><polyline points="{}"/>{fast}</svg>"#,
        line.join(" ")
    )
}

/// The distribution of `samples` in at most `BINS` bins of equal width from the smallest to
/// the 99th percentile (the slowest 1% counted in the last bin): (low edge, bin width,
/// counts). `None` below two distinct values.
pub fn histogram(samples: &[f64]) -> Option<(f64, f64, Vec<usize>)> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let lo = *v.first()?;
    let hi = v[((v.len() - 1) as f64 * 0.99).round() as usize];
    if hi <= lo {
        return None;
    }
    let bins = BINS.min(v.len());
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for x in &v {
        let i = (((x - lo) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    Some((lo, width, counts))
}

/// The histogram drawn as one path of bars, with its range in the title.
fn histogram_svg(samples: &[f64], unit: &str) -> String {
    let Some((lo, width, counts)) = histogram(samples) else {
        return String::new();
    };
    let (w, h) = (160.0, 40.0);
    let most = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let bw = w / counts.len() as f64;
    let mut d = String::new();
    for (i, c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let bh = (h - 2.0) * *c as f64 / most;
        let _ = write!(d, "M{:.1} {h}v-{bh:.1}h{:.1}v{bh:.1}z", bw * i as f64, bw * 0.9);
    }
    format!(
        r#"<svg class="hist" width="{w}" height="{h}" viewBox="0 0 {w} {h}"><path d="{d}"/><title>{n} samples in {} bins from {a} to {b} {unit} (the slowest 1% in the last)</title></svg><br><small>distribution, {a} – {b} {unit}</small>"#,
        counts.len(),
        n = samples.len(),
        a = crate::table::group(lo),
        b = crate::table::group(lo + width * counts.len() as f64)
    )
}

/// The results table's details cell: the trace and the distribution of the row's samples
/// (cycles where measured, else nanoseconds), folded; "" without samples.
pub fn details_cell(r: &ResultRow) -> String {
    let trace = sparkline(&r.raw_ns);
    let (raw, unit) = if r.raw_cycles.is_empty() {
        (&r.raw_ns, "ns")
    } else {
        (&r.raw_cycles, "cycles")
    };
    let hist = histogram_svg(raw, unit);
    if trace.is_empty() && hist.is_empty() {
        return String::new();
    }
    format!(
        "<details><summary>samples</summary><div class=\"detail\">{trace}<br><small>in order taken (ns; dashed: fastest level)</small><br>{hist}</div></details>"
    )
}

/// The run's stability in one sentence: how many measured operations changed level while
/// they were measured, and the largest change.
pub fn stability_sentence(run: &RunFile) -> String {
    let mut examined = 0;
    let mut shifted = 0;
    let mut largest = 1.0f64;
    for r in run.results.iter().filter(|r| !r.raw_ns.is_empty()) {
        examined += 1;
        let sh = level_shifts(&r.raw_ns, SHIFT_RATIO);
        shifted += usize::from(!sh.is_empty());
        for s in sh.iter().filter(|s| s.before > 0.0 && s.after > 0.0) {
            largest = largest.max(s.after / s.before).max(s.before / s.after);
        }
    }
    if examined == 0 {
        return String::new();
    }
    let pct = SHIFT_RATIO * 100.0;
    if shifted == 0 {
        format!(
            "<p class=\"stability\">Stable machine: none of the {examined} measured operations changed speed by {pct:.0}% \
             or more while it was measured.</p>"
        )
    } else {
        format!(
            "<p class=\"stability\">Unstable machine: {shifted} of {examined} measured operations changed speed by {pct:.0}% \
             or more while they were measured (largest ×{largest:.2}); the machine, not the code, changed speed. \
             “off fast level” in All results is each operation's share of samples taken at a level at least \
             {pct:.0}% slower than its fastest.</p>"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 samples at 1,000 then `slow` at 1,500 (with a little deterministic noise).
    fn two_levels(slow: usize) -> Vec<f64> {
        (0..100 + slow)
            .map(|i| if i < 100 { 1000.0 } else { 1500.0 } + (i * 37 % 11) as f64)
            .collect()
    }

    #[test]
    fn off_fast_level_counts_the_samples_of_slower_levels() {
        assert_eq!(off_fast_share(&[]), None);
        let steady: Vec<f64> = (0..200).map(|i| 1000.0 + (i * 37 % 11) as f64).collect();
        assert_eq!(off_fast_share(&steady), Some(0.0));
        assert_eq!(off_fast_cell(&steady), "0%");
        let s = two_levels(100);
        let share = off_fast_share(&s).unwrap();
        assert!((share - 0.5).abs() < 0.05, "{share}");
        assert_eq!(off_fast_cell(&s), format!("{:.0}%", share * 100.0));
        assert!((fast_level(&s).unwrap() - 1005.0).abs() < 10.0);
        // Slow first, fast later: the share is still of the slow samples.
        let mut r = s.clone();
        r.reverse();
        assert!((off_fast_share(&r).unwrap() - share).abs() < 0.05);
    }

    #[test]
    fn histogram_bins_every_sample_in_at_most_thirty_bins() {
        let s: Vec<f64> = (0..5000).map(|i| 1000.0 + (i % 97) as f64).collect();
        let (lo, w, counts) = histogram(&s).unwrap();
        assert_eq!(counts.len(), BINS);
        assert_eq!(counts.iter().sum::<usize>(), s.len());
        assert_eq!(lo, 1000.0);
        assert!(w > 0.0);
        assert!(histogram(&[5.0, 5.0, 5.0]).is_none());
        assert!(histogram(&[]).is_none());
        let svg = histogram_svg(&s, "cycles");
        assert!(svg.contains("5000 samples in 30 bins"));
        // One path, whatever the number of samples.
        assert_eq!(svg.matches("<path").count(), 1);
    }

    #[test]
    fn the_trace_is_downsampled() {
        assert!(sparkline(&[1.0]).is_empty());
        let s = two_levels(4900);
        let svg = sparkline(&s);
        let points = svg.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert!(points.split(' ').count() <= TRACE_POINTS);
        assert!(svg.contains("class=\"fast\""));
        assert!(svg.len() < 2000, "{} bytes", svg.len());
    }

    #[test]
    fn stability_is_one_sentence() {
        use crate::html::testrows::{row, run};
        let mut a = row("X25519", "kex", "openssl", "keypair", 1.0);
        a.raw_ns = two_levels(100);
        let mut b = row("X25519", "kex", "openssl", "exchange", 1.0);
        b.raw_ns = (0..200).map(|i| 1000.0 + (i * 37 % 11) as f64).collect();
        let s = stability_sentence(&run(vec![a.clone(), b.clone()]));
        assert!(s.starts_with("<p class=\"stability\">Unstable machine: 1 of 2"), "{s}");
        assert!(stability_sentence(&run(vec![b])).contains("Stable machine: none of the 1"));
        assert!(stability_sentence(&run(vec![])).is_empty());
    }
}
