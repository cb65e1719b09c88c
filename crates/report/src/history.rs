//! One run against its own history: `compare RUN --history K` sets RUN beside the last K
//! runs before it on the same machine and calls a change only where RUN lies outside the
//! spread those runs show between themselves. Pure statistics on runs the caller loaded;
//! which runs are history (same host and CPU, the operation passed and measured) is the
//! caller's to choose, and nothing here reads the store or prints.
//!
//! The test: each history run gives one figure per (subject, operation), its median (or
//! the `--statistic` asked for) of the raw samples. On the log scale, where a speed change
//! is a shift, a 99% prediction interval for one new run from n history figures is
//! mean ± t(0.995, n − 1) · s · √(1 + 1/n), with s their sample standard deviation (the
//! prediction interval of a normal sample: Hahn & Meeker, "Statistical Intervals", 1991,
//! §4.6). RUN is slower if its figure lies above the upper limit and more than the
//! threshold above the history's geometric mean, faster symmetrically, else within the
//! history's noise. At least [`MIN_HISTORY`] runs are needed for a verdict.
//!
//! Exact instruction counts are judged as two-run `compare` judges them (against the newest
//! history run's count, with every run's spread), beside the time verdict, never changing it.

use crate::compare::{judge_path, Path, Statistic};
use crate::{table, GateStatus, ResultRow, RunFile};
use serde::Serialize;

/// The fewest history runs a verdict is given on.
pub const MIN_HISTORY: usize = 3;

/// The prediction interval's coverage.
pub const COVERAGE: f64 = 0.99;

/// One history run's figures for a row.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryPoint {
    pub run: String,
    pub value: f64,
    pub instructions: Option<f64>,
    pub instructions_spread: Option<f64>,
}

/// Outcome for one (subject, operation) against its history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HistoryVerdict {
    Faster,
    Slower,
    WithinNoise,
    /// Fewer than [`MIN_HISTORY`] history runs hold the operation.
    NotEnoughHistory,
}

/// One (subject, operation) of RUN against its history.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryRow {
    pub subject: String,
    pub operation: String,
    /// RUN's figure (the statistic, in the unit).
    pub value: f64,
    /// The history runs' figures, newest first.
    pub history: Vec<HistoryPoint>,
    /// The geometric mean of the history's figures.
    pub center: Option<f64>,
    /// `value / center`.
    pub ratio: Option<f64>,
    /// The prediction interval's limits, in the unit (with [`MIN_HISTORY`] runs or more).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Its half-width as a fraction: `high / center − 1`.
    pub noise: Option<f64>,
    pub verdict: HistoryVerdict,
    /// The verdict in words ("not enough history (2 of 3)").
    pub label: String,
    pub instructions: Option<f64>,
    pub instructions_spread: Option<f64>,
    /// Against the newest history run with a count.
    pub instructions_ratio: Option<f64>,
    pub path: Option<Path>,
    pub path_note: Option<String>,
}

/// RUN against its history.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryComparison {
    pub run: String,
    pub machine: String,
    /// The most history runs asked for per row (`--history K`).
    pub history: usize,
    pub unit: String,
    pub statistic: Statistic,
    pub threshold: f64,
    pub test: String,
    pub rows: Vec<HistoryRow>,
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: Numerical Recipes 3rd ed., §6.1).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz; Numerical
/// Recipes 3rd ed., §6.4, `betacf`).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1): the CDF
/// inverted by bisection, to a relative 1e-12.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if p < 0.5 {
        return -student_t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while student_t_cdf(hi, df) < p && hi < 1e12 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The [`COVERAGE`] prediction interval for one new figure from `values` (all > 0), on the
/// log scale: (geometric mean, low, high); none with fewer than two values.
pub fn prediction_band(values: &[f64]) -> Option<(f64, f64, f64)> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| *v <= 0.0 || !v.is_finite()) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let nf = n as f64;
    let mean = logs.iter().sum::<f64>() / nf;
    let s = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (nf - 1.0)).sqrt();
    let t = student_t_quantile(1.0 - (1.0 - COVERAGE) / 2.0, nf - 1.0);
    let half = t * s * (1.0 + 1.0 / nf).sqrt();
    Some((mean.exp(), (mean - half).exp(), (mean + half).exp()))
}

