//! `cryptoscope tls --peer openssl-X.Y`: our OpenSSL server and client linked to OpenSSL
//! 3.5 and 4.0 (built from vendored sources) complete TLS 1.3 handshakes with X25519MLKEM768 and
//! ML-KEM-768 key shares and ML-DSA certificates, against their own clients and against
//! rustls; the bytes on the wire differ by exactly the published sizes. An ML-KEM-768
//! encapsulation key is 1,184 bytes and its ciphertext 1,088 (FIPS 203, Table 3), an
//! X25519 share 32 (RFC 7748), and X25519MLKEM768 concatenates the two
//! (draft-ietf-tls-ecdhe-mlkem). Ed25519 certificates keep every handshake the same size.
//! `--peer openssl-3.0` is the same code on the system's libssl; a version not here is a
//! usage error.

mod common;

use common::*;
use serde_json::Value;

fn tls(args: &[&str]) -> Option<Vec<Value>> {
    for bin in ["cryptoscope-tls-openssl35", "cryptoscope-tls-openssl40"] {
        if !worker("openssl").with_file_name(bin).is_file() {
            cryptoscope_testkit::needs_setup(bin);
            return None;
        }
    }
    let d = tempfile::tempdir().unwrap();
    let (db, json) = (d.path().join("r.db"), d.path().join("tls.json"));
    let out = cryptoscope()
        .args(["tls", "--quick", "--quiet", "--clients", "2", "--db"])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .args(args)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stdout_of(&out), stderr_of(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    Some(v["rows"].as_array().unwrap().clone())
}

fn row<'a>(rows: &'a [Value], group: &str, cert: &str) -> &'a Value {
    let r = rows
        .iter()
        .find(|r| r["group"] == group && r["cert"] == cert)
        .unwrap_or_else(|| panic!("no row for {group} {cert}: {rows:?}"));
    assert_eq!(r["status"], "ok", "{r}");
    assert!(r["measurement"]["handshakes"].as_u64().unwrap() > 0, "{r}");
    r
}

/// The median bytes of one direction; with Ed25519 every handshake has the same size.
fn bytes(r: &Value, dir: &str) -> i64 {
    let m = &r["measurement"][dir];
    if r["cert"] == "ed25519" {
        assert_eq!(m["min"], m["max"], "{r}");
    }
    m["p50"].as_f64().unwrap() as i64
}

#[test]
fn openssl_35_serves_post_quantum_groups_to_its_own_clients_and_to_rustls() {
    let _serial = serial(); // binds ports
    let groups = ["--peer", "openssl-3.5", "--group", "X25519,X25519MLKEM768,MLKEM768"];
    let Some(own) = tls(&[&groups[..], &["--cert", "ed25519,mldsa-65"]].concat()) else {
        return;
    };
    let (x, h, k) = (
        row(&own, "X25519", "ed25519"),
        row(&own, "X25519MLKEM768", "ed25519"),
        row(&own, "MLKEM768", "ed25519"),
    );
    for r in [x, h, k] {
        assert_eq!(r["peer"], "openssl-3.5");
        assert_eq!(r["measurement"]["version"], "TLSv1.3", "{r}");
        let lib = r["measurement"]["client_library"].as_str().unwrap();
        assert!(lib.starts_with("OpenSSL 3.5."), "{lib}");
    }
    // The server's flight carries the ciphertext (and X25519's share in the hybrid).
    assert_eq!(
        bytes(h, "bytes_server_to_client") - bytes(x, "bytes_server_to_client"),
        1088
    );
    assert_eq!(
        bytes(k, "bytes_server_to_client") - bytes(x, "bytes_server_to_client"),
        1088 - 32
    );
    // OpenSSL pads a small ClientHello (RFC 7685), so compare the two large ones.
    assert_eq!(
        bytes(h, "bytes_client_to_server") - bytes(k, "bytes_client_to_server"),
        32
    );
    let m = row(&own, "X25519MLKEM768", "mldsa-65");
    assert_eq!(m["measurement"]["signature_scheme"], "ML_DSA_65", "{m}");

    let Some(rustls) = tls(&[&groups[..], &["--cert", "ed25519", "--client", "rustls"]].concat()) else {
        return;
    };
    let (x, h) = (
        row(&rustls, "X25519", "ed25519"),
        row(&rustls, "X25519MLKEM768", "ed25519"),
    );
    assert_eq!(h["peer"], "openssl-3.5 (rustls clients)");
    assert_eq!(h["measurement"]["client_library"], "rustls (aws-lc-rs)");
    assert_eq!(
        bytes(h, "bytes_client_to_server") - bytes(x, "bytes_client_to_server"),
        1184
    );
    assert_eq!(
        bytes(h, "bytes_server_to_client") - bytes(x, "bytes_server_to_client"),
        1088
    );
}

#[test]
fn openssl_40_serves_the_hybrid_group_to_its_own_clients() {
    let _serial = serial(); // binds ports
    let args = [
        "--peer",
        "openssl-4.0",
        "--group",
        "X25519,X25519MLKEM768",
        "--cert",
        "ed25519",
    ];
    let Some(rows) = tls(&args) else { return };
    let (x, h) = (row(&rows, "X25519", "ed25519"), row(&rows, "X25519MLKEM768", "ed25519"));
    for r in [x, h] {
        assert_eq!(r["peer"], "openssl-4.0");
        let lib = r["measurement"]["client_library"].as_str().unwrap();
        assert!(lib.starts_with("OpenSSL 4.0."), "{lib}");
    }
    assert_eq!(
        bytes(h, "bytes_server_to_client") - bytes(x, "bytes_server_to_client"),
        1088
    );
}

#[test]
fn the_system_version_is_a_peer_too_and_a_missing_one_is_a_usage_error() {
    let _serial = serial(); // binds ports
    let v = cryptoscope()
        .args(["list", "--quiet", "--provider", "openssl", "--alg", "X25519"])
        .output()
        .unwrap();
    let text = stdout_of(&v);
    let Some(system) = text
        .split_whitespace()
        .skip_while(|w| *w != "OpenSSL")
        .nth(1)
        .map(|v| v.split('.').take(2).collect::<Vec<_>>().join("."))
    else {
        panic!("no system OpenSSL version in {text}");
    };
    let peer = format!("openssl-{system}");
    let rows = tls(&["--peer", &peer, "--group", "X25519", "--cert", "ed25519"]);
    let Some(rows) = rows else { return };
    let r = row(&rows, "X25519", "ed25519");
    let lib = r["measurement"]["client_library"].as_str().unwrap();
    assert!(lib.starts_with(&format!("OpenSSL {system}.")), "{lib}");

    let out = cryptoscope()
        .args(["tls", "--quick", "--peer", "openssl-9.9", "--group", "X25519"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("no OpenSSL 9.9 here") && err.contains("openssl-3.5"),
        "{err}"
    );
    // Post-quantum groups and ML-DSA need 3.5 or later.
    if system.as_str() < "3.5" {
        let out = cryptoscope()
            .args(["tls", "--quick", "--peer", &peer, "--group", "X25519MLKEM768"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
        assert!(stderr_of(&out).contains("unknown group `X25519MLKEM768`"));
    }
}
