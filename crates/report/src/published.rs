//! "Ours versus theirs": our measured cycles next to published figures (a JSON file of
//! entries with algorithm, implementation, operation, cycles, cpu and source), with the
//! ratio, like Seed 001's "our cycles versus the submitters'" table. Hash figures may be
//! throughputs instead (MB/s, 10^6 bytes per second, as sphlib and the SHA-3 studies give
//! them); ours then comes from the median wall time of the same message length.

use crate::table::{group, render};
use crate::ResultRow;
use serde::{Deserialize, Serialize};

/// One published figure.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Published {
    pub algorithm: String,
    pub implementation: String,
    pub operation: String,
    #[serde(default)]
    pub cycles: Option<f64>,
    /// Block ciphers: cycles per byte instead of cycles per call.
    #[serde(default)]
    pub cycles_per_byte: Option<f64>,
    /// Hashes: throughput in MB/s (10^6 bytes per second) for the operation's message.
    #[serde(default)]
    pub mb_per_s: Option<f64>,
    #[serde(default)]
    pub cpu: String,
    #[serde(default)]
    pub source: String,
}

/// A published figure with one of our rows beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Match {
    pub published: Published,
    pub subject: String,
    /// Our median cycles per call, per byte when the published figure is per byte, or our
    /// MB/s when it is a throughput.
    pub our_cycles: f64,
    /// Our time / theirs (below 1: we are faster here); for throughputs, theirs / ours.
    pub ratio: f64,
}

/// What a published figure measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    PerCall,
    PerByte,
    MBps,
}

impl Published {
    /// The published figure and its kind.
    pub(crate) fn figure(&self) -> Option<(f64, Kind)> {
        let ok = |x: &f64| x.is_finite() && *x > 0.0;
        match (
            self.cycles.filter(ok),
            self.cycles_per_byte.filter(ok),
            self.mb_per_s.filter(ok),
        ) {
            (Some(c), _, _) => Some((c, Kind::PerCall)),
            (None, Some(c), _) => Some((c, Kind::PerByte)),
            (None, None, Some(m)) => Some((m, Kind::MBps)),
            _ => None,
        }
    }
}

/// Reads the published-figures file: its `kem` and `kex` arrays (cycles per call), its
/// `block_cipher` array (cycles per byte) and its `hash` array (MB/s or cycles per byte);
/// entries without a figure are skipped.
/// `source: "same"` inherits the previous entry's source.
pub fn parse(text: &str) -> Result<Vec<Published>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let mut out = Vec::new();
    for family in ["kem", "kex", "block_cipher", "hash"] {
        let Some(arr) = v.get(family) else { continue };
        let arr = arr.as_array().ok_or_else(|| format!("`{family}` is not an array"))?;
        let mut last_source = String::new();
        for (i, e) in arr.iter().enumerate() {
            let mut p: Published = serde_json::from_value(e.clone()).map_err(|err| format!("{family}[{i}]: {err}"))?;
            if p.source == "same" {
                p.source = last_source.clone();
            } else {
                last_source = p.source.clone();
            }
            if p.figure().is_some() {
                out.push(p);
            }
        }
    }
    if out.is_empty() {
        return Err("no entries with a figure under `kem`, `kex`, `block_cipher` or `hash`".into());
    }
    Ok(out)
}

/// Our operation name for a published one. A key exchange's "shared secret" is `derive`:
/// eBACS, lib25519 and `openssl speed` time the scalar multiplication or EVP_PKEY_derive
/// with the peer's key already read and checked, never our `exchange` (which adds the
/// check a TLS server runs). A block cipher's "encrypt", "ECB" and "CTR" figures are bulk
/// figures, our 4 KiB calls.
pub(crate) fn operation(op: &str) -> &str {
    match op {
        "shared secret" | "dh" | "derive" => "derive",
        "encrypt" | "ECB" => "ecb:4096",
        "CTR" => "ctr:4096",
        o => o,
    }
}

