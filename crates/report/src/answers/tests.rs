//! The answers on rows the tests make: figures and intervals set by hand, never timed.

use super::*;
use cryptoscope_model::descriptor::{Descriptor, Randomness, Sizes};

fn descriptor(alg: &str, provider: &str, imp: &str) -> Descriptor {
    let sizes = if alg.starts_with("ML-KEM") {
        Sizes {
            public_key: 1184,
            secret_key: 2400,
            ciphertext: 1088,
            shared_secret: 32,
        }
    } else if alg.starts_with("ML-DSA-44") {
        // FIPS 204 Table 2.
        Sizes {
            public_key: 1312,
            secret_key: 2560,
            ciphertext: 2420,
            shared_secret: 0,
        }
    } else {
        Sizes {
            public_key: 32,
            secret_key: 32,
            ciphertext: 0,
            shared_secret: 32,
        }
    };
    Descriptor::catalogued(alg, provider, imp, "v".into(), "b".into(), sizes, Randomness::Harness)
}

/// A gated row with median `m` cycles and the interval [lo, hi]; nanoseconds = cycles / 2.
fn row(alg: &str, provider: &str, imp: &str, op: &str, m: f64, lo: f64, hi: f64) -> ResultRow {
    let mut r = ResultRow::without_numbers(&descriptor(alg, provider, imp), op, GateStatus::Pass, "");
    r.median_cycles = Some(m);
    r.ci95_low_cycles = Some(lo);
    r.ci95_high_cycles = Some(hi);
    r.median_ns = Some(m / 2.0);
    r
}

/// A row with a tight interval (±1%).
fn tight(alg: &str, provider: &str, imp: &str, op: &str, m: f64) -> ResultRow {
    row(alg, provider, imp, op, m, m * 0.99, m * 1.01)
}

use crate::html::testrows::run_of;

/// The text with its line breaks and indentation folded into single spaces (what a wrapped
/// sentence says, wherever it wrapped).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn find<'a>(f: &'a [Fastest], op: &str) -> &'a Fastest {
    f.iter().find(|x| x.operation == op).unwrap()
}

#[test]
fn overlapping_intervals_are_a_tie_and_a_clear_gap_a_winner() {
    let rows = vec![
        row("ML-KEM-768", "liboqs", "dispatch", "keypair", 1000.0, 990.0, 1010.0),
        row("ML-KEM-768", "liboqs", "dispatch", "encaps", 1000.0, 950.0, 1050.0),
        row("ML-KEM-768", "pqclean", "avx2", "keypair", 1800.0, 1750.0, 1850.0),
        row("ML-KEM-768", "pqclean", "avx2", "encaps", 1030.0, 990.0, 1080.0),
        row("ML-KEM-768", "pqclean", "clean", "encaps", 2000.0, 1900.0, 2100.0),
    ];
    let f = fastest(&rows);
    assert_eq!(f.len(), 2);
    let kp = find(&f, "keypair");
    assert_eq!(kp.winner.label(), "liboqs/dispatch");
    assert!(kp.tied.is_empty());
    assert!((kp.ratio().unwrap() - 1.8).abs() < 1e-9);
    let enc = find(&f, "encaps");
    assert_eq!(enc.winner.label(), "liboqs/dispatch");
    assert_eq!(enc.tied.len(), 1, "the avx2 interval overlaps the winner's");
    assert_eq!(enc.tied[0].label(), "pqclean/avx2");
    assert_eq!(enc.ratio(), None, "a tie names no margin");
    assert_eq!(enc.runner_up.as_ref().unwrap().label(), "pqclean/clean");
    let text = flat(&terminal(&answers(&run_of("r", rows), &[], Against::Nothing)));
    assert!(
        text.contains("ML-KEM-768: keypair liboqs/dispatch (1.8× pqclean/avx2), encaps tied"),
        "{text}"
    );
    assert!(text.contains("liboqs/dispatch = pqclean/avx2"), "{text}");
    // The report says the same: the tied implementation in its column, no margin.
    let h = html(&answers(&run_of("r", rows_again()), &[], Against::Nothing));
    assert!(
        h.contains("<td>encaps</td><td>liboqs/dispatch</td><td class=\"num\" data-value=\"1000\">1,000</td><td>pqclean/avx2</td><td>pqclean/clean</td><td></td>"),
        "{h}"
    );
}

