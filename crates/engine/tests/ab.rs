//! `ab` refusing what it cannot mean, in-process on the recording's catalogue: every case
//! is an input error of one line, before anything is measured or written.

mod common;

use common::{cassette, parse, replaying};
use cryptoscope_engine::ab::{cmd_ab, AbArgs};
use cryptoscope_engine::ui::UsageError;

#[test]
fn bad_input_is_one_line_and_nothing_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("x.json");
    let db = dir.path().join("r.db");
    let kem = [
        "--alg",
        "ML-KEM-768",
        "ML-KEM-768/rustcrypto/default",
        "ML-KEM-768/pqclean/clean",
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &["X25519/rustcrypto/default", "SHA-256/rustcrypto/default"],
            "must be subjects of one algorithm",
        ),
        (
            &["X25519/rustcrypto/default", "X25519/nobody/default"],
            "unknown subject",
        ),
        (&["rustcrypto", "pqclean"], "or --alg"),
        (&[&kem[..], &["--op", "derive"]].concat(), "has no operation `derive`"),
        (&[&kem[..], &["--time", "0"]].concat(), "--time"),
        (&[&kem[..], &["--threshold", "2"]].concat(), "--threshold"),
        (&[&kem[..], &["--cpu", "4096"]].concat(), "--cpu 4096"),
    ];
    for (args, says) in cases {
        let mut words: Vec<&str> = args.to_vec();
        let (json_s, db_s) = (json.display().to_string(), db.display().to_string());
        words.extend(["--json", &json_s, "--db", &db_s, "--no-instructions"]);
        let a: AbArgs = parse(&words);
        let mut typed = vec!["ab"];
        typed.extend(&words);
        let (ctx, out) = replaying(&cassette(), None, &typed);
        let e = cmd_ab(&a, &ctx).expect_err(&format!("{args:?} refused"));
        assert!(e.is::<UsageError>(), "{args:?}: {e:#}");
        let text = e.to_string();
        assert!(text.contains(says), "{args:?}: {text}");
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        assert!(!out.stdout().contains("Stored as run"), "{args:?}: {}", out.stdout());
    }
    assert!(!json.exists(), "nothing written");
}