/// The row of `run` for (subject, operation) if it passed and has samples in the unit.
fn usable<'a>(run: &'a RunFile, subject: &str, operation: &str, cycles: bool) -> Option<&'a ResultRow> {
    run.results.iter().find(|r| {
        r.subject == subject
            && r.operation == operation
            && r.gate == GateStatus::Pass
            && !(if cycles { &r.raw_cycles } else { &r.raw_ns }).is_empty()
    })
}

/// The runs of `history` (newest first) that would serve `run`'s rows: for each of its
/// usable rows, up to `k` of them. Whether every row has `k` (so older runs need not be
/// loaded) is `complete`.
pub fn complete(run: &RunFile, history: &[RunFile], k: usize, cycles: bool) -> bool {
    rows_of(run, cycles).iter().all(|r| {
        history
            .iter()
            .filter(|h| usable(h, &r.subject, &r.operation, cycles).is_some())
            .count()
            >= k
    })
}

fn rows_of(run: &RunFile, cycles: bool) -> Vec<&ResultRow> {
    run.results
        .iter()
        .filter(|r| usable(run, &r.subject, &r.operation, cycles).is_some_and(|u| std::ptr::eq(u, *r)))
        .collect()
}

/// Compares `run` with `history` (runs before it on the same machine, newest first): per
/// row, the newest `k` history runs that hold it.
pub fn compare_history(
    run: &RunFile,
    history: &[RunFile],
    k: usize,
    threshold: f64,
    cycles: bool,
    statistic: Statistic,
) -> HistoryComparison {
    let stat = statistic.function();
    let figure = |r: &ResultRow| {
        let mut v = if cycles { r.raw_cycles.clone() } else { r.raw_ns.clone() };
        stat(&mut v)
    };
    let rows = rows_of(run, cycles)
        .into_iter()
        .map(|r| {
            let past: Vec<(&RunFile, &ResultRow)> = history
                .iter()
                .filter_map(|h| usable(h, &r.subject, &r.operation, cycles).map(|x| (h, x)))
                .take(k)
                .collect();
            let points: Vec<HistoryPoint> = past
                .iter()
                .map(|(h, x)| HistoryPoint {
                    run: h.run_id.clone(),
                    value: figure(x),
                    instructions: x.instructions,
                    instructions_spread: x.instructions_spread,
                })
                .collect();
            judge_row(r, figure(r), points, threshold)
        })
        .collect();
    HistoryComparison {
        run: run.run_id.clone(),
        machine: format!(
            "{} ({})",
            run.environment.hostname.as_deref().unwrap_or("?"),
            run.environment.cpu_model.as_deref().unwrap_or("?")
        ),
        history: k,
        unit: if cycles { "cycles".into() } else { "ns".into() },
        statistic,
        threshold,
        test: format!(
            "{:.0}% prediction interval for one new run's {} from the history's, on the log scale: \
             mean ± t(0.995, n−1)·s·√(1+1/n) over n history runs (at least {MIN_HISTORY}); a change is \
             called only outside it and beyond ±{:.0}%",
            COVERAGE * 100.0,
            statistic.name(),
            threshold * 100.0
        ),
        rows,
    }
}

