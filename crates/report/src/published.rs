//! "Ours versus theirs": our measured cycles next to published figures (a JSON file of
//! entries with algorithm, implementation, operation, cycles, cpu and source), with the
//! ratio, like Seed 001's "our cycles versus the submitters'" table.

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
    pub our_cycles: f64,
    /// Ours / theirs (below 1: we are faster here).
    pub ratio: f64,
}

/// Reads the published-figures file: its `kem` and `kex` arrays (entries without cycles,
/// such as cycles-per-byte cipher figures, are skipped). `source: "same"` inherits the
/// previous entry's source.
pub fn parse(text: &str) -> Result<Vec<Published>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let mut out = Vec::new();
    for family in ["kem", "kex"] {
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
            if p.cycles.is_some_and(|c| c.is_finite() && c > 0.0) {
                out.push(p);
            }
        }
    }
    if out.is_empty() {
        return Err("no entries with cycles under `kem` or `kex`".into());
    }
    Ok(out)
}

/// Our operation name for a published one ("shared secret" is the key exchange).
fn operation(op: &str) -> &str {
    match op {
        "shared secret" | "dh" | "derive" => "exchange",
        o => o,
    }
}

/// Whether our implementation `ours` is the same kind of code as a published one: the
/// portable reference ("ref", "clean") matches our portable builds, "avx2" our AVX2 ones;
/// anything else (another library, another CPU class) is compared with all of ours.
fn same_kind(theirs: &str, ours: &str) -> bool {
    let portable = |s: &str| s == "ref" || s == "clean" || s.starts_with("clean-") || s.starts_with("ref-");
    let avx2 = |s: &str| s == "avx2" || s.starts_with("avx2-");
    match theirs {
        "ref" | "clean" => portable(ours),
        "avx2" => avx2(ours),
        _ => true,
    }
}

/// Every (published entry, our row) pair of the same algorithm, operation and kind.
pub fn matches(published: &[Published], rows: &[ResultRow]) -> Vec<Match> {
    let mut out = Vec::new();
    for p in published {
        for r in rows {
            let Some(ours) = r.median_cycles else { continue };
            if r.algorithm == p.algorithm
                && r.operation == operation(&p.operation)
                && same_kind(&p.implementation, &r.implementation)
            {
                let theirs = p.cycles.unwrap_or(f64::NAN);
                out.push(Match {
                    published: p.clone(),
                    subject: r.subject.clone(),
                    our_cycles: ours,
                    ratio: ours / theirs,
                });
            }
        }
    }
    out
}

/// The table: theirs and ours side by side, then the sources.
pub fn table(m: &[Match], our_cpu: &str, cycle_source: &str) -> String {
    let mut sources: Vec<String> = Vec::new();
    let rows: Vec<Vec<String>> = m
        .iter()
        .map(|x| {
            let src = match sources.iter().position(|s| *s == x.published.source) {
                Some(i) => i + 1,
                None => {
                    sources.push(x.published.source.clone());
                    sources.len()
                }
            };
            vec![
                x.published.algorithm.clone(),
                x.published.operation.clone(),
                x.published.implementation.clone(),
                group(x.published.cycles.unwrap_or(0.0).round()),
                x.published.cpu.clone(),
                x.subject.split('/').skip(1).collect::<Vec<_>>().join("/"),
                group(x.our_cycles.round()),
                format!("{:.2}", x.ratio),
                format!("[{src}]"),
            ]
        })
        .collect();
    let mut out = render(
        &[
            "algorithm",
            "op",
            "theirs",
            "their cycles",
            "their CPU",
            "ours",
            "our cycles",
            "ours/theirs",
            "src",
        ],
        &rows,
        &[false, false, false, true, false, false, true, true, false],
    );
    out += &format!("Ours: median cycles on {our_cpu} ({cycle_source}). Theirs: as published, on the CPU named.\n");
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
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].source, "S1");
        assert_eq!(operation(&p[2].operation), "exchange");
        assert!(parse("[1]").is_err());
        assert!(parse(r#"{"kem":[{"algorithm":1}]}"#).unwrap_err().contains("kem[0]"));
    }

    #[test]
    fn kinds_match_portable_with_portable() {
        assert!(same_kind("ref", "clean") && same_kind("ref", "clean-gcc12-O0"));
        assert!(!same_kind("ref", "avx2") && same_kind("avx2", "avx2-clang14-O3"));
        assert!(same_kind("mlkem-native (x86_64 AVX2)", "dispatch"));
    }
}
