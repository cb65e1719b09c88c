//! Comparing runs: the same (subject, operation) side by side, as the ratio of medians
//! against a baseline run with a 95% confidence interval and a verdict.
//!
//! The test, stated in every output: a percentile-bootstrap 95% interval of
//! median(run) / median(baseline) (1,000 resamples). A run measured in visits (`run
//! --rounds`, the default) is resampled by whole visits, so the interval includes how much
//! the machine's speed moved between moments of the run, which on a shared or virtual
//! machine dwarfs the spread between neighbouring calls; a run of one visit is resampled by
//! samples. "slower" if the whole interval lies above 1 + threshold, "faster" if below
//! 1 − threshold, else "no significant change". The threshold (default 5%) is the noise level below which a
//! difference is not called a change even if statistically clear. Nanoseconds are
//! compared by default, so runs on machines with different TSC frequencies compare
//! correctly; `cycles` compares cycle counts (same machine only).

use crate::{table, GateStatus, RunFile};
use cryptoscope_measure::stats::{median, min_of, p5_unsorted, ratio_of_visits};
use serde::Serialize;

/// Which location statistic `compare` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// The median: the typical cost (default).
    Median,
    /// The 5th percentile: the cost when the machine is at its fast level.
    P5,
    /// The minimum: the least disturbed call (Chen & Revels 2016, "Robust benchmarking in
    /// noisy environments").
    Min,
}

impl Statistic {
    pub fn parse(s: &str) -> Option<Statistic> {
        match s {
            "median" => Some(Statistic::Median),
            "p5" => Some(Statistic::P5),
            "min" => Some(Statistic::Min),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::P5 => "5th percentile",
            Statistic::Min => "minimum",
        }
    }
    fn function(self) -> fn(&mut [f64]) -> f64 {
        match self {
            Statistic::Median => median,
            Statistic::P5 => p5_unsorted,
            Statistic::Min => min_of,
        }
    }
}

/// Outcome for one (subject, operation) in one run against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Faster,
    Slower,
    NoSignificantChange,
    /// Not measured in this run or in the baseline.
    Missing,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantChange => "no significant change",
            Verdict::Missing => "missing",
        }
    }
}

/// One run's figure for a (subject, operation).
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub median: Option<f64>,
    pub ratio: Option<f64>,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    pub verdict: Verdict,
}

/// One (subject, operation) across the runs.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub subject: String,
    pub operation: String,
    /// One cell per run, in the order given; the baseline's has ratio 1.
    pub cells: Vec<Cell>,
}

/// A whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<String>,
    pub machines: Vec<String>,
    pub baseline: usize,
    pub unit: String,
    pub statistic: Statistic,
    pub threshold: f64,
    pub test: String,
    pub rows: Vec<CompareRow>,
}

