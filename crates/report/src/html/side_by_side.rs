//! Runs side by side (`cryptoscope report A B …`): every (subject, operation) the runs share,
//! each run's median and its ratio to the first run with the 95 % interval `compare` gives,
//! and the verdict. The same statistics as `cryptoscope compare` (median, 5 % threshold,
//! nanoseconds, so that machines with different clocks compare), drawn as one table.

use super::esc;
use crate::compare::{self, Statistic, Verdict};
use crate::{table, RunFile};
use std::fmt::Write as _;

/// The threshold below which a change is not called one (as `compare`'s default).
const THRESHOLD: f64 = 0.05;

/// The section, or nothing for fewer than two runs.
pub fn section(runs: &[RunFile]) -> String {
    if runs.len() < 2 {
        return String::new();
    }
    let c = compare::compare(runs, 0, THRESHOLD, false, Statistic::Median);
    let rows: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.cells.iter().filter(|x| x.median.is_some()).count() >= 2)
        .collect();
    let mut s = String::from("<section id=\"side-by-side\"><h2>Runs side by side</h2>");
    let (faster, slower, same, missing) = compare::tally(&c);
    let _ = write!(
        s,
        "<p>Against the first run, {}: {slower} slower, {faster} faster, {same} no significant change, \
         {missing} not comparable. Ratio of medians (nanoseconds) with its 95% interval ({}); a change under \
         {:.0}% is not called one.</p><ul>",
        esc(&c.runs[0]),
        esc(&c.test),
        THRESHOLD * 100.0
    );
    for (id, machine) in c.runs.iter().zip(&c.machines) {
        let _ = write!(s, "<li>{}: {}</li>", esc(id), esc(machine));
    }
    s.push_str("</ul><table class=\"sortable\" id=\"side-by-side-table\"><thead><tr><th>subject</th><th>op</th>");
    for (i, id) in c.runs.iter().enumerate() {
        let _ = write!(s, "<th>{}</th>", esc(id));
        if i > 0 {
            let _ = write!(s, "<th>ratio [95% CI]</th><th>verdict</th>");
        }
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        let provider = r.subject.split('/').nth(1).unwrap_or_default();
        let _ = write!(
            s,
            "<tr data-provider=\"{}\"><td>{}</td><td>{}</td>",
            esc(provider),
            esc(&r.subject),
            esc(&r.operation)
        );
        for (i, cell) in r.cells.iter().enumerate() {
            let m = cell.median.map(table::duration).unwrap_or_else(|| "-".into());
            let _ = write!(s, "<td class=\"n\">{m}</td>");
            if i == 0 {
                continue;
            }
            let ratio = match (cell.ratio, cell.ci95_low, cell.ci95_high) {
                (Some(x), Some(lo), Some(hi)) => format!("×{x:.3} [{lo:.3}, {hi:.3}]"),
                (Some(x), _, _) => format!("×{x:.3}"),
                _ => "-".into(),
            };
            let class = match cell.verdict {
                Verdict::Slower => "fail",
                Verdict::Faster => "better",
                _ => "",
            };
            let _ = write!(
                s,
                "<td class=\"n\">{ratio}</td><td class=\"{class}\">{}</td>",
                cell.verdict.label()
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></section>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{run, samples};

    #[test]
    fn two_runs_get_a_table_with_ratios_and_verdicts_one_does_not() {
        let a = run("a", vec![("keypair", samples(1.0)), ("exchange", samples(1.0))]);
        let b = run("b", vec![("keypair", samples(1.3)), ("exchange", samples(1.0))]);
        assert_eq!(section(std::slice::from_ref(&a)), "");
        let html = section(&[a, b]);
        assert!(html.contains("1 slower, 0 faster, 1 no significant change"), "{html}");
        assert_eq!(html.matches("<tr data-provider=\"openssl\">").count(), 2);
        assert!(
            html.contains("×1.300 [") && html.contains("<td class=\"fail\">slower</td>"),
            "{html}"
        );
    }
}
