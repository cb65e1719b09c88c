//! The HTML report as a person sees it: rendered by headless Chromium (Debian's package,
//! installed by scripts/setup.sh), every chart present with bars, failed subjects listed
//! but never drawn, and a screenshot kept as an artifact of the test run
//! (`target/tmp/report-screenshot.png`).

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn headless(browser: &str, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    // Flags from the environment notes: no sandbox as root, no GPU, no background traffic.
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn report_renders_in_a_browser_with_every_chart() {
    let Some(browser) = chromium() else {
        cryptoscope_testkit::needs_setup("chromium");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let json = tmp.path().join("run.json");
    let o = cryptoscope()
        .args([
            "run",
            "--quick",
            "--quiet",
            "--alg",
            "ML-KEM-768",
            "--alg",
            "X25519",
            "--memory",
            "--db",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let html = tmp.path().join("run.html");
    assert!(stdout.contains(&format!("Report:  {}", html.display())), "{stdout}");
    // `report` from the store writes the same kind of file.
    let out = tmp.path().join("from-store.html");
    let o = cryptoscope()
        .args(["report", "latest", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));

    let dom = headless(browser, &tmp.path().join("profile"))
        .arg("--dump-dom")
        .arg(format!("file://{}", out.display()))
        .output()
        .unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let dom = String::from_utf8_lossy(&dom.stdout);
    // One chart per (family, operation) plus sizes, each with bars.
    for id in [
        "kem-keypair",
        "kem-encaps",
        "kem-decaps",
        "kex-keypair",
        "kex-exchange",
        "sizes",
        "stack-kem-decaps",
        "stack-kex-exchange",
        "heap-kem-keypair",
        "heap-kex-exchange",
    ] {
        let start = dom
            .find(&format!("id=\"chart-0-{id}\""))
            .unwrap_or_else(|| panic!("chart {id} missing"));
        let chart = &dom[start..start + dom[start..].find("</svg>").unwrap()];
        assert!(chart.matches("class=\"bar\"").count() >= 2, "chart {id} has no bars");
    }
    assert!(
        dom.contains("no heap allocation: ML-KEM-768 · pqclean clean"),
        "subjects without heap use are listed"
    );
    // ML-KEM-768 from 5 providers/implementations x 3 ops + X25519 from 3 x 4 ops
    // (keypair, derive, validate, exchange).
    assert_eq!(
        dom.matches("<polyline").count(),
        27,
        "a sample trace per measured operation"
    );
    assert!(
        dom.contains("11 of 11 subjects passed") || dom.contains("8 of 8 subjects passed"),
        "gate summary"
    );

    let shot = tmp.path().join("shot.png");
    let o = headless(browser, &tmp.path().join("profile2"))
        .args(["--window-size=1280,2400"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", out.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let size = std::fs::metadata(&shot).unwrap().len();
    assert!(size > 50_000, "screenshot of {size} bytes looks empty");
    let artifact = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    std::fs::copy(&shot, &artifact).unwrap();
    eprintln!("screenshot: {}", artifact.display());
}

#[test]
fn failed_subjects_are_listed_not_drawn() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    // Corrupt one published digest so both NTRU-HRSS-701 implementations fail their gate.
    let v = tmp.path().join("vectors");
    vectors_with_wrong_digest(&v, "NTRU-HRSS-701");
    let o = cryptoscope()
        .args(["run", "--quick", "--quiet", "--alg", "NTRU-HRSS-701", "--vectors"])
        .arg(&v)
        .arg("--db")
        .arg(&db)
        .arg("--json")
        .arg(tmp.path().join("run.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let html = std::fs::read_to_string(tmp.path().join("run.html")).unwrap();
    assert!(
        html.contains("0 of 2 subjects passed"),
        "both implementations fail against the corrupted digest"
    );
    assert!(html.contains("KAT digest mismatch"));
    // Only the sizes chart has bars: NTRU-HRSS-701's public key and ciphertext.
    assert_eq!(html.matches("class=\"bar\"").count(), 2);
}