/// One row's verdicts from its figure and its history's.
fn judge_row(r: &ResultRow, value: f64, history: Vec<HistoryPoint>, threshold: f64) -> HistoryRow {
    let values: Vec<f64> = history.iter().map(|p| p.value).collect();
    let n = values.len();
    let center = (n > 0 && values.iter().all(|v| *v > 0.0))
        .then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / n as f64).exp());
    let ratio = center.map(|c| value / c);
    let band = (n >= MIN_HISTORY).then(|| prediction_band(&values)).flatten();
    let (verdict, label) = match (band, ratio) {
        (Some((_, low, high)), Some(x)) => {
            if value > high && x > 1.0 + threshold {
                (HistoryVerdict::Slower, "slower".to_string())
            } else if value < low && x < 1.0 - threshold {
                (HistoryVerdict::Faster, "faster".to_string())
            } else {
                (HistoryVerdict::WithinNoise, "within the history's noise".to_string())
            }
        }
        _ => (
            HistoryVerdict::NotEnoughHistory,
            format!("not enough history ({n} of {MIN_HISTORY})"),
        ),
    };
    // Instructions: against the newest history run that counted them, with every spread.
    let newest = history.iter().find(|p| p.instructions.is_some());
    let judged = match (r.instructions, newest) {
        (Some(this), Some(p)) => {
            let counted: Vec<&HistoryPoint> = history.iter().filter(|p| p.instructions.is_some()).collect();
            let mut spreads: Vec<Option<f64>> = counted.iter().map(|p| p.instructions_spread).collect();
            spreads.push(r.instructions_spread);
            let mut j = judge_path(p.instructions.unwrap_or(this), this, &spreads);
            if counted.iter().any(|q| q.instructions != p.instructions) {
                j.note = format!("{} against the newest; the history's own counts differ", j.note);
            }
            Some(j)
        }
        _ => None,
    };
    HistoryRow {
        subject: r.subject.clone(),
        operation: r.operation.clone(),
        value,
        history,
        center,
        ratio,
        low: band.map(|b| b.1),
        high: band.map(|b| b.2),
        noise: band.map(|(c, _, high)| high / c - 1.0),
        verdict,
        label,
        instructions: r.instructions,
        instructions_spread: r.instructions_spread,
        instructions_ratio: judged.as_ref().map(|j| j.ratio),
        path: judged.as_ref().map(|j| j.path),
        path_note: judged.map(|j| j.note),
    }
}

/// Counts of verdicts: (faster, slower, within the noise, not enough history).
pub fn tally(h: &HistoryComparison) -> (usize, usize, usize, usize) {
    let mut t = (0, 0, 0, 0);
    for r in &h.rows {
        match r.verdict {
            HistoryVerdict::Faster => t.0 += 1,
            HistoryVerdict::Slower => t.1 += 1,
            HistoryVerdict::WithinNoise => t.2 += 1,
            HistoryVerdict::NotEnoughHistory => t.3 += 1,
        }
    }
    t
}