/// An operation cheaper than the clock's overhead has a median of 0 cycles: it is still the
/// fastest (the run that caught this ranked a 156-cycle implementation over one at 0), but
/// no "ahead by" is defined over it, and no speed-up either.
#[test]
fn a_median_below_the_clocks_resolution_wins_without_a_ratio() {
    let rows = vec![
        row("X25519", "rustcrypto", "x25519-dalek", "validate", 156.0, 150.0, 160.0),
        row("X25519", "aws-lc", "default", "validate", 0.0, 0.0, 3.0),
        row("X25519", "openssl", "default", "validate", 210.0, 200.0, 220.0),
    ];
    let f = fastest(&rows);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].winner.label(), "aws-lc/default");
    assert!(f[0].tied.is_empty());
    assert_eq!(f[0].runner_up.as_ref().unwrap().label(), "rustcrypto/x25519-dalek");
    assert_eq!(f[0].ratio(), None, "no ratio over 0 cycles");
    let a = answers(&run_of("r", rows.clone()), &[], Against::Nothing);
    let text = flat(&terminal(&a));
    assert!(
        text.contains("validate aws-lc/default (below the clock's resolution; then rustcrypto/x25519-dalek)"),
        "{text}"
    );
    assert!(!text.contains("inf"), "{text}");
    let h = html(&a);
    assert!(
        h.contains("<td>rustcrypto/x25519-dalek</td><td>winner below the clock's resolution</td>"),
        "{h}"
    );
    assert!(!h.contains("inf"), "{h}");
}

/// The rows of the tie test, for its report half.
fn rows_again() -> Vec<ResultRow> {
    vec![
        row("ML-KEM-768", "liboqs", "dispatch", "encaps", 1000.0, 950.0, 1050.0),
        row("ML-KEM-768", "pqclean", "avx2", "encaps", 1030.0, 990.0, 1080.0),
        row("ML-KEM-768", "pqclean", "clean", "encaps", 2000.0, 1900.0, 2100.0),
    ]
}

#[test]
fn failed_gate_subjects_never_win_or_count() {
    let mut cheat = tight("ML-KEM-768", "pqclean", "avx2", "keypair", 10.0);
    cheat.gate = GateStatus::Fail;
    let mut cheat_enc = tight("ML-KEM-768", "pqclean", "avx2", "encaps", 10.0);
    cheat_enc.gate = GateStatus::Fail;
    let rows = vec![
        tight("ML-KEM-768", "liboqs", "dispatch", "keypair", 1000.0),
        tight("ML-KEM-768", "pqclean", "clean", "keypair", 3000.0),
        cheat,
        tight("ML-KEM-768", "liboqs", "dispatch", "encaps", 1000.0),
        cheat_enc,
    ];
    let f = fastest(&rows);
    assert_eq!(f.len(), 1, "encaps has one gated implementation: nothing to rank");
    assert_eq!(f[0].winner.label(), "liboqs/dispatch");
    assert!(f[0].tied.is_empty() && f[0].runner_up.as_ref().unwrap().label() == "pqclean/clean");
    let g = gains(&rows);
    assert!(g.iter().all(|g| g.optimised != "pqclean/avx2"), "{g:?}");
    let a = answers(&run_of("r", rows), &[], Against::Nothing);
    assert!(a.costs.is_empty(), "no gated subject has all three KEM operations");
    assert_eq!(a.measured_subjects, 2);
}

