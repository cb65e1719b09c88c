//! Providers must not share code. liboqs and the PQClean crates define the same C
//! symbols (Classic McEliece, HQC); linked into one image, one copy would silently serve
//! both "providers". These tests prove that cannot happen here:
//! 1. each worker image contains exactly one provider's code (symbol tables), and
//! 2. two providers of the same algorithm execute different code: their exact instruction
//!    counts per operation (valgrind callgrind) differ, while repeating a measurement
//!    reproduces its count exactly.

mod common;

use common::*;
use object::{Object, ObjectSymbol};
use std::collections::BTreeSet;
use std::process::Command;

fn symbols(provider: &str) -> BTreeSet<String> {
    let data = std::fs::read(worker(provider)).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(String::from))
        .collect()
}

#[test]
fn each_worker_image_holds_one_provider() {
    let oqs = symbols("liboqs");
    let pqc = symbols("pqclean");
    // The clash exists: both carry PQClean-named McEliece/HQC functions...
    let clash: Vec<&String> = oqs
        .intersection(&pqc)
        .filter(|s| s.starts_with("PQCLEAN_MCELIECE") || s.starts_with("PQCLEAN_HQC"))
        .collect();
    assert!(!clash.is_empty(), "expected liboqs and PQClean to share symbol names");
    // ...but never in the same image.
    assert!(oqs.contains("OQS_KEM_new") && !oqs.contains("PQCRYPTO_RUST_randombytes"));
    assert!(pqc.contains("PQCRYPTO_RUST_randombytes") && !pqc.iter().any(|s| s.starts_with("OQS_")));
    for p in ["aws-lc", "rustcrypto", "openssl"] {
        let s = symbols(p);
        assert!(
            !s.iter().any(|x| x.starts_with("OQS_") || x.starts_with("PQCLEAN_")),
            "{p} carries liboqs/PQClean code"
        );
    }
}

/// Instructions executed by `iterations` calls of `op`, net of setup: the difference of two
/// callgrind totals (1 + iterations calls, and 1 call) divided by `iterations`.
fn instructions_per_op(provider: &str, subject: &str, op: &str, iterations: u64) -> u64 {
    let total = |n: u64| -> u64 {
        let out = std::env::temp_dir().join(format!("cs-cg-{}-{n}.out", std::process::id()));
        let o = Command::new("valgrind")
            .args(["--tool=callgrind", &format!("--callgrind-out-file={}", out.display())])
            .arg(worker(provider))
            .args([
                "loop",
                "--deterministic",
                "--subject",
                subject,
                "--op",
                op,
                "--iterations",
                &n.to_string(),
            ])
            .output()
            .expect("valgrind is installed by scripts/setup.sh");
        let _ = std::fs::remove_file(&out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err
            .lines()
            .find(|l| l.contains("Collected :"))
            .expect("callgrind summary");
        line.rsplit(':').next().unwrap().trim().parse().unwrap()
    };
    let one = total(1);
    let many = total(1 + iterations);
    (many - one) / iterations
}

#[test]
fn same_algorithm_different_providers_run_different_code() {
    let alg = "Classic-McEliece-348864";
    let oqs = instructions_per_op("liboqs", &format!("{alg}/liboqs/dispatch"), "decaps", 4);
    let oqs_again = instructions_per_op("liboqs", &format!("{alg}/liboqs/dispatch"), "decaps", 4);
    let pqc = instructions_per_op("pqclean", &format!("{alg}/pqclean/avx2"), "decaps", 4);
    assert_eq!(oqs, oqs_again, "callgrind counts are exact and repeatable");
    assert!(oqs > 1_000 && pqc > 1_000);
    assert_ne!(
        oqs, pqc,
        "liboqs and PQClean AVX2 decapsulation executed the same number of instructions: shared code?"
    );
    eprintln!("{alg} decaps instructions: liboqs {oqs}, pqclean avx2 {pqc}");
}
