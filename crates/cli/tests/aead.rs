//! The AEAD suite end to end: AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 from AWS-LC,
//! RustCrypto and OpenSSL are listed, pass their gate (Wycheproof known answers, round
//! trips, forgeries refused), and `run --suite aead` measures seal and open at every
//! message length, with the cycles-per-byte table in the terminal and the HTML report.

mod common;

use common::*;
use serde_json::Value;

const AEADS: &[&str] = &["AES-128-GCM", "AES-256-GCM", "ChaCha20-Poly1305"];
const PROVIDERS: &[&str] = &["aws-lc", "rustcrypto", "openssl"];

#[test]
fn the_aead_suite_is_listed_gated_and_measured() {
    let o = cryptoscope()
        .args(["list", "--suite", "aead", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let listed: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    for alg in AEADS {
        for p in PROVIDERS {
            let d = listed
                .iter()
                .find(|d| d["algorithm"] == *alg && d["provider"] == *p)
                .unwrap_or_else(|| panic!("{alg} from {p} is not listed"));
            assert_eq!(d["family"], "aead");
            // SP 800-38D and RFC 8439: 96-bit nonces, 128-bit tags; keys of the name's size.
            assert_eq!(d["aead"]["nonce_bytes"], 12, "{d}");
            assert_eq!(d["aead"]["tag_bytes"], 16, "{d}");
            let key = if *alg == "AES-128-GCM" { 16 } else { 32 };
            assert_eq!(d["aead"]["key_bytes"], key, "{d}");
        }
    }
    // `list --all` shows the whole catalogue, AEADs included.
    let o = cryptoscope().args(["list", "--json", "--all"]).output().unwrap();
    let all: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        all.iter().filter(|d| d["family"] == "aead").count(),
        AEADS.len() * PROVIDERS.len()
    );

    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("aead.json");
    let o = cryptoscope()
        .args(["run", "--suite", "aead", "--quick", "--quiet", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let out = stdout_of(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr_of(&o));
    assert!(out.contains("AEADs (cycles per byte by message length)"), "{out}");
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = run["results"].as_array().unwrap();
    for alg in AEADS {
        for p in PROVIDERS {
            for op in ["seal", "open"] {
                for n in [16, 64, 576, 1536, 16384] {
                    let name = format!("{op}:{n}");
                    let r = results
                        .iter()
                        .find(|r| r["algorithm"] == *alg && r["provider"] == *p && r["operation"] == name)
                        .unwrap_or_else(|| panic!("{alg} {p} {name} not measured"));
                    assert_eq!(r["gate"], "pass", "{r}");
                    assert!(r["median_ns"].as_f64().unwrap() > 0.0, "{r}");
                }
            }
        }
    }
    let html = std::fs::read_to_string(json.with_extension("html")).unwrap();
    assert!(html.contains("<h3>AEADs</h3>"), "the HTML report has the AEAD table");
}