#[test]
fn a_signatures_cost_is_one_sign_and_one_verify_against_key_and_signature() {
    let rows = vec![
        tight("ML-KEM-768", "pqclean", "avx2", "keypair", 1000.0),
        tight("ML-KEM-768", "pqclean", "avx2", "encaps", 1200.0),
        tight("ML-KEM-768", "pqclean", "avx2", "decaps", 1300.0),
        tight("ML-DSA-44", "liboqs", "dispatch", "keypair", 50_000.0),
        tight("ML-DSA-44", "liboqs", "dispatch", "sign:59", 110_000.0),
        tight("ML-DSA-44", "liboqs", "dispatch", "verify:59", 50_000.0),
        // A signature measured only at other lengths (`--lengths`) has no point.
        tight("ML-DSA-44", "pqclean", "clean", "sign:32", 500_000.0),
        tight("ML-DSA-44", "pqclean", "clean", "verify:32", 190_000.0),
    ];
    let run = run_of("r", rows);
    let points = tradeoff_points(&run);
    assert_eq!(points.len(), 2, "{points:?}");
    let sig = points.iter().find(|p| p.family == "sig").unwrap();
    assert_eq!(sig.cycles, 160_000.0, "keypair is not part of it");
    assert_eq!(sig.bytes, 1312 + 2420);
    let a = answers(&run, &[], Against::Nothing);
    assert_eq!(a.costs[0].family, "kem", "KEMs first, then signatures");
    assert_eq!(a.costs[1].family, "sig");
    let text = flat(&terminal(&a));
    assert!(text.contains("signature: sign + verify"), "{text}");
}

#[test]
fn kem_cost_sums_its_operations_against_key_and_ciphertext() {
    let mut rows = Vec::new();
    for (imp, scale) in [("avx2", 1.0), ("clean", 3.0)] {
        for (op, m) in [("keypair", 1000.0), ("encaps", 1200.0), ("decaps", 1300.0)] {
            rows.push(tight("ML-KEM-768", "pqclean", imp, op, m * scale));
        }
    }
    let run = run_of("r", rows);
    let points = tradeoff_points(&run);
    assert_eq!(points.len(), 2, "one point per implementation");
    assert_eq!(points[0].cycles, 3500.0);
    assert_eq!(points[0].bytes, 1184 + 1088);
    assert_eq!(points[0].nist_level, Some(3));
    assert_eq!(points[1].cycles, 10500.0);
    let ct = vec![("ML-KEM-768/pqclean/clean".to_string(), "no leak found".to_string())];
    let a = answers(&run, &ct, Against::Nothing);
    assert_eq!(
        a.ct[0].exchange_cycles,
        Some(10500.0),
        "the audited subject's own exchange"
    );
    assert_eq!(a.costs.len(), 1, "the answer keeps the fastest per algorithm");
    assert_eq!(a.costs[0].implementation, "avx2");
    let text = terminal(&a);
    assert!(
        text.contains("3,500") && text.contains("2,272") && text.contains("level 3"),
        "{text}"
    );
}

#[test]
fn key_exchange_costs_keypair_and_exchange_on_both_sides() {
    let rows = vec![
        tight("X25519", "openssl", "default", "keypair", 100.0),
        tight("X25519", "openssl", "default", "derive", 50.0),
        tight("X25519", "openssl", "default", "validate", 10.0),
        tight("X25519", "openssl", "default", "exchange", 150.0),
        tight("ML-KEM-768", "pqclean", "avx2", "keypair", 1000.0),
        tight("ML-KEM-768", "pqclean", "avx2", "encaps", 1000.0),
        tight("ML-KEM-768", "pqclean", "avx2", "decaps", 1000.0),
    ];
    let a = answers(&run_of("r", rows), &[], Against::Nothing);
    let x = a.costs.iter().find(|p| p.algorithm == "X25519").unwrap();
    assert_eq!(
        x.cycles, 500.0,
        "(keypair + exchange) × 2; derive and validate are parts of exchange"
    );
    assert_eq!(x.bytes, 64, "a public key each way");
    assert_eq!(x.classical_bits, Some(128));
    assert_eq!(a.costs[0].family, "kem", "KEMs first, then key exchanges");
}

