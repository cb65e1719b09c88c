//! What a command says when the selection, a flag's value or an output path cannot be
//! used, in-process on the recording's catalogue: one line naming the problem (a "did you
//! mean" where a name is near one we know), before anything is gated, measured or stored.
//! That these are exit status 2 at the CLI is checked there (`cli/tests/cli.rs`).

use crate::common::{cassette, parse, reading, replaying};
use cryptoscope_engine::args::{CtArgs, GateArgs, ProfileArgs, RunArgs, SelectArgs};
use cryptoscope_engine::ct_cmd::cmd_ct;
use cryptoscope_engine::listing::{cmd_list, cmd_verify, list};
use cryptoscope_engine::preflight_cmd::cmd_preflight;
use cryptoscope_engine::profile::cmd_profile;
use cryptoscope_engine::run::cmd_run;
use cryptoscope_engine::ui::UsageError;

/// The one-line input error a result carries.
fn refused(r: anyhow::Result<i32>, what: &str) -> String {
    let e = r.expect_err(what);
    assert!(e.is::<UsageError>(), "{what}: {e:#}");
    let text = e.to_string();
    assert_eq!(text.lines().count(), 1, "{what}: {text}");
    text
}

/// `run WORDS` replaying the recording: refused, and nothing started or stored.
fn run_refused(words: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db").display().to_string();
    let mut all = words.to_vec();
    all.extend(["--db", &db]);
    let mut typed = vec!["run"];
    typed.extend(&all);
    let (ctx, _) = replaying(&cassette(), None, &typed);
    let a: RunArgs = parse(&all);
    let text = refused(cmd_run(&a, &ctx), &format!("{words:?}"));
    assert_eq!(ctx.workers.started(), 0);
    text
}

/// `list WORDS` on the recording's catalogue.
fn list_refused(words: &[&str]) -> String {
    let mut typed = vec!["list"];
    typed.extend(words);
    let (ctx, _) = replaying(&cassette(), None, &typed);
    let sel: SelectArgs = parse(words);
    refused(cmd_list(&ctx, &sel, None), &format!("{words:?}"))
}

#[test]
fn names_near_ours_get_a_did_you_mean() {
    let (ctx, _) = replaying(&cassette(), None, &["verify", "--alg", "ML-KEM-786"]);
    let sel: SelectArgs = parse(&["--alg", "ML-KEM-786"]);
    let gate: GateArgs = parse(&[]);
    let e = refused(cmd_verify(&sel, &gate, &ctx), "ML-KEM-786");
    assert!(e.contains("did you mean `ML-KEM-768`"), "{e}");
    assert!(run_refused(&["--provider", "libqos", "--quick"]).contains("did you mean `liboqs`"));
}

#[test]
fn a_selection_that_matches_nothing_says_why() {
    // An algorithm outside the suites named: the suite is blamed, not the providers.
    assert!(list_refused(&["--suite", "hash,kem", "--alg", "X25519"]).contains("X25519 is in suite kex"));
    // An algorithm its provider offers, filtered out by --impl: the message names --impl
    // and the implementations there are.
    let e = list_refused(&[
        "--alg",
        "ML-KEM-768,X25519",
        "--provider",
        "pqclean,rustcrypto",
        "--impl",
        "avx2",
    ]);
    assert!(
        e.contains("no implementation of X25519 matches --impl avx2") && e.contains("rustcrypto/default"),
        "{e}"
    );
    // No provider of the ones named offers it.
    let e = list_refused(&["--alg", "X25519", "--provider", "liboqs"]);
    assert!(e.contains("X25519"), "{e}");
    assert!(run_refused(&["--suite", "hashes"]).contains("hashes"));
}

