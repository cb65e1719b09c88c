//! Block cipher results: one summary line per (cipher, provider, strategy) and the
//! per-function table (key schedule, inner functions, one block, ECB, CTR), in cycles per
//! byte and MiB/s, with whether the strategy indexes memory with secret data.

use crate::table::{group, render};
use crate::{GateStatus, ResultRow};
use cryptoscope_model::descriptor::Operation;

/// What the terminal and the report say about where the AArch64 code was checked.
pub const AARCH64_NOTE: &str = "AArch64 builds of the portable and NEON strategies are checked for correctness only, \
under qemu-aarch64 (scripts/test.sh); no AArch64 figures are measured here.";

fn is_cipher(r: &ResultRow) -> bool {
    r.family == "cipher"
}

/// "yes" / "no" / "unknown" for the strategy's secret-indexed memory accesses.
pub fn secret_tables(r: &ResultRow) -> &'static str {
    match r.cipher.as_ref().and_then(|c| c.secret_indexing) {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// Cycles per byte and MiB/s of a measured row that processes bytes.
fn per_byte(r: &ResultRow) -> Option<(f64, f64)> {
    let n = Operation::parse(&r.operation)?.message_bytes()? as f64;
    if r.gate != GateStatus::Pass || n == 0.0 {
        return None;
    }
    let (c, t) = (r.median_cycles?, r.median_ns?);
    Some((c / n, n / (1u64 << 20) as f64 / (t * 1e-9)))
}

/// The per-function rows: cipher, provider, strategy, operation, bytes per call, cycles per
/// call, cycles per byte, MiB/s, secret tables, batch.
pub fn function_rows(rows: &[ResultRow]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "cipher",
        "provider",
        "strategy",
        "function",
        "bytes",
        "cycles",
        "cycles/byte",
        "MiB/s",
        "secret tables",
        "batch",
    ];
    let body = rows
        .iter()
        .filter(|r| is_cipher(r))
        .map(|r| {
            let bytes = Operation::parse(&r.operation).and_then(|o| o.message_bytes());
            let mut v = vec![
                r.algorithm.clone(),
                r.provider.clone(),
                r.implementation.clone(),
                r.operation.clone(),
            ];
            v.push(bytes.map_or("-".into(), |b| group(b as f64)));
            match (r.gate, r.median_cycles) {
                (GateStatus::Pass, Some(c)) => v.push(group(c)),
                (g, _) => v.push(g.as_str().to_string()),
            }
            match per_byte(r) {
                Some((cpb, mibs)) => v.extend([format!("{cpb:.2}"), format!("{mibs:.1}")]),
                None => v.extend(["-".into(), "-".into()]),
            }
            v.push(secret_tables(r).into());
            v.push(r.cipher.as_ref().map_or("-".into(), |c| c.batch.to_string()));
            v
        })
        .collect();
    (header, body)
}

/// One line per (cipher, provider, strategy): key schedule cycles, then cycles per byte of
/// one block (latency), ECB and CTR over 4 KiB (throughput), CTR MiB/s, secret tables.
pub fn summary_rows(rows: &[ResultRow]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "cipher",
        "provider",
        "strategy",
        "key schedule",
        "1 block c/B",
        "ECB c/B",
        "CTR c/B",
        "CTR MiB/s",
        "secret tables",
        "batch",
    ];
    let mut subjects: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| is_cipher(r)) {
        if !subjects.contains(&r.subject.as_str()) {
            subjects.push(&r.subject);
        }
    }
    let body = subjects
        .into_iter()
        .map(|s| {
            let of = |prefix: &str| {
                rows.iter()
                    .find(|r| r.subject == s && r.operation.split(':').next() == Some(prefix))
            };
            let first = rows.iter().find(|r| r.subject == s).expect("subject has rows");
            let mut v = vec![
                first.algorithm.clone(),
                first.provider.clone(),
                first.implementation.clone(),
            ];
            v.push(match of("keysched") {
                Some(r) if r.gate == GateStatus::Pass => r.median_cycles.map_or("-".into(), group),
                Some(r) => r.gate.as_str().into(),
                None => "-".into(),
            });
            for op in ["block", "ecb", "ctr"] {
                v.push(of(op).and_then(per_byte).map_or("-".into(), |(c, _)| format!("{c:.2}")));
            }
            v.push(
                of("ctr")
                    .and_then(per_byte)
                    .map_or("-".into(), |(_, m)| format!("{m:.1}")),
            );
            v.push(secret_tables(first).into());
            v.push(first.cipher.as_ref().map_or("-".into(), |c| c.batch.to_string()));
            v
        })
        .collect();
    (header, body)
}

/// A line converting the tables' TSC cycles to core cycles, when the run estimated the
/// core clock (empty otherwise).
pub fn core_note(core_per_tsc: Option<f64>) -> String {
    match core_per_tsc {
        Some(r) => format!(
            "Cycles are TSC reference cycles; the core ran at about {r:.2} × the TSC's rate during this run \
             (dependent-addition estimate), so core cycles per byte ≈ {r:.2} × these.\n"
        ),
        None => String::new(),
    }
}

/// The terminal tables; `None` when the run has no cipher rows.
pub fn table(rows: &[ResultRow], core_per_tsc: Option<f64>) -> Option<String> {
    let (h, body) = summary_rows(rows);
    if body.is_empty() {
        return None;
    }
    let right = |n: usize| -> Vec<bool> { (0..n).map(|i| i >= 3).collect() };
    let (fh, fbody) = function_rows(rows);
    Some(format!(
        "Block ciphers (cycles per byte from the median; 1 block = latency of one block, ECB/CTR = 4 KiB):\n{}\n\
         Per function (inner functions run on the strategy's whole state of `batch` blocks):\n{}\n\
         secret tables: \"yes\" = indexes memory with secret data (cache-timing exposure), \"no\" = bitsliced or \
         byte-sliced, \"unknown\" = third-party code not audited here.\n{}{AARCH64_NOTE}\n",
        render(&h, &body, &right(h.len())),
        render(&fh, &fbody, &right(fh.len())),
        core_note(core_per_tsc)
    ))
}