#[test]
fn a_speedup_whose_interval_holds_one_is_no_gain() {
    let rows = vec![
        row("ML-KEM-768", "pqclean", "clean", "keypair", 3000.0, 2950.0, 3050.0),
        row("ML-KEM-768", "pqclean", "clean", "encaps", 1000.0, 900.0, 1100.0),
        row("ML-KEM-768", "pqclean", "avx2", "keypair", 1000.0, 990.0, 1010.0),
        row("ML-KEM-768", "pqclean", "avx2", "encaps", 950.0, 900.0, 1000.0),
        row("ML-KEM-768", "liboqs", "dispatch", "keypair", 600.0, 590.0, 610.0),
    ];
    let g = gains(&rows);
    assert_eq!(g.len(), 3, "{g:?}");
    let kp = g
        .iter()
        .find(|g| g.optimised == "pqclean/avx2" && g.operation == "keypair")
        .unwrap();
    assert_eq!(kp.portable, "pqclean/clean");
    assert!((kp.speedup - 3.0).abs() < 1e-9);
    assert!((kp.low - 2950.0 / 1010.0).abs() < 1e-9 && (kp.high - 3050.0 / 990.0).abs() < 1e-9);
    assert!(!kp.no_gain());
    let enc = g.iter().find(|g| g.operation == "encaps").unwrap();
    assert!((enc.low - 0.9).abs() < 1e-9 && (enc.high - 1100.0 / 900.0).abs() < 1e-9);
    assert!(enc.no_gain());
    let other = g.iter().find(|g| g.optimised == "liboqs/dispatch").unwrap();
    assert_eq!(
        other.portable, "pqclean/clean",
        "another provider's portable code when it has none"
    );
    let text = flat(&terminal(&answers(&run_of("r", rows), &[], Against::Nothing)));
    assert!(text.contains("encaps no gain [0.90, 1.22]"), "{text}");
    assert!(text.contains("keypair 3.0× [2.92, 3.08]"), "{text}");
}

#[test]
fn builds_are_compared_with_the_portable_build_of_the_same_flags() {
    let rows = vec![
        tight("ML-KEM-768", "build", "clean-gcc12-O0", "keypair", 9000.0),
        tight("ML-KEM-768", "build", "clean-gcc12-O3", "keypair", 3000.0),
        tight("ML-KEM-768", "build", "avx2-gcc12-O3", "keypair", 1000.0),
    ];
    let g = gains(&rows);
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(g[0].portable, "build/clean-gcc12-O3");
}

#[test]
fn constant_time_verdicts_beside_speed_or_the_command_to_run() {
    let rows = vec![
        tight("ML-KEM-768", "liboqs", "dispatch", "keypair", 1000.0),
        tight("ML-KEM-768", "liboqs", "dispatch", "encaps", 1400.0),
        tight("ML-KEM-768", "pqclean", "avx2", "keypair", 2000.0),
        tight("ML-KEM-768", "pqclean", "avx2", "encaps", 1200.0),
    ];
    let run = run_of("r", rows);
    let none = answers(&run, &[], Against::Nothing);
    let text = flat(&terminal(&none));
    assert!(
        text.contains("none of the 2 subjects measured here has been audited: `cryptoscope ct --alg ML-KEM-768`"),
        "{text}"
    );
    let ct = vec![
        ("ML-KEM-768/liboqs/dispatch".to_string(), "no leak found".to_string()),
        ("ML-KEM-768/other/gone".to_string(), "leak (memcheck)".to_string()),
    ];
    let a = answers(&run, &ct, Against::Nothing);
    assert_eq!(a.ct.len(), 1, "only subjects measured here");
    assert_eq!(a.ct[0].fastest_op, Some(("keypair".to_string(), 500.0)));
    assert_eq!(a.ct[0].wins, vec!["keypair".to_string()]);
    assert_eq!(a.ct[0].exchange_cycles, None, "no decaps measured: no full exchange");
    let text = flat(&terminal(&a));
    assert!(
        text.contains("ML-KEM-768/liboqs/dispatch: no leak found; fastest op keypair 500 ns; fastest here at keypair"),
        "{text}"
    );
}