/// The comparison as a table for terminals.
pub fn render(h: &HistoryComparison) -> String {
    let fmt = |x: f64| {
        if h.unit == "ns" {
            table::duration(x)
        } else {
            table::group(x)
        }
    };
    let rows: Vec<Vec<String>> = h
        .rows
        .iter()
        .map(|r| {
            let band = match r.noise {
                Some(x) => format!("noise ±{:.1}% from {} runs", x * 100.0, r.history.len()),
                None => format!("{} run{}", r.history.len(), if r.history.len() == 1 { "" } else { "s" }),
            };
            let instructions = match (r.instructions, &r.path_note) {
                (Some(n), Some(note)) => format!("{} instr, {note}", table::group(n)),
                (Some(n), None) => format!("{} instr", table::group(n)),
                (None, _) => String::new(),
            };
            vec![
                r.subject.clone(),
                r.operation.clone(),
                fmt(r.value),
                r.center.map(fmt).unwrap_or_else(|| "-".into()),
                r.ratio.map(|x| format!("×{x:.3}")).unwrap_or_else(|| "-".into()),
                band,
                r.label.clone(),
                instructions,
            ]
        })
        .collect();
    let mut header = vec![
        "subject".to_string(),
        "op".into(),
        h.run.clone(),
        "history".into(),
        "ratio".into(),
        "band".into(),
        "verdict".into(),
        "instructions".into(),
    ];
    let mut rows = rows;
    if rows.iter().all(|r| r[7].is_empty()) {
        header.pop();
        rows.iter_mut().for_each(|r| {
            r.pop();
        });
    }
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut out = table::render(&head, &rows, &[]);
    let (f, s, w, n) = tally(h);
    out.push_str(&format!(
        "\n{s} slower, {f} faster, {w} within the history's noise, {n} without enough history. Unit: {}. \
         History: up to {} runs before {} on {}; the history column is their geometric mean.\nTest: {}.\n",
        h.unit, h.history, h.run, h.machine, h.test
    ));
    if h.rows.iter().any(|r| r.path.is_some()) {
        out.push_str(crate::compare::INSTRUCTIONS_NOTE);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{run, samples};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 99% and 95% critical values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
        for (df, t995) in [
            (1.0, 63.657),
            (2.0, 9.925),
            (3.0, 5.841),
            (5.0, 4.032),
            (7.0, 3.499),
            (10.0, 3.169),
            (30.0, 2.750),
            (100.0, 2.626),
        ] {
            let q = student_t_quantile(0.995, df);
            assert!(close(q, t995, 2e-4), "df {df}: {q} against {t995}");
        }
        assert!(close(student_t_quantile(0.975, 10.0), 2.228, 2e-4));
        assert!(close(student_t_quantile(0.025, 10.0), -2.228, 2e-4));
        // Many degrees of freedom: the normal quantile.
        assert!(close(student_t_quantile(0.995, 1e6), 2.5758, 1e-4));
    }

    #[test]
    fn the_band_is_the_prediction_interval_on_the_log_scale() {
        // ln values -1, 0, 1: mean 0, s 1, n 3: half-width t(0.995, 2)·√(4/3) = 9.925·1.1547.
        let e = std::f64::consts::E;
        let (c, lo, hi) = prediction_band(&[1.0 / e, 1.0, e]).unwrap();
        let half = 9.925 * (4.0_f64 / 3.0).sqrt();
        assert!(close(c, 1.0, 1e-12));
        assert!(close(hi.ln(), half, 2e-4) && close(lo.ln(), -half, 2e-4), "{lo} {hi}");
        // No spread: the band is the value itself.
        let (c, lo, hi) = prediction_band(&[5.0, 5.0, 5.0]).unwrap();
        assert!(close(c, 5.0, 1e-12) && close(lo, 5.0, 1e-12) && close(hi, 5.0, 1e-12));
        assert_eq!(prediction_band(&[5.0]), None);
    }

    /// A history of runs whose samples are `samples(scale)`, newest first.
    fn history(scales: &[f64]) -> Vec<RunFile> {
        scales
            .iter()
            .enumerate()
            .map(|(i, s)| run(&format!("h{i}"), vec![("keypair", samples(*s))]))
            .collect()
    }

    fn verdict(scales: &[f64], now: f64, k: usize) -> HistoryRow {
        let r = run("now", vec![("keypair", samples(now))]);
        compare_history(&r, &history(scales), k, 0.05, false, Statistic::Median).rows[0].clone()
    }

    #[test]
    fn verdicts_follow_the_history_and_the_threshold() {
        // A steady history (no spread): the threshold alone decides.
        let steady = [1.0; 5];
        assert_eq!(verdict(&steady, 1.03, 10).verdict, HistoryVerdict::WithinNoise);
        assert_eq!(verdict(&steady, 1.06, 10).verdict, HistoryVerdict::Slower);
        assert_eq!(verdict(&steady, 0.9, 10).verdict, HistoryVerdict::Faster);
        assert!(verdict(&steady, 1.03, 10).noise.unwrap() < 1e-9);
        // A noisy history (±15%): 15% slower is inside its band, twice as slow is not.
        let noisy = [1.0, 1.15, 0.87, 1.1, 0.9, 1.05, 0.95, 1.12];
        let within = verdict(&noisy, 1.15, 10);
        assert_eq!(within.verdict, HistoryVerdict::WithinNoise);
        assert_eq!(within.label, "within the history's noise");
        assert!(within.noise.unwrap() > 0.15, "{:?}", within.noise);
        assert_eq!(within.history.len(), 8);
        assert_eq!(verdict(&noisy, 2.0, 10).verdict, HistoryVerdict::Slower);
        assert_eq!(verdict(&noisy, 0.5, 10).verdict, HistoryVerdict::Faster);
        // Only the newest K count: the newest three of [1, 1, 1, 3, 3] are steady.
        assert_eq!(
            verdict(&[1.0, 1.0, 1.0, 3.0, 3.0], 1.5, 3).verdict,
            HistoryVerdict::Slower
        );
        assert_eq!(verdict(&[1.0, 1.0, 1.0, 3.0, 3.0], 1.5, 3).history.len(), 3);
    }

    #[test]
    fn fewer_than_three_history_runs_give_no_verdict() {
        let r = verdict(&[1.0, 1.0], 2.0, 10);
        assert_eq!(r.verdict, HistoryVerdict::NotEnoughHistory);
        assert_eq!(r.label, "not enough history (2 of 3)");
        assert!(close(r.ratio.unwrap(), 2.0, 1e-12), "the ratio is shown all the same");
        assert_eq!((r.low, r.high, r.noise), (None, None, None));
        // An operation no history run holds.
        let now = run("now", vec![("keypair", samples(1.0)), ("exchange", samples(1.0))]);
        let h = compare_history(&now, &history(&[1.0; 4]), 10, 0.05, false, Statistic::Median);
        let ex = h.rows.iter().find(|r| r.operation == "exchange").unwrap();
        assert_eq!((ex.label.as_str(), ex.center), ("not enough history (0 of 3)", None));
        assert_eq!(tally(&h), (0, 0, 1, 1));
        let text = render(&h);
        assert!(text.contains("noise ±0.0% from 4 runs"), "{text}");
        assert!(
            text.contains("0 slower, 0 faster, 1 within the history's noise, 1 without enough history"),
            "{text}"
        );
        assert!(text.contains("Test: 99% prediction interval"), "{text}");
    }

    #[test]
    fn a_changed_instruction_count_is_named_beside_an_unchanged_time() {
        let counted = |id: &str, n: f64| {
            let mut r = run(id, vec![("keypair", samples(1.0))]);
            r.results[0].instructions = Some(n);
            r.results[0].instructions_spread = Some(0.0);
            r
        };
        let past: Vec<RunFile> = (0..4).map(|i| counted(&format!("h{i}"), 1000.0)).collect();
        let h = compare_history(&counted("now", 1010.0), &past, 10, 0.05, false, Statistic::Median);
        let r = &h.rows[0];
        assert_eq!(r.verdict, HistoryVerdict::WithinNoise, "the time verdict stands");
        assert_eq!(r.path, Some(Path::Changed));
        assert_eq!(r.path_note.as_deref(), Some("code path changed (+1.00% instructions)"));
        let same = compare_history(&counted("now", 1000.0), &past, 10, 0.05, false, Statistic::Median);
        assert_eq!(same.rows[0].path_note.as_deref(), Some("same path"));
        assert!(render(&h).contains("1,010 instr, code path changed"), "{}", render(&h));
        // A history whose counts differ among themselves: judged against the newest, and said.
        let mut mixed = past.clone();
        mixed[2].results[0].instructions = Some(990.0);
        let m = compare_history(&counted("now", 1000.0), &mixed, 10, 0.05, false, Statistic::Median);
        assert_eq!(
            m.rows[0].path_note.as_deref(),
            Some("same path against the newest; the history's own counts differ")
        );
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(json["rows"][0]["verdict"], "within-noise");
        assert_eq!(json["rows"][0]["path"], "changed");
        assert_eq!(json["rows"][0]["history"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn history_is_complete_when_every_row_has_k_runs() {
        let now = run("now", vec![("keypair", samples(1.0))]);
        assert!(!complete(&now, &history(&[1.0, 1.0]), 3, false));
        assert!(complete(&now, &history(&[1.0, 1.0, 1.0]), 3, false));
    }
}
