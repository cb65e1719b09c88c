//! The worker protocol: JSON lines on a worker's standard output, read by the CLI
//! (crates/engine/src/workers.rs: blank lines skipped, one `Event` per line, an unreadable line
//! reported with its first 120 characters), then what the CLI does with each event: rows
//! from measurements with statistics and level shifts recomputed from the raw samples
//! (crates/engine/src/run/measure.rs), scaling points and the knee (scale.rs), gate reports, subject
//! descriptors.
#![no_main]

use cryptoscope_catalogue::descriptor::{Randomness, Sizes};
use cryptoscope_catalogue::Descriptor;
use cryptoscope_measure::shifts::level_shifts;
use cryptoscope_measure::stats::summarize;
use cryptoscope_model::{finish_scaling, GateStatus, ResultRow, ScalePoint};
use cryptoscope_report::{html, table};
use cryptoscope_worker::Event;
use libfuzzer_sys::fuzz_target;

fn any_descriptor() -> Descriptor {
    let sizes = Sizes {
        public_key: 32,
        secret_key: 32,
        ciphertext: 0,
        shared_secret: 32,
    };
    Descriptor::catalogued(
        "X25519",
        "fuzz",
        "ref",
        String::new(),
        String::new(),
        sizes,
        Randomness::Harness,
    )
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let d = any_descriptor();
    let mut rows = Vec::new();
    let mut points = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let ev = match serde_json::from_str::<Event>(line) {
            Ok(ev) => ev,
            Err(e) => {
                let _ = format!("unreadable worker output ({e}): {line:.120}");
                continue;
            }
        };
        match ev {
            Event::Describe { subjects } => {
                for s in &subjects {
                    let _ = (s.is_available(), s.family.as_str());
                    for op in s.operations() {
                        let row = ResultRow::without_numbers(s, op.as_str(), GateStatus::Fail, "not gated");
                        assert_eq!(row.operation, op.as_str());
                    }
                }
            }
            Event::Gate { report, .. } => {
                let _ = (report.passed(), report.detail());
            }
            Event::Measured(m) => {
                // As run::row_from and fill_statistics do.
                let mut r = ResultRow::without_numbers(&d, m.operation.as_str(), GateStatus::Pass, "");
                r.stop_reason = Some(m.samples.stop);
                r.cycle_source = Some(m.clock.cycle_source);
                r.tsc_hz = m.clock.tsc_hz;
                r.cpu = m.cpu;
                let offset_s = m.samples.started_unix_ms / 1e3;
                r.raw_t_s = m.samples.t_ns.iter().map(|t| offset_s + t / 1e9).collect();
                r.raw_cycles = m.samples.cycles;
                r.raw_ns = m.samples.ns;
                let c = summarize(&r.raw_cycles);
                let t = summarize(&r.raw_ns);
                r.samples = c.samples;
                r.median_cycles = Some(c.median);
                r.median_ns = Some(t.median);
                r.p5_cycles = Some(c.p5);
                r.outliers = Some(c.outliers);
                let _ = level_shifts(&r.raw_ns, html::SHIFT_RATIO);
                rows.push(r);
            }
            Event::Scaled(s) => points.push(ScalePoint::new(s.threads, s.per_thread, &s.seconds)),
            Event::OpFailed { operation, error, .. } => {
                rows.push(ResultRow::without_numbers(
                    &d,
                    operation.as_str(),
                    GateStatus::Fail,
                    error,
                ));
            }
            other => {
                let _ = format!("{other:?}");
            }
        }
    }
    let _ = table::results(&rows);
    if let Some(knee) = finish_scaling(&mut points) {
        assert!(points.iter().any(|p| p.threads == knee));
    }
});