#[test]
fn published_figures_show_the_most_different_and_the_count() {
    let rows = vec![
        tight("X25519", "openssl", "default", "derive", 100_000.0),
        tight("X25519", "awslc", "default", "derive", 90_000.0),
        tight("ML-KEM-768", "pqclean", "avx2", "encaps", 50_000.0),
    ];
    let p = published::parse(
        r#"{"kem":[{"algorithm":"ML-KEM-768","implementation":"avx2","operation":"encaps","cycles":49000,"cpu":"C","source":"S"}],
            "kex":[{"algorithm":"X25519","implementation":"lib25519","operation":"shared secret","cycles":45000,"cpu":"Skylake","source":"T"}]}"#,
    )
    .unwrap();
    let a = answers(&run_of("r", rows), &[], Against::Published(&p));
    let Some(Versus::Published { matched, lines, .. }) = &a.versus else {
        panic!("{:?}", a.versus)
    };
    assert_eq!(*matched, 2);
    assert_eq!(lines[0].algorithm, "X25519", "the farthest from parity first");
    assert_eq!(lines[0].ours, "awslc/default", "our fastest matching implementation");
    assert!((lines[0].ratio - 2.0).abs() < 1e-9);
    assert_eq!(lines[0].operation, "derive");
    let text = flat(&terminal(&a));
    assert!(text.contains("2 published figures match this run;"), "{text}");
    assert!(text.contains("cryptoscope compare --published r"), "{text}");
}

/// An emulated run is never set against published figures: section 5 says why instead.
#[test]
fn an_emulated_run_is_not_compared_with_published_figures() {
    let rows = vec![tight("X25519", "openssl", "default", "derive", 100_000.0)];
    let p = published::parse(
        r#"{"kex":[{"algorithm":"X25519","implementation":"lib25519","operation":"shared secret","cycles":45000,"source":"T"}]}"#,
    )
    .unwrap();
    let mut run = run_of("r", rows);
    assert!(matches!(
        answers(&run, &[], Against::Published(&p)).versus,
        Some(Versus::Published { .. })
    ));
    run.environment.emulated = Some("qemu-aarch64 running aarch64 code on a x86_64 kernel".into());
    let a = answers(&run, &[], Against::Published(&p));
    assert!(
        matches!(&a.versus, Some(Versus::Withheld(w)) if w.contains("qemu-aarch64")),
        "{:?}",
        a.versus
    );
    let text = flat(&terminal(&a));
    assert!(
        text.contains("— not compared with published figures: qemu-aarch64"),
        "{text}"
    );
    assert!(crate::html::versus::section(&run, &p).contains("not compared with published figures"));
}

#[test]
fn published_figures_of_our_class_of_processor_come_first() {
    let rows = vec![
        tight("ML-KEM-768", "pqclean", "avx2", "encaps", 50_000.0),
        tight("X25519", "openssl", "default", "derive", 100_000.0),
    ];
    let p = published::parse(
        r#"{"kem":[{"algorithm":"ML-KEM-768","implementation":"pqm4 clean","operation":"encaps","cycles":1000000,
                     "cpu":"ARM Cortex-M4","source":"S"}],
            "kex":[{"algorithm":"X25519","implementation":"lib25519","operation":"shared secret","cycles":90000,
                    "cpu":"Intel Skylake","source":"T"}]}"#,
    )
    .unwrap();
    let mut run = run_of("r", rows);
    run.environment.cpu_model = Some("Intel(R) Xeon(R) Processor".into());
    let a = answers(&run, &[], Against::Published(&p));
    let Some(Versus::Published {
        matched,
        comparable,
        lines,
        median_ratio,
        ..
    }) = &a.versus
    else {
        panic!("{:?}", a.versus)
    };
    assert_eq!((*matched, *comparable), (2, 1));
    assert_eq!(
        lines[0].algorithm, "X25519",
        "the x86 figure first, however far the other is"
    );
    assert!(lines[0].comparable && !lines[1].comparable);
    assert!(
        (median_ratio - 100.0 / 90.0).abs() < 1e-9,
        "the median over comparable figures only"
    );
    let text = flat(&terminal(&a));
    assert!(text.contains("1 of them measured on x86 processors as ours"), "{text}");
}

/// 200 samples around `level` nanoseconds.
fn samples(level: f64) -> Vec<f64> {
    (0..200).map(|i| level * (1.0 + 0.002 * f64::from(i % 7))).collect()
}

