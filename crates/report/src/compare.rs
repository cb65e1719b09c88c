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
//!
//! Exact instruction counts (`run --instructions`: callgrind, fixed-seed randomness) are
//! shown beside the time where both runs have them, and never change its verdict: equal
//! counts are the same code path; a different count is a changed path, unless the
//! operation's count varies by design under real randomness (its stored spread, e.g.
//! rejection sampling in ML-DSA signing) and the difference lies within that spread.

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
    pub(crate) fn function(self) -> fn(&mut [f64]) -> f64 {
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

/// What two exact instruction counts of one operation say about its code path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    /// The same count: the same code path.
    Same,
    /// A different count, and the count does not vary by design (or varies less).
    Changed,
    /// A different count within the spread the operation shows by design.
    VariesByDesign,
    /// A different count, with no spread measured to judge it (a run stored before the
    /// spread was).
    Differs,
}

/// The instruction counts of two runs compared: the path verdict and its note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathNote {
    pub path: Path,
    /// This run's count over the reference's.
    pub ratio: f64,
    /// The largest spread the runs measured ((max − min) / min under real randomness).
    pub spread: Option<f64>,
    pub note: String,
}

/// Judges `this` exact instruction count against `base`, given the spreads stored with
/// the counts compared (each run's `instructions_spread`). Counts are means of a few calls,
/// so they are equal within half an instruction.
pub fn judge_path(base: f64, this: f64, spreads: &[Option<f64>]) -> PathNote {
    let ratio = if base > 0.0 { this / base } else { f64::NAN };
    let change = format!("{:+.2}% instructions", (ratio - 1.0) * 100.0);
    let widest = spreads
        .iter()
        .flatten()
        .copied()
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let all_known = spreads.iter().all(Option::is_some);
    let (path, note) = if (this - base).abs() < 0.5 {
        (Path::Same, "same path".to_string())
    } else {
        match widest {
            Some(w) if w > 0.0 => {
                let band = format!("varies by design ±{:.2}%", w * 100.0);
                if (ratio - 1.0).abs() <= w {
                    (Path::VariesByDesign, format!("{band} ({change})"))
                } else {
                    (Path::Changed, format!("code path changed ({change}; {band})"))
                }
            }
            Some(_) if all_known => (Path::Changed, format!("code path changed ({change})")),
            _ => (
                Path::Differs,
                format!("{change} (no spread measured: `run --instructions` again to judge it)"),
            ),
        }
    };
    PathNote {
        path,
        ratio,
        spread: widest,
        note,
    }
}

/// One run's figure for a (subject, operation).
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub median: Option<f64>,
    pub ratio: Option<f64>,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// The time verdict: the instructions below never change it.
    pub verdict: Verdict,
    /// Exact instructions per call (`run --instructions`), where this run has them.
    pub instructions: Option<f64>,
    /// Their spread under real randomness, where measured.
    pub instructions_spread: Option<f64>,
    /// Against the reference run's count, where both runs have one.
    pub instructions_ratio: Option<f64>,
    pub path: Option<Path>,
    pub path_note: Option<String>,
}