/// Whether our implementation `ours` is the same kind of code as a published one: the
/// portable reference ("ref", "clean") matches our portable builds, "avx2" our AVX2 ones;
/// anything else (another library, another CPU class) is compared with all of ours.
fn same_kind(theirs: &str, ours: &str, provider: &str) -> bool {
    let portable = crate::table::is_portable;
    let avx2 = |s: &str| s == "avx2" || s.starts_with("avx2-");
    // Block cipher strategies, as the studies name them.
    let t = theirs.to_lowercase();
    if t == "naive" || t == "reference c" {
        return ours == "naive";
    }
    if t.starts_with("table") || t == "optimized" || t.contains("tables") {
        return ours == "table" || (t.contains("openssl") && provider == "openssl");
    }
    if t.starts_with("vperm") {
        return ours.starts_with("vperm");
    }
    // Fixslicing is one block in general-purpose registers; "bitsliced" (the study's
    // NEON code) many blocks in vector registers.
    if t.starts_with("fixsliced") {
        return ours == "fixsliced";
    }
    if t.starts_with("bitsliced") {
        return ours.starts_with("bitsliced");
    }
    if t.starts_with("bytesliced") || t.contains("vaes") || t.contains("gfni") {
        let kind = if t.contains("gfni") {
            "gfni"
        } else if t.contains("vaes") {
            "vaes"
        } else {
            ""
        };
        return (ours.starts_with("aesni") || ours.starts_with("vaes") || ours.starts_with("gfni"))
            && ours.starts_with(kind);
    }
    match theirs {
        "ref" | "clean" => portable(ours),
        "avx2" => avx2(ours),
        _ => true,
    }
}

/// Why `run` is not set against published figures at all, when it is not: an emulated run's
/// timings are the emulator's, not a processor's.
pub fn withheld(run: &crate::RunFile) -> Option<String> {
    run.environment
        .emulated
        .as_ref()
        .map(|e| format!("not compared with published figures: {e}"))
}

/// Whether a row's cycle figures count processor cycles (the TSC's reference cycles or the
/// core's): a timer's ticks (AArch64's generic timer, often 25 to 100 MHz) or nanoseconds
/// are not set against published cycles. Rows that name no source predate the field.
fn counts_cycles(r: &ResultRow) -> bool {
    use cryptoscope_measure::CycleSource as S;
    matches!(r.cycle_source, None | Some(S::PerfCoreCycles | S::TscReferenceCycles))
}

/// Every (published entry, our row) pair of the same algorithm, operation and kind; cycle
/// figures only where ours count cycles ([`counts_cycles`]).
pub fn matches(published: &[Published], rows: &[ResultRow]) -> Vec<Match> {
    let mut out = Vec::new();
    for p in published {
        for r in rows {
            let Some((theirs, kind)) = p.figure() else { continue };
            if r.algorithm != p.algorithm
                || r.operation != operation(&p.operation)
                || !same_kind(&p.implementation, &r.implementation, &r.provider)
            {
                continue;
            }
            let bytes = cryptoscope_model::descriptor::Operation::parse(&r.operation)
                .and_then(|o| o.message_bytes())
                .filter(|&n| n > 0)
                .map(|n| n as f64);
            let (ours, ratio) = match (kind, r.median_cycles, r.median_ns, bytes) {
                (Kind::PerCall, Some(c), _, _) if counts_cycles(r) => (c, c / theirs),
                (Kind::PerByte, Some(c), _, Some(n)) if counts_cycles(r) => (c / n, c / n / theirs),
                (Kind::MBps, _, Some(ns), Some(n)) if ns > 0.0 => {
                    let mbps = n / ns * 1e3;
                    (mbps, theirs / mbps)
                }
                _ => continue,
            };
            out.push(Match {
                published: p.clone(),
                subject: r.subject.clone(),
                our_cycles: ours,
                ratio,
            });
        }
    }
    out
}

/// A figure as the table shows it: cycles per call grouped, cycles per byte with "c/B", or
/// a throughput with "MB/s".
pub(crate) fn figure(kind: Option<(f64, Kind)>, value: Option<f64>) -> String {
    match (kind, value) {
        (Some((_, Kind::PerByte)), Some(v)) => format!("{v:.2} c/B"),
        (Some((_, Kind::MBps)), Some(v)) => format!("{v:.0} MB/s"),
        (_, Some(v)) => group(v.round()),
        _ => "-".into(),
    }
}

