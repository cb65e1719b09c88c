//! AEAD results: one line per (subject, seal or open) with cycles per byte at every
//! message length and MiB/s at the longest, so that the per-call cost of short records and
//! the throughput of long ones read side by side.

use crate::table::render;
use crate::{GateStatus, ResultRow};
use cryptoscope_model::descriptor::Operation;

/// The rows: algorithm, provider, impl, op, then cycles per byte per length, then MiB/s at
/// the longest length measured.
pub fn rows(results: &[ResultRow]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let aead: Vec<(&ResultRow, Operation)> = results
        .iter()
        .filter(|r| r.family == "aead")
        .filter_map(|r| Operation::parse(&r.operation).map(|o| (r, o)))
        .collect();
    if aead.is_empty() {
        return None;
    }
    let mut lengths: Vec<u64> = aead.iter().filter_map(|(_, o)| o.message_bytes()).collect();
    lengths.sort_unstable();
    lengths.dedup();
    let longest = *lengths.last()?;
    let mut header: Vec<String> = ["algorithm", "provider", "impl", "op"].map(String::from).to_vec();
    header.extend(lengths.iter().map(|n| format!("c/B {n}")));
    header.push(format!("MiB/s {longest}"));
    // (subject, seal/open) in order of first appearance.
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for (r, o) in &aead {
        let kind = if matches!(o, Operation::Seal(_)) {
            "seal"
        } else {
            "open"
        };
        if !keys.contains(&(r.subject.as_str(), kind)) {
            keys.push((r.subject.as_str(), kind));
        }
    }
    let body = keys
        .iter()
        .map(|&(subject, kind)| {
            let of = |n: u64| {
                aead.iter()
                    .find(|(r, o)| r.subject == subject && o.message_bytes() == Some(n) && o.as_str().starts_with(kind))
                    .map(|(r, _)| *r)
            };
            let first = aead.iter().find(|(r, _)| r.subject == subject).expect("a row").0;
            let mut v = vec![
                first.algorithm.clone(),
                first.provider.clone(),
                first.implementation.clone(),
                kind.to_string(),
            ];
            for &n in &lengths {
                v.push(match of(n) {
                    Some(r) if r.gate != GateStatus::Pass => r.gate.as_str().to_string(),
                    Some(r) => r.median_cycles.map_or("-".into(), |c| format!("{:.2}", c / n as f64)),
                    None => "-".into(),
                });
            }
            v.push(
                of(longest)
                    .filter(|r| r.gate == GateStatus::Pass)
                    .and_then(|r| r.median_ns)
                    .map_or("-".into(), |t| {
                        format!("{:.0}", longest as f64 / (1u64 << 20) as f64 / (t * 1e-9))
                    }),
            );
            v
        })
        .collect();
    Some((header, body))
}

/// What the columns mean.
pub const NOTE: &str = "seal: encrypt and tag the message in place; open: check the tag and decrypt into \
another buffer. Each call carries 13 bytes of associated data (a TLS 1.2 record header) and a fresh \
12-byte nonce set on an already expanded key. c/B: median cycles of one call per message byte.";

/// The terminal table; `None` when the run has no AEAD rows.
pub fn table(results: &[ResultRow]) -> Option<String> {
    let (h, body) = rows(results)?;
    let header: Vec<&str> = h.iter().map(String::as_str).collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 4).collect();
    Some(format!(
        "AEADs (cycles per byte by message length):\n{}{NOTE}\n",
        render(&header, &body, &right)
    ))
}