#[test]
fn flags_out_of_range_and_unwritable_paths_are_refused_before_measuring() {
    assert!(run_refused(&["--quick", "--samples", "0"]).contains("--samples"));
    assert!(run_refused(&["--quick", "--cpu", "4096"]).contains("4096"));
    assert!(run_refused(&["--quick", "--rounds", "0"]).contains("--rounds"));
    let e = run_refused(&["--quick", "--alg", "X25519", "--json", "/proc/cryptoscope/nope.json"]);
    assert!(e.contains("cannot"), "{e}");
}

#[test]
fn preflight_reports_the_machine_and_refuses_a_cpu_it_lacks() {
    let (ctx, out) = reading();
    assert_eq!(
        cmd_preflight(&ctx, Some(0), Some(std::path::Path::new("-"))).unwrap(),
        0
    );
    let p: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(p["cpu"], 0);
    for k in [
        "governor",
        "boost",
        "smt_siblings",
        "busy_pct",
        "steal_pct",
        "perf_event_paranoid",
        "pmu",
        "warnings",
    ] {
        assert!(p.get(k).is_some(), "{k}: {p}");
    }
    assert!(p["look_ms"].as_f64().unwrap() >= 999.0, "{p}");
    let (ctx, out) = reading();
    assert_eq!(cmd_preflight(&ctx, None, None).unwrap(), 0);
    assert!(out.stdout().contains("governor: ") && out.stdout().contains("perf_event_paranoid: "));
    let (ctx, _) = reading();
    refused(cmd_preflight(&ctx, Some(4096), None), "--cpu 4096");
}

/// What were `cli/tests/ct.rs`'s and `cli/tests/profile.rs`'s bad-input cases about their
/// messages (their exit status 2 stays there): refused before valgrind is looked for.
#[test]
fn audit_and_profile_settings_out_of_range_are_refused() {
    for (words, needle) in [
        (&["--samples", "10"][..], "--samples must be at least 2000"),
        (&["--alg", "X25519", "--time-budget", "0"], "--time-budget"),
    ] {
        let (ctx, _) = replaying(&cassette(), None, &[&["ct"][..], words].concat());
        let a: CtArgs = parse(words);
        let e = refused(cmd_ct(&a, &ctx), &format!("ct {words:?}"));
        assert!(e.contains(needle), "{e}");
        assert_eq!(ctx.workers.started(), 0);
    }
    for (words, needle) in [
        (
            &["--alg", "ML-KEM-768", "--calls", "0"][..],
            "--calls must be at least 1",
        ),
        (&["--alg", "ML-KEM-768", "--op", "sign"], "sign"),
        (&["--alg", "X25519", "--min-share", "150"], "--min-share"),
    ] {
        let (ctx, _) = replaying(&cassette(), None, &[&["profile"][..], words].concat());
        let a: ProfileArgs = parse(words);
        let e = refused(cmd_profile(&a, &ctx), &format!("profile {words:?}"));
        assert!(e.contains(needle), "{e}");
        assert_eq!(ctx.workers.started(), 0);
    }
}

/// `list` as a value: what a selection picks from the recording's catalogue (its two
/// workers' subjects), in the catalogue's order, and what it prints.
#[test]
fn list_picks_what_run_would_measure() {
    let words = ["--alg", "X25519,ML-KEM-768"];
    let (ctx, out) = replaying(&cassette(), None, &[&["list"][..], &words[..]].concat());
    let listed = list(&ctx, &parse(&words)).unwrap();
    let mut ids: Vec<&str> = listed.picked.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "ML-KEM-768/pqclean/avx2",
            "ML-KEM-768/pqclean/clean",
            "ML-KEM-768/rustcrypto/default",
            "X25519/rustcrypto/default"
        ]
    );
    assert!(!listed.default);
    assert!(listed.everything > listed.picked.len());
    assert_eq!(out.stdout(), "", "list() writes nothing");
    let text = listed.render();
    assert!(text.contains("4 subjects; sizes in bytes"), "{text}");
    assert!(!text.contains("what `cryptoscope run` measures by default"), "{text}");
}