/// The columns of the comparison.
pub const HEADER: [&str; 9] = [
    "algorithm",
    "op",
    "theirs",
    "their figure",
    "their CPU",
    "ours",
    "our figure",
    "ours/theirs",
    "src",
];

/// The comparison's cells, one row per match, and its sources (row `src` `[i]` is
/// `sources[i - 1]`).
pub fn cells(m: &[Match]) -> (Vec<Vec<String>>, Vec<String>) {
    let mut sources: Vec<String> = Vec::new();
    let rows = m
        .iter()
        .map(|x| {
            let src = match sources.iter().position(|s| *s == x.published.source) {
                Some(i) => i + 1,
                None => {
                    sources.push(x.published.source.clone());
                    sources.len()
                }
            };
            // Their operation, and ours where the names differ ("shared secret = derive").
            let ours = operation(&x.published.operation);
            let op = if ours == x.published.operation {
                x.published.operation.clone()
            } else {
                format!("{} = {ours}", x.published.operation)
            };
            vec![
                x.published.algorithm.clone(),
                op,
                x.published.implementation.clone(),
                figure(x.published.figure(), x.published.figure().map(|f| f.0)),
                x.published.cpu.clone(),
                x.subject.split('/').skip(1).collect::<Vec<_>>().join("/"),
                figure(x.published.figure(), Some(x.our_cycles)),
                format!("{:.2}", x.ratio),
                format!("[{src}]"),
            ]
        })
        .collect();
    (rows, sources)
}

/// What the figures are, after the table.
pub fn note(our_cpu: &str, cycle_source: &str) -> String {
    format!(
        "Ours: median cycles on {our_cpu} ({cycle_source}); block ciphers in cycles per byte (c/B) of 4 KiB \
         calls; hash throughputs in MB/s (10^6 bytes/s) from the median wall time of one call on the same \
         message length. ours/theirs compares times (below 1: ours is faster). Theirs: as published, on the \
         CPU named."
    )
}

