//! The results file (`RunFile`, schema cryptoscope.run/1) read back as JSON, and everything
//! `cryptoscope show`, `compare`, `export` and `report` do with a loaded run: the terminal
//! tables, speed-ups, the exports, the HTML report, the comparison (bootstrap over raw
//! samples, by visits) and the statistics and level shifts recomputed from raw samples.
#![no_main]

use cryptoscope_measure::shifts::level_shifts;
use cryptoscope_measure::stats::summarize;
use cryptoscope_report::compare::{compare, render, Statistic};
use cryptoscope_model::RunFile;
use cryptoscope_report::{export, html, table};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(run) = serde_json::from_slice::<RunFile>(data) else {
        return;
    };
    let rows = &run.results;
    let _ = table::results(rows);
    let _ = table::memory(rows);
    let _ = table::throughput(rows);
    let _ = table::counters(rows);
    let baseline = run.config.baseline.clone().unwrap_or_else(|| "clean".into());
    let _ = table::speedups(rows, &baseline);
    let _ = export::csv(&run);
    let _ = export::markdown(&run);
    let _ = export::github_benchmark(&run);
    for r in rows {
        let c = summarize(&r.raw_cycles);
        let t = summarize(&r.raw_ns);
        assert_eq!((c.samples, t.samples), (r.raw_cycles.len(), r.raw_ns.len()));
        let _ = level_shifts(&r.raw_ns, html::SHIFT_RATIO);
    }
    // Against itself: every measured (subject, operation) of the second run must be
    // found again and compared.
    let statistic = [Statistic::Median, Statistic::P5, Statistic::Min][data.len() % 3];
    let cycles = data.len() % 2 == 1;
    let runs = [run.clone(), run];
    let c = compare(&runs, 0, 0.05, cycles, statistic);
    assert_eq!(c.runs.len(), 2);
    for row in &c.rows {
        assert_eq!(row.cells.len(), 2);
    }
    let _ = render(&c);
    let _ = html::render(&runs[..1]);
});