/// Compares `runs` against `runs[baseline]`.
pub fn compare(runs: &[RunFile], baseline: usize, threshold: f64, cycles: bool, statistic: Statistic) -> Comparison {
    let raw = |r: &crate::ResultRow| if cycles { r.raw_cycles.clone() } else { r.raw_ns.clone() };
    let stat = statistic.function();
    let median = |r: &crate::ResultRow| {
        let mut v = raw(r);
        (!v.is_empty()).then(|| stat(&mut v))
    };
    let mut keys: Vec<(String, String)> = Vec::new();
    for run in runs {
        for r in &run.results {
            let k = (r.subject.clone(), r.operation.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    fn find<'a>(run: &'a RunFile, k: &(String, String)) -> Option<&'a crate::ResultRow> {
        run.results
            .iter()
            .find(|r| r.subject == k.0 && r.operation == k.1 && r.gate == GateStatus::Pass && !r.raw_ns.is_empty())
    }
    let rows = keys
        .iter()
        .map(|k| {
            let base = find(&runs[baseline], k);
            let cells = runs
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    let this = find(run, k);
                    match (base, this) {
                        (Some(_), Some(t)) if i == baseline => Cell {
                            median: median(t),
                            ratio: Some(1.0),
                            ci95_low: None,
                            ci95_high: None,
                            verdict: Verdict::NoSignificantChange,
                        },
                        (Some(b), Some(t)) => {
                            let (ratio, lo, hi) =
                                ratio_of_visits(&raw(b), &b.visits, &raw(t), &t.visits, 1_000, 0xc0_ffee, stat);
                            let verdict = if lo > 1.0 + threshold {
                                Verdict::Slower
                            } else if hi < 1.0 - threshold {
                                Verdict::Faster
                            } else {
                                Verdict::NoSignificantChange
                            };
                            Cell {
                                median: median(t),
                                ratio: Some(ratio),
                                ci95_low: Some(lo),
                                ci95_high: Some(hi),
                                verdict,
                            }
                        }
                        (_, t) => Cell {
                            median: t.and_then(median),
                            ratio: None,
                            ci95_low: None,
                            ci95_high: None,
                            verdict: Verdict::Missing,
                        },
                    }
                })
                .collect();
            CompareRow {
                subject: k.0.clone(),
                operation: k.1.clone(),
                cells,
            }
        })
        .collect();
    Comparison {
        runs: runs.iter().map(|r| r.run_id.clone()).collect(),
        machines: runs
            .iter()
            .map(|r| format!("{} ({})", r.environment.hostname.as_deref().unwrap_or("?"), r.environment.cpu_model.as_deref().unwrap_or("?")))
            .collect(),
        baseline,
        unit: if cycles { "cycles".into() } else { "ns".into() },
        statistic,
        threshold,
        test: format!(
            "bootstrap 95% CI of the ratio of {}s (1,000 resamples, by visit where a run has several); a change is called only if the whole interval lies beyond ±{:.0}%",
            statistic.name(),
            threshold * 100.0
        ),
        rows,
    }
}

/// Counts of verdicts over all non-baseline cells: (faster, slower, no change, missing).
pub fn tally(c: &Comparison) -> (usize, usize, usize, usize) {
    let mut t = (0, 0, 0, 0);
    for row in &c.rows {
        for (i, cell) in row.cells.iter().enumerate() {
            if i == c.baseline {
                continue;
            }
            match cell.verdict {
                Verdict::Faster => t.0 += 1,
                Verdict::Slower => t.1 += 1,
                Verdict::NoSignificantChange => t.2 += 1,
                Verdict::Missing => t.3 += 1,
            }
        }
    }
    t
}