#[test]
fn a_previous_run_gives_counts_of_verdicts() {
    let with = |id: &str, scale: f64| {
        let mut a = tight("X25519", "openssl", "default", "keypair", 1000.0);
        a.raw_ns = samples(1000.0 * scale);
        let mut b = tight("X25519", "openssl", "default", "exchange", 1000.0);
        b.raw_ns = samples(1000.0);
        run_of(id, vec![a, b])
    };
    let prev = with("old", 1.0);
    let a = answers(&with("new", 1.5), &[], Against::Run(&prev));
    match &a.versus {
        Some(Versus::Run {
            run_id,
            faster,
            slower,
            unchanged,
            missing,
            ..
        }) => assert_eq!(
            (run_id.as_str(), *faster, *slower, *unchanged, *missing),
            ("old", 0, 1, 1, 0)
        ),
        v => panic!("{v:?}"),
    }
    assert!(flat(&terminal(&a)).contains("Against run old: 0 faster, 1 slower, 1 no significant change"));
    let nothing = terminal(&answers(&prev, &[], Against::Nothing));
    assert!(
        nothing.contains("5. Against published figures or a previous run:\n   — no published"),
        "{nothing}"
    );
}

#[test]
fn the_machine_said_once_with_the_time_off_the_fast_level() {
    let mut shifted = tight("X25519", "openssl", "default", "keypair", 1000.0);
    shifted.raw_ns = samples(1000.0);
    shifted.raw_ns.extend(samples(1500.0));
    let mut steady = tight("X25519", "openssl", "default", "exchange", 1000.0);
    steady.raw_ns = samples(1000.0);
    let rows = vec![shifted, steady];
    let m = machine(&rows).unwrap();
    assert_eq!((m.shifted, m.examined), (1, 2));
    assert!((m.largest - 1.5).abs() < 0.02, "{}", m.largest);
    assert_eq!(m.worst.len(), 1);
    assert!((m.worst[0].fraction - 0.5).abs() < 0.03, "{}", m.worst[0].fraction);
    let text = machine_terminal(&m);
    assert!(
        text.starts_with("Unstable machine: 1 of 2 operations changed speed by 10% or more"),
        "{text}"
    );
    assert!(text.contains("X25519     openssl/default  keypair"), "{text}");
    assert!(machine(&rows[1..]).is_none(), "a steady machine says nothing");
}

#[test]
fn html_has_a_section_a_div_per_question_and_sortable_tables() {
    let rows = vec![
        tight("ML-KEM-768", "liboqs", "dispatch", "keypair", 1000.0),
        tight("ML-KEM-768", "pqclean", "clean", "keypair", 3000.0),
    ];
    let ct = vec![(
        "ML-KEM-768/liboqs/dispatch".to_string(),
        "leak <branch> & more".to_string(),
    )];
    let a = answers(&run_of("r", rows), &ct, Against::Nothing);
    let h = html(&a);
    assert!(h.starts_with("<section id=\"answers\">\n<h2>Answers</h2>"), "{h}");
    for n in 1..=5 {
        assert!(h.contains(&format!("<div class=\"answer\" id=\"answer-{n}\">")), "{h}");
    }
    assert_eq!(
        h.matches("<table").count(),
        h.matches("<table class=\"sortable\">").count()
    );
    assert!(
        h.contains("leak &lt;branch&gt; &amp; more") && !h.contains("<branch>"),
        "{h}"
    );
    assert!(
        h.contains("class=\"none\""),
        "questions with nothing to say say why: {h}"
    );
}

#[test]
fn terminal_lines_fit_78_columns() {
    let mut rows = Vec::new();
    for (p, i, s) in [
        ("liboqs", "dispatch", 1.0),
        ("pqclean", "avx2", 1.4),
        ("pqclean", "clean", 3.0),
        ("awslc", "default", 1.2),
    ] {
        for op in ["keypair", "encaps", "decaps"] {
            rows.push(tight("ML-KEM-768", p, i, op, 10_000.0 * s));
        }
    }
    let text = terminal(&answers(&run_of("r", rows), &[], Against::Nothing));
    assert!(text.starts_with("Answers\n1. Fastest here"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 78, "{line:?} in\n{text}");
    }
}
