//! An A/B comparison (`cryptoscope ab`) for terminals and the report: what was compared,
//! and per operation A's and B's time, the paired ratio B/A with its interval, the
//! verdict, and the exact instruction counts beside it.

use crate::table;
use cryptoscope_model::apps::ab::{setup, Compared};
use cryptoscope_model::AppResult;

/// What was compared and how, one line each.
pub fn setup_lines(apps: &[AppResult]) -> Vec<String> {
    let Some(s) = setup(apps) else {
        return Vec::new();
    };
    let mut out = vec![format!("A: {}", s.a), format!("B: {}", s.b)];
    let cpu = s.cpu.map_or("not pinned".to_string(), |c| format!("CPU {c}"));
    let took = s.elapsed_s.map_or(String::new(), |e| format!(", took {e:.1} s"));
    out.push(format!(
        "Interleaved on {cpu}: blocks of {} ms for {} s{took}; clock {}.",
        s.block_ms,
        s.time_s,
        s.clock.as_deref().unwrap_or("?")
    ));
    out.push(format!("Test: {}.", s.test));
    if let Some(n) = &s.instructions_note {
        out.push(format!("Instructions: {n}."));
    }
    out
}

fn count(x: Option<f64>) -> String {
    x.map_or("-".into(), table::group)
}

/// The table: header and rows.
pub fn rows(apps: &[AppResult]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "op",
        "A",
        "B",
        "B/A",
        "95% CI",
        "verdict",
        "quads",
        "calls/block",
        "instructions A",
        "instructions B",
        "B/A instr.",
    ];
    let rows = Compared::all(apps)
        .map(|c| {
            let (ratio, ci, verdict) = match (c.ratio, c.ci95_low, c.ci95_high, c.verdict) {
                (Some(r), Some(lo), Some(hi), Some(v)) => {
                    (format!("×{r:.4}"), format!("[{lo:.4}, {hi:.4}]"), v.label().to_string())
                }
                _ => ("-".into(), "-".into(), "too few quads".into()),
            };
            vec![
                c.operation.clone(),
                table::duration(c.a_ns),
                table::duration(c.b_ns),
                ratio,
                ci,
                verdict,
                c.quads.to_string(),
                c.calls_per_block.to_string(),
                count(c.a_instructions),
                count(c.b_instructions),
                c.instructions_note().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    (header, rows)
}

/// The table for terminals, or `None` when the run holds no comparison.
pub fn table(apps: &[AppResult]) -> Option<String> {
    let (header, rows) = rows(apps);
    (!rows.is_empty()).then(|| table::render(&header, &rows, &[]))
}

/// What `ab` prints when it ends: the set-up, the table, and how to read it.
pub fn summary(apps: &[AppResult]) -> String {
    let Some(t) = table(apps) else {
        return String::new();
    };
    let mut s: String = setup_lines(apps).into_iter().map(|l| l + "\n").collect();
    s.push('\n');
    s.push_str(&t);
    s.push_str(
        "\nA and B: the median of each side's block medians. The verdict is from time alone; \
         instructions (exact, callgrind, fixed-seed randomness) are shown beside it: equal counts mean the \
         same code path, and a time difference then comes from layout, caches or the machine.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_measure::paired::Change;
    use cryptoscope_model::apps::ab::Setup;
    use cryptoscope_model::apps::Item;

    #[test]
    fn the_table_states_the_verdict_and_the_counts_beside_it() {
        let setup = Setup {
            a: "ML-KEM-512/build/x-O2".into(),
            b: "ML-KEM-512/build/x-O2_DSLOWER".into(),
            algorithm: "ML-KEM-512".into(),
            cpu: Some(1),
            block_ms: 25.0,
            time_s: 30.0,
            threshold: 0.01,
            test: "paired".into(),
            ..Setup::default()
        };
        let slower = Compared {
            operation: "encaps".into(),
            calls_per_block: 80,
            a_ns: 300_000.0,
            b_ns: 309_000.0,
            ratio: Some(1.03),
            ci95_low: Some(1.025),
            ci95_high: Some(1.035),
            quads: 100,
            verdict: Some(Change::Slower),
            a_instructions: Some(1_000_000.0),
            b_instructions: Some(1_000_000.0),
            ..Compared::default()
        };
        let few = Compared {
            operation: "decaps".into(),
            quads: 2,
            ..Compared::default()
        };
        let apps = vec![setup.to_app("setup"), slower.to_app("encaps"), few.to_app("decaps")];
        let s = summary(&apps);
        assert!(s.contains("A: ML-KEM-512/build/x-O2\n"), "{s}");
        assert!(s.contains("CPU 1"), "{s}");
        let encaps = s.lines().find(|l| l.starts_with("encaps")).unwrap();
        for part in ["×1.0300", "[1.0250, 1.0350]", "slower", "1,000,000", "same count"] {
            assert!(encaps.contains(part), "{part} in {encaps}");
        }
        assert!(
            s.lines()
                .any(|l| l.starts_with("decaps") && l.contains("too few quads")),
            "{s}"
        );
        assert_eq!(table(&[]), None);
    }
}