impl Cell {
    /// A cell with this run's instruction figures and, given the reference row, their
    /// comparison with it.
    fn with_instructions(mut self, this: Option<&crate::ResultRow>, base: Option<&crate::ResultRow>) -> Cell {
        let Some(t) = this else { return self };
        self.instructions = t.instructions;
        self.instructions_spread = t.instructions_spread;
        if let (Some(b), Some(n), Some(bn)) = (base, t.instructions, base.and_then(|b| b.instructions)) {
            let j = judge_path(bn, n, &[b.instructions_spread, t.instructions_spread]);
            self.instructions_ratio = Some(j.ratio);
            self.path = Some(j.path);
            self.path_note = Some(j.note);
        }
        self
    }
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
                    let cell = |median, ratio, ci95_low, ci95_high, verdict| Cell {
                        median,
                        ratio,
                        ci95_low,
                        ci95_high,
                        verdict,
                        instructions: None,
                        instructions_spread: None,
                        instructions_ratio: None,
                        path: None,
                        path_note: None,
                    };
                    match (base, this) {
                        (Some(_), Some(t)) if i == baseline => {
                            cell(median(t), Some(1.0), None, None, Verdict::NoSignificantChange)
                                .with_instructions(this, None)
                        }
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
                            cell(median(t), Some(ratio), Some(lo), Some(hi), verdict).with_instructions(this, base)
                        }
                        (_, t) => {
                            cell(t.and_then(median), None, None, None, Verdict::Missing).with_instructions(t, None)
                        }
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
                let time = match (i == c.baseline, cell.ratio, cell.verdict) {
                    (true, _, _) => m,
                    (false, Some(x), v) => format!(
                        "{m} ×{x:.3} [{:.3}, {:.3}] {}",
                        cell.ci95_low.unwrap_or(f64::NAN),
                        cell.ci95_high.unwrap_or(f64::NAN),
                        v.label()
                    ),
                    (false, None, _) => format!("{m} (not comparable)"),
                };
                line.push(match (cell.instructions, &cell.path_note) {
                    (Some(n), Some(note)) => format!("{time} | {} instr, {note}", table::group(n)),
                    (Some(n), None) => format!("{time} | {} instr", table::group(n)),
                    (None, _) => time,
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
    if c.rows.iter().any(|r| r.cells.iter().any(|x| x.path.is_some())) {
        out.push_str(INSTRUCTIONS_NOTE);
    }
    for (id, machine) in c.runs.iter().zip(&c.machines) {
        out.push_str(&format!("  {id}: {machine}\n"));
    }
    out
}

/// What the instruction counts beside the times are, printed under a table that has them.
pub const INSTRUCTIONS_NOTE: &str = "Instructions: exact per call under callgrind with fixed-seed randomness \
(`run --instructions`), beside the time verdict, never changing it; a different count is a changed code path \
unless the count varies by design under real randomness and the difference lies within that spread.\n";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ResultRow;
    use cryptoscope_model::descriptor::{Descriptor, Randomness, Sizes};

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

    /// `run` with exact instruction counts (and spreads) set per operation.
    fn counted(id: &str, rows: Vec<(&str, f64, Option<f64>)>) -> RunFile {
        let mut r = run(id, rows.iter().map(|(op, ..)| (*op, samples(1.0))).collect());
        for (row, (_, n, spread)) in r.results.iter_mut().zip(rows) {
            row.instructions = Some(n);
            row.instructions_spread = spread;
        }
        r
    }

    #[test]
    fn instructions_are_judged_beside_the_time_never_instead_of_it() {
        let base = counted(
            "a",
            vec![("keypair", 1000.0, Some(0.04)), ("exchange", 2000.0, Some(0.0))],
        );
        let same = counted(
            "b",
            vec![("keypair", 1000.0, Some(0.0)), ("exchange", 2000.0, Some(0.0))],
        );
        let moved = counted(
            "c",
            vec![("keypair", 1020.0, Some(0.05)), ("exchange", 2030.0, Some(0.0))],
        );
        let beyond = counted("d", vec![("keypair", 1100.0, Some(0.05)), ("exchange", 2000.0, None)]);
        let c = compare(&[base, same, moved, beyond], 0, 0.05, false, Statistic::Median);
        let cell = |op: &str, i: usize| c.rows.iter().find(|r| r.operation == op).unwrap().cells[i].clone();
        // Identical samples everywhere: the time verdict stays "no significant change"
        // whatever the instructions say.
        for op in ["keypair", "exchange"] {
            for i in 1..4 {
                assert_eq!(cell(op, i).verdict, Verdict::NoSignificantChange, "{op} {i}");
            }
        }
        let b = cell("keypair", 0);
        assert_eq!(
            (b.instructions, b.instructions_ratio, b.path),
            (Some(1000.0), None, None)
        );
        let note = |op: &str, i: usize| (cell(op, i).path.unwrap(), cell(op, i).path_note.unwrap());
        assert_eq!(note("keypair", 1), (Path::Same, "same path".into()));
        assert_eq!(note("exchange", 1), (Path::Same, "same path".into()));
        // A fixed path (spread 0 in both runs): 30 more of 2000 is a changed path.
        assert_eq!(
            note("exchange", 2),
            (Path::Changed, "code path changed (+1.50% instructions)".into())
        );
        assert_eq!(cell("exchange", 2).instructions_ratio, Some(1.015));
        // Spreads 4% and 5%: +2% lies within the larger, +10% beyond it.
        assert_eq!(
            note("keypair", 2),
            (
                Path::VariesByDesign,
                "varies by design ±5.00% (+2.00% instructions)".into()
            )
        );
        assert_eq!(
            note("keypair", 3),
            (
                Path::Changed,
                "code path changed (+10.00% instructions; varies by design ±5.00%)".into()
            )
        );
        // The same count needs no spread; a run without one leaves a difference unjudged.
        assert_eq!(note("exchange", 3), (Path::Same, "same path".into()));
        let text = render(&c);
        assert!(
            text.contains("| 2,030 instr, code path changed (+1.50% instructions)"),
            "{text}"
        );
        assert!(text.contains("Instructions: exact per call"), "{text}");
        let json = serde_json::to_value(&c).unwrap();
        let ex = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["operation"] == "exchange")
            .unwrap();
        assert_eq!(ex["cells"][2]["path"], "changed");
        assert_eq!(ex["cells"][2]["instructions"], 2030.0);
        assert_eq!(ex["cells"][2]["verdict"], "no-significant-change");
    }

    #[test]
    fn path_judgement_without_a_measured_spread() {
        assert_eq!(
            judge_path(1000.0, 1000.2, &[None, None]).path,
            Path::Same,
            "within half an instruction"
        );
        let j = judge_path(1000.0, 1010.0, &[None, Some(0.0)]);
        assert_eq!(j.path, Path::Differs);
        assert!(
            j.note.starts_with("+1.00% instructions (no spread measured"),
            "{}",
            j.note
        );
        // A spread measured on one side only still says the count varies by design.
        assert_eq!(
            judge_path(1000.0, 990.0, &[None, Some(0.02)]).path,
            Path::VariesByDesign
        );
        let down = judge_path(1000.0, 900.0, &[Some(0.0), Some(0.0)]);
        assert_eq!(down.note, "code path changed (-10.00% instructions)");
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
