//! Signature results: one line per subject with what a protocol designer weighs together —
//! the bytes on the wire (public key, signature) and in memory (secret key), and the cycles
//! of key generation, signing and verifying a message of the default length — and, when
//! the memory pass ran, the stack signing and verifying take.

use crate::table::{group, render};
use crate::{GateStatus, ResultRow};
use cryptoscope_model::descriptor::SIG_MESSAGE_BYTES;

/// The header and rows; `None` when the results hold no signature rows.
pub fn rows(results: &[ResultRow]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let sig: Vec<&ResultRow> = results.iter().filter(|r| r.family == "sig").collect();
    if sig.is_empty() {
        return None;
    }
    let (sign, verify) = (
        format!("sign:{SIG_MESSAGE_BYTES}"),
        format!("verify:{SIG_MESSAGE_BYTES}"),
    );
    let stack = sig.iter().any(|r| r.stack_bytes.is_some());
    let mut header: Vec<String> = [
        "algorithm",
        "provider",
        "impl",
        "pk B",
        "sk B",
        "sig B",
        "keypair",
        "sign",
        "verify",
    ]
    .map(String::from)
    .to_vec();
    if stack {
        header.extend(["stack sign", "stack verify"].map(String::from));
    }
    let mut subjects: Vec<&str> = Vec::new();
    for r in &sig {
        if !subjects.contains(&r.subject.as_str()) {
            subjects.push(&r.subject);
        }
    }
    let body = subjects
        .iter()
        .map(|&subject| {
            let of = |op: &str| sig.iter().find(|r| r.subject == subject && r.operation == op).copied();
            let first = sig.iter().find(|r| r.subject == subject).expect("a row");
            let mut v = vec![
                first.algorithm.clone(),
                first.provider.clone(),
                first.implementation.clone(),
                first.sizes.public_key.to_string(),
                first.sizes.secret_key.to_string(),
                first.sizes.ciphertext.to_string(),
            ];
            for op in ["keypair", sign.as_str(), verify.as_str()] {
                v.push(match of(op) {
                    Some(r) if r.gate != GateStatus::Pass => r.gate.as_str().to_string(),
                    Some(r) => r.median_cycles.map_or("-".into(), group),
                    None => "-".into(),
                });
            }
            if stack {
                for op in [sign.as_str(), verify.as_str()] {
                    v.push(
                        of(op)
                            .and_then(|r| r.stack_bytes)
                            .map_or("-".into(), |b| group(b as f64)),
                    );
                }
            }
            v
        })
        .collect();
    Some((header, body))
}

/// What the columns mean.
pub fn note() -> String {
    format!(
        "pk, sk, sig: bytes of the public key, secret key and signature as the subject encodes them \
(the largest, where the length varies: DER, Falcon's compression). keypair, sign, verify: median cycles \
of one call; sign and verify take a {SIG_MESSAGE_BYTES}-byte message (eBACS's and pqm4's length) with a \
key prepared beforehand. stack: bytes of stack one call reaches (the memory pass)."
    )
}

/// The terminal table; `None` when the results hold no signature rows.
pub fn table(results: &[ResultRow]) -> Option<String> {
    let (h, body) = rows(results)?;
    let header: Vec<&str> = h.iter().map(String::as_str).collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 3).collect();
    Some(format!(
        "Signatures (sizes in bytes, cycles per call):\n{}{}\n",
        render(&header, &body, &right),
        note()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, cycles: f64, stack: Option<u64>) -> ResultRow {
        let d = cryptoscope_model::descriptor::Descriptor::catalogued(
            "ML-DSA-65",
            "p",
            "i",
            "1".into(),
            "-".into(),
            cryptoscope_model::descriptor::Sizes {
                public_key: 1952,
                secret_key: 4032,
                ciphertext: 3309,
                shared_secret: 0,
            },
            cryptoscope_model::descriptor::Randomness::Harness,
        );
        let mut r = ResultRow::without_numbers(&d, op, GateStatus::Pass, "");
        r.median_cycles = Some(cycles);
        r.stack_bytes = stack;
        r
    }

    #[test]
    fn one_line_per_subject_with_sizes_cycles_and_stack() {
        let results = vec![
            row("keypair", 100_000.0, None),
            row("sign:59", 250_000.0, Some(60_000)),
            row("verify:59", 90_000.0, Some(40_000)),
        ];
        let (h, body) = rows(&results).expect("a table");
        assert_eq!(h.len(), 11);
        assert_eq!(body.len(), 1);
        assert_eq!(body[0][3..6], ["1952", "4032", "3309"]);
        assert_eq!(body[0][6], group(100_000.0));
        assert_eq!(body[0][9], group(60_000.0));
        assert!(rows(&[]).is_none());
    }
}
