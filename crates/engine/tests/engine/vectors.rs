//! `verify --vectors FILE` on files that cannot be read as what they claim, in-process:
//! malformed and unsupported files are input errors of one line naming the file and the
//! problem, before any subject is run (the context replays the recording's catalogue and
//! no worker is started). The files' runs on real workers are in
//! `crates/cli/tests/external_vectors.rs`.

use crate::common::{cassette, parse, replaying, vectors};
use cryptoscope_engine::args::{GateArgs, SelectArgs};
use cryptoscope_engine::ui::UsageError;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn wycheproof(name: &str) -> PathBuf {
    vectors().join("wycheproof").join(name)
}

/// `verify --vectors FILE ARGS` is refused with one line holding every one of `want`, and
/// nothing is written or run.
fn assert_usage_error(file: &Path, args: &[&str], want: &[&str]) {
    let file_s = file.display().to_string();
    let mut words = vec!["--vectors", file_s.as_str()];
    words.extend(args);
    let sel: SelectArgs = parse(args);
    let gate: GateArgs = parse(&["--vectors", &file_s]);
    let mut typed = vec!["verify"];
    typed.extend(&words);
    let (ctx, out) = replaying(&cassette(), None, &typed);
    let e = cryptoscope_engine::external::verify_file_mode(&sel, &gate, None, &ctx).expect_err("refused");
    assert!(e.is::<UsageError>(), "{e:#}");
    let text = format!("{e:#}");
    assert_eq!(text.lines().count(), 1, "{text}");
    for w in want {
        assert!(text.contains(w), "{w:?} not in {text}");
    }
    assert!(out.stdout().is_empty(), "{}", out.stdout());
    assert_eq!(ctx.workers.started(), 0);
}

#[test]
fn malformed_mlkem_files_are_one_line_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let enc = std::fs::read_to_string(wycheproof("mlkem_768_encaps_test.json")).unwrap();
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, &enc[..enc.len() / 3]).unwrap();
    assert_usage_error(&cut, &[], &["cut.json", "not valid JSON"]);
    let dec = std::fs::read_to_string(wycheproof("mlkem_768_semi_expanded_decaps_test.json")).unwrap();
    let other = d.path().join("other.json");
    std::fs::write(&other, dec.replacen("\"ML-KEM-768\"", "\"ML-KEM-640\"", 1)).unwrap();
    assert_usage_error(&other, &[], &["other.json", "`parameterSet` is `ML-KEM-640`"]);
    let gen = std::fs::read_to_string(wycheproof("mlkem_768_keygen_seed_test.json")).unwrap();
    let no_result = d.path().join("no_result.json");
    std::fs::write(
        &no_result,
        gen.replacen("\"result\": \"valid\"", "\"outcome\": \"valid\"", 1),
    )
    .unwrap();
    assert_usage_error(&no_result, &[], &["no_result.json", "tcId 1", "no `result`"]);
    let short_m = d.path().join("short_m.json");
    let at = enc.find("\"m\": \"").unwrap() + 6;
    std::fs::write(&short_m, format!("{}{}", &enc[..at], &enc[at + 2..])).unwrap();
    assert_usage_error(&short_m, &[], &["short_m.json", "`m` has 31 bytes, not 32"]);
}

#[test]
fn malformed_files_are_one_line_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let x = std::fs::read_to_string(wycheproof("x25519_test.json")).unwrap();
    let cut = d.path().join("truncated.json");
    std::fs::write(&cut, &x[..x.len() / 2]).unwrap();
    assert_usage_error(&cut, &[], &["truncated.json", "not valid JSON", "line"]);
    let badhex = d.path().join("badhex.json");
    let i = x.find("\"tcId\": 5,").expect("tcId 5");
    let j = i + x[i..].find("\"private\": \"").unwrap() + 12;
    std::fs::write(&badhex, format!("{}zz{}", &x[..j], &x[j + 2..])).unwrap();
    assert_usage_error(&badhex, &[], &["badhex.json", "tcId 5", "`private` is not hex"]);
    let missing = d.path().join("missing.json");
    let k = x.find("\"shared\": ").unwrap();
    let end = k + x[k..].find(",\n").unwrap() + 2;
    std::fs::write(&missing, format!("{}{}", &x[..k], &x[end..])).unwrap();
    assert_usage_error(&missing, &[], &["missing.json", "tcId 1", "no `shared`"]);
    let rsp = std::fs::read_to_string(vectors().join("hash/cavp/SHA256ShortMsg.rsp")).unwrap();
    let truncated = d.path().join("SHA256ShortMsg.rsp");
    let last_md = rsp.rfind("MD = ").unwrap();
    std::fs::write(&truncated, &rsp[..last_md]).unwrap();
    assert_usage_error(&truncated, &[], &["SHA256ShortMsg.rsp", "has no `MD`"]);
    let badmsg = d.path().join("SHA3_256ShortMsg.rsp");
    std::fs::write(&badmsg, rsp.replacen("Msg = d3", "Msg = x3", 1)).unwrap();
    assert_usage_error(&badmsg, &[], &["SHA3_256ShortMsg.rsp", "`Msg` is not hex", "line"]);
}

