//! "Ours versus theirs" in the report: the rows `cryptoscope compare --published` prints,
//! for one run, as a table with the sources under it.

use super::esc;
use crate::published::{self, Published};
use crate::RunFile;
use std::fmt::Write as _;

/// The section for `run`, or nothing when no published figure matches its results.
pub fn section(run: &RunFile, entries: &[Published]) -> String {
    if let Some(why) = published::withheld(run) {
        return format!("<h3>Ours versus theirs</h3><p>{}.</p>", esc(&why));
    }
    let m = published::matches(entries, &run.results);
    if m.is_empty() {
        return String::new();
    }
    let (rows, sources) = published::cells(&m);
    let mut s = String::from("<h3>Ours versus theirs</h3><table class=\"sortable\"><thead><tr>");
    for h in published::HEADER {
        let _ = write!(s, "<th>{h}</th>");
    }
    s.push_str("</tr></thead><tbody>");
    for (row, x) in rows.iter().zip(&m) {
        let provider = x.subject.split('/').nth(1).unwrap_or_default();
        let _ = write!(s, "<tr data-provider=\"{}\">", esc(provider));
        for (i, c) in row.iter().enumerate() {
            let class = if matches!(i, 3 | 6 | 7) { " class=\"n\"" } else { "" };
            let _ = write!(s, "<td{class}>{}</td>", esc(c));
        }
        s.push_str("</tr>");
    }
    let cpu = run.environment.cpu_model.as_deref().unwrap_or("this machine");
    let source = run
        .results
        .iter()
        .find_map(|r| r.cycle_source)
        .map_or("cycles", |c| c.label());
    let _ = write!(
        s,
        "</tbody></table><p>{}</p><ol class=\"sources\">",
        esc(&published::note(cpu, source))
    );
    for src in sources {
        let _ = write!(s, "<li>{}</li>", esc(&src));
    }
    s.push_str("</ol>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{run, samples};

    #[test]
    fn a_matching_published_figure_gets_a_row_and_its_source() {
        let mut r = run("a", vec![("derive", samples(1.0))]);
        r.results[0].median_cycles = Some(100_000.0);
        let theirs = published::parse(
            r#"{"kex": [{"algorithm": "X25519", "implementation": "lib", "operation": "shared secret",
                "cycles": 50000, "cpu": "Skylake", "source": "S"}]}"#,
        )
        .unwrap();
        let html = section(&r, &theirs);
        assert!(html.contains("<td>shared secret = derive</td>"), "{html}");
        assert!(
            html.contains("<td class=\"n\">2.00</td>") && html.contains("<li>S</li>"),
            "{html}"
        );
        assert_eq!(section(&r, &[]), "");
    }
}