/// The comparison as a table for terminals.
pub fn render(c: &Comparison) -> String {
    let mut header: Vec<String> = vec!["subject".into(), "op".into()];
    for (i, id) in c.runs.iter().enumerate() {
        let tag = if i == c.baseline { " (baseline)" } else { "" };
        header.push(format!("{id}{tag}"));
    }
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            let mut line = vec![r.subject.clone(), r.operation.clone()];
            for (i, cell) in r.cells.iter().enumerate() {
                let m = cell
                    .median
                    .map(|m| {
                        if c.unit == "ns" {
                            table::duration(m)
                        } else {
                            table::group(m)
                        }
                    })
                    .unwrap_or_else(|| "-".into());
                line.push(match (i == c.baseline, cell.ratio, cell.verdict) {
                    (true, _, _) => m,
                    (false, Some(x), v) => format!(
                        "{m} ×{x:.3} [{:.3}, {:.3}] {}",
                        cell.ci95_low.unwrap_or(f64::NAN),
                        cell.ci95_high.unwrap_or(f64::NAN),
                        v.label()
                    ),
                    (false, None, _) => format!("{m} (not comparable)"),
                });
            }
            line
        })
        .collect();
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut out = table::render(&h, &rows, &[]);
    let (f, s, n, m) = tally(c);
    out.push_str(&format!(
        "\n{s} slower, {f} faster, {n} no significant change, {m} not comparable. Unit: {}. Test: {}.\n",
        c.unit, c.test
    ));
    for (id, machine) in c.runs.iter().zip(&c.machines) {
        out.push_str(&format!("  {id}: {machine}\n"));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ResultRow;
    use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};

    /// A run of X25519/openssl/default with the given samples (ns) per operation.
    pub(crate) fn run(id: &str, rows: Vec<(&str, Vec<f64>)>) -> RunFile {
        let d = Descriptor::catalogued(
            "X25519",
            "openssl",
            "default",
            "3".into(),
            "-".into(),
            Sizes {
                public_key: 32,
                secret_key: 32,
                ciphertext: 0,
                shared_secret: 32,
            },
            Randomness::Internal,
        );
        let rows = rows
            .into_iter()
            .map(|(op, ns)| {
                let mut r = ResultRow::without_numbers(&d, op, GateStatus::Pass, "");
                let s = cryptoscope_measure::summarize(&ns);
                r.median_ns = Some(s.median);
                r.samples = ns.len();
                r.raw_cycles = ns.iter().map(|x| x * 2.0).collect();
                r.raw_ns = ns;
                r
            })
            .collect();
        crate::html::testrows::run_of(id, rows)
    }

    /// 200 samples around 50 µs × `scale`.
    pub(crate) fn samples(scale: f64) -> Vec<f64> {
        (0..200)
            .map(|i| scale * (50_000.0 + ((i * 7919) % 997) as f64))
            .collect()
    }

    #[test]
    fn verdicts_follow_the_stated_test() {
        let base = run("a", vec![("keypair", samples(1.0)), ("exchange", samples(1.0))]);
        let same = run("b", vec![("keypair", samples(1.0)), ("exchange", samples(1.02))]);
        let slowed = run("c", vec![("keypair", samples(1.3)), ("exchange", samples(0.7))]);
        let c = compare(&[base, same, slowed], 0, 0.05, false, Statistic::Median);
        let cell = |op: &str, i: usize| c.rows.iter().find(|r| r.operation == op).unwrap().cells[i].verdict;
        assert_eq!(cell("keypair", 1), Verdict::NoSignificantChange);
        assert_eq!(
            cell("exchange", 1),
            Verdict::NoSignificantChange,
            "2% is below the 5% threshold"
        );
        assert_eq!(cell("keypair", 2), Verdict::Slower);
        assert_eq!(cell("exchange", 2), Verdict::Faster);
        assert_eq!(tally(&c), (1, 1, 2, 0));
        let text = render(&c);
        assert!(
            text.contains("slower") && text.contains("(baseline)") && text.contains("Test: bootstrap 95% CI"),
            "{text}"
        );
    }

    /// Five visits at the speeds a shared machine happened to run at.
    fn visited(levels: &[f64], scale: f64) -> (Vec<f64>, Vec<usize>) {
        let ns = levels
            .iter()
            .flat_map(|l| samples(l * scale).into_iter().take(40))
            .collect();
        (ns, vec![40; levels.len()])
    }

    #[test]
    fn machine_noise_between_visits_is_not_called_a_change_but_a_slowdown_is() {
        let (a, va) = visited(&[1.0, 1.12, 0.92, 1.08, 0.95], 1.0);
        let (b, vb) = visited(&[1.1, 0.92, 1.08, 0.97, 1.12], 1.0);
        let (c, vc) = visited(&[1.1, 0.92, 1.08, 0.97, 1.12], 1.3);
        let mut runs = vec![
            run("a", vec![("keypair", a)]),
            run("b", vec![("keypair", b)]),
            run("c", vec![("keypair", c)]),
        ];
        let verdicts = |runs: &[RunFile]| {
            let c = compare(runs, 0, 0.05, false, Statistic::Median);
            (c.rows[0].cells[1].verdict, c.rows[0].cells[2].verdict)
        };
        // Without visit boundaries, neighbouring samples look like proof of a change.
        assert_eq!(verdicts(&runs).0, Verdict::Slower);
        for (r, v) in runs.iter_mut().zip([va, vb, vc]) {
            r.results[0].visits = v;
        }
        assert_eq!(verdicts(&runs), (Verdict::NoSignificantChange, Verdict::Slower));
    }

    #[test]
    fn missing_and_baseline_choice() {
        let a = run("a", vec![("keypair", samples(1.0))]);
        let b = run("b", vec![("keypair", samples(2.0)), ("exchange", samples(1.0))]);
        let c = compare(&[a, b], 1, 0.05, true, Statistic::Min);
        let kp = c.rows.iter().find(|r| r.operation == "keypair").unwrap();
        assert_eq!(
            kp.cells[0].verdict,
            Verdict::Faster,
            "run a is twice as fast as baseline b"
        );
        let ex = c.rows.iter().find(|r| r.operation == "exchange").unwrap();
        assert_eq!(ex.cells[0].verdict, Verdict::Missing);
        assert_eq!(c.unit, "cycles");
    }
}