/// The table: theirs and ours side by side, then the sources.
pub fn table(m: &[Match], our_cpu: &str, cycle_source: &str) -> String {
    let (rows, sources) = cells(m);
    let mut out = render(
        &HEADER,
        &rows,
        &[false, false, false, true, false, false, true, true, false],
    );
    out += &note(our_cpu, cycle_source);
    out.push('\n');
    for (i, s) in sources.iter().enumerate() {
        out += &format!("[{}] {s}\n", i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_inherits_same_and_skips_cycle_less_ones() {
        let text = r#"{"kem":[
            {"algorithm":"A","implementation":"ref","operation":"keypair","cycles":100,"cpu":"x","source":"S1"},
            {"algorithm":"A","implementation":"avx2","operation":"keypair","cycles":10,"cpu":"x","source":"same"}],
            "kex":[{"algorithm":"X25519","implementation":"lib","operation":"shared secret","cycles":5,"source":"S2"}],
            "block_cipher":[{"algorithm":"G","implementation":"n","operation":"encrypt","cycles_per_byte":3}]}"#;
        let p = parse(text).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[3].figure(), Some((3.0, Kind::PerByte)));
        assert_eq!(p[1].source, "S1");
        assert_eq!(operation(&p[2].operation), "derive");
        assert!(parse("[1]").is_err());
        assert!(parse(r#"{"kem":[{"algorithm":1}]}"#).unwrap_err().contains("kem[0]"));
    }

    /// A throughput figure meets our median wall time of the same message length: 1 MiB in
    /// 5 ms is 209.7 MB/s, and theirs at 100 MB/s takes 2.097 times as long.
    #[test]
    fn hash_throughputs_compare_with_our_wall_time() {
        let p = parse(
            r#"{"hash":[{"algorithm":"Shabal-256-r2","implementation":"sphlib","operation":"hash:1048576",
            "mb_per_s":100,"source":"S"}]}"#,
        )
        .unwrap();
        let row: ResultRow = serde_json::from_value(serde_json::json!({
            "subject": "cryptoscope/Shabal-256-r2/portable", "algorithm": "Shabal-256-r2", "family": "hash",
            "provider": "cryptoscope", "provider_version": "", "implementation": "portable",
            "algorithm_version": "", "build": "", "operation": "hash:1048576", "gate": "pass", "gate_detail": "",
            "samples": 11, "median_ns": 5e6, "median_cycles": 1e7, "raw_cycles": [], "raw_ns": [],
            "sizes": {"public_key": 0, "secret_key": 0, "ciphertext": 0, "shared_secret": 32}
        }))
        .unwrap();
        let m = matches(&p, &[row]);
        assert_eq!(m.len(), 1);
        assert!((m[0].our_cycles - 209.7152).abs() < 1e-3, "{}", m[0].our_cycles);
        assert!((m[0].ratio - 100.0 / 209.7152).abs() < 1e-6);
        assert!(table(&m, "cpu", "tsc").contains("210 MB/s"));
    }

    /// Per-call cycles meet our row only where ours count cycles: generic timer ticks (62.5
    /// MHz under qemu, 24 MHz on a Raspberry Pi) are not set against published cycles.
    #[test]
    fn timer_ticks_are_not_compared_with_published_cycles() {
        let p = parse(r#"{"kem":[{"algorithm":"ML-KEM-768","implementation":"ref","operation":"keypair","cycles":1000,"source":"S"}]}"#)
            .unwrap();
        let row = |source: &str| -> ResultRow {
            serde_json::from_value(serde_json::json!({
                "subject": "ML-KEM-768/pqclean/clean", "algorithm": "ML-KEM-768", "family": "kem",
                "provider": "pqclean", "provider_version": "", "implementation": "clean",
                "algorithm_version": "", "build": "", "operation": "keypair", "gate": "pass", "gate_detail": "",
                "samples": 11, "median_ns": 5e4, "median_cycles": 2000.0, "raw_cycles": [], "raw_ns": [],
                "cycle_source": source,
                "sizes": {"public_key": 0, "secret_key": 0, "ciphertext": 0, "shared_secret": 32}
            }))
            .unwrap()
        };
        assert_eq!(matches(&p, &[row("tsc-reference-cycles")]).len(), 1);
        assert_eq!(matches(&p, &[row("perf-core-cycles")])[0].ratio, 2.0);
        assert!(matches(&p, &[row("generic-timer-ticks")]).is_empty());
        assert!(matches(&p, &[row("monotonic-ns")]).is_empty());
    }

    #[test]
    fn kinds_match_portable_with_portable() {
        assert!(same_kind("ref", "clean", "cryptoscope") && same_kind("ref", "clean-gcc12-O0", "cryptoscope"));
        assert!(!same_kind("ref", "avx2", "cryptoscope") && same_kind("avx2", "avx2-clang14-O3", "cryptoscope"));
        assert!(same_kind("mlkem-native (x86_64 AVX2)", "dispatch", "cryptoscope"));
        assert!(
            same_kind("table-driven", "table", "cryptoscope") && !same_kind("table-driven", "naive", "cryptoscope")
        );
        assert!(
            same_kind("fixsliced (Usuba, 32-bit GPR)", "fixsliced", "cryptoscope")
                && same_kind("bitsliced", "bitsliced-avx2", "cryptoscope")
        );
        assert!(
            !same_kind("fixsliced (Usuba, 32-bit GPR)", "bitsliced-avx2", "cryptoscope")
                && !same_kind("bitsliced", "fixsliced", "cryptoscope")
        );
        assert!(
            same_kind("libgcrypt VAES/AVX2", "vaes-avx2", "cryptoscope")
                && !same_kind("libgcrypt VAES/AVX2", "aesni-avx", "cryptoscope")
        );
        assert!(
            same_kind("OpenSSL cmll-x86_64 (tables)", "default", "openssl")
                && same_kind("reference C", "naive", "cryptoscope")
        );
    }
}