#[test]
fn unsupported_files_are_usage_errors_naming_what_is_supported() {
    let d = tempfile::tempdir().unwrap();
    let ccm = d.path().join("aes_ccm_test.json");
    std::fs::write(
        &ccm,
        r#"{"algorithm": "AES-CCM", "schema": "aead_test_schema_v1.json", "numberOfTests": 0, "testGroups": []}"#,
    )
    .unwrap();
    assert_usage_error(
        &ccm,
        &[],
        &[
            "AES-CCM",
            "only AES-GCM and CHACHA20-POLY1305",
            "xdh_comp_schema",
            "mlkem_test_schema",
        ],
    );
    // AES-GCM with only 192-bit keys (no catalogue AEAD).
    let gcm192 = d.path().join("aes_gcm_192.json");
    std::fs::write(
        &gcm192,
        r#"{"algorithm": "AES-GCM", "schema": "aead_test_schema_v1.json", "testGroups": [{"keySize": 192, "ivSize": 96, "tagSize": 128, "tests": [{"tcId": 1, "key": "000000000000000000000000000000000000000000000000", "iv": "000000000000000000000000", "aad": "", "msg": "", "ct": "", "tag": "00000000000000000000000000000000", "result": "valid", "flags": []}]}]}"#,
    )
    .unwrap();
    assert_usage_error(
        &gcm192,
        &[],
        &["aes_gcm_192.json", "no test with a key length of a catalogue AEAD"],
    );
    let pss = d.path().join("rsa_pss.json");
    std::fs::write(
        &pss,
        r#"{"schema": "rsassa_pss_verify_schema_v1.json", "testGroups": []}"#,
    )
    .unwrap();
    assert_usage_error(&pss, &[], &["rsassa_pss_verify_schema_v1.json", "not supported"]);
    // A signature schema we read, for a curve the catalogue has not.
    let p384 = d.path().join("ecdsa_p384.json");
    std::fs::write(
        &p384,
        r#"{"algorithm": "ECDSA", "schema": "ecdsa_verify_schema_v1.json", "numberOfTests": 1, "testGroups": [{"type": "EcdsaVerify", "publicKey": {"curve": "secp384r1", "uncompressed": "04"}, "sha": "SHA-384", "tests": [{"tcId": 1, "comment": "", "flags": [], "msg": "", "sig": "", "result": "valid"}]}]}"#,
    )
    .unwrap();
    assert_usage_error(&p384, &[], &["secp384r1"]);
    let other = d.path().join("notes.txt");
    std::fs::write(&other, "Hello = world\n").unwrap();
    assert_usage_error(&other, &[], &["not a recognised vector file", "supported are"]);
    // The algorithm must agree with the file, and its family with the format.
    let sha256 = vectors().join("hash/cavp/SHA256ShortMsg.rsp");
    assert_usage_error(
        &sha256,
        &["--alg", "SHA3-256"],
        &["--alg SHA3-256 does not match", "SHA-256 tests"],
    );
    let unnamed = d.path().join("unnamed.rsp");
    std::fs::copy(&sha256, &unnamed).unwrap();
    assert_usage_error(&unnamed, &["--alg", "X25519"], &["X25519 is a kex algorithm"]);
}

/// `ecdh_test_schema` files that cannot be used: cut short, a curve outside the catalogue,
/// a test without a result.
#[test]
fn malformed_ecdh_spki_files_are_one_line_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let f = wycheproof("ecdh_secp256r1_test.json");
    let text = std::fs::read_to_string(&f).unwrap();
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 3]).unwrap();
    assert_usage_error(&cut, &[], &["cut.json", "not valid JSON"]);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["testGroups"][0]["curve"] = Value::String("secp384r1".into());
    let curve = d.path().join("curve.json");
    std::fs::write(&curve, v.to_string()).unwrap();
    assert_usage_error(&curve, &[], &["curve.json", "secp384r1", "only secp256r1"]);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["testGroups"][0]["tests"][4].as_object_mut().unwrap().remove("result");
    let noresult = d.path().join("noresult.json");
    std::fs::write(&noresult, v.to_string()).unwrap();
    assert_usage_error(&noresult, &[], &["noresult.json", "tcId 5", "no `result`"]);
}
