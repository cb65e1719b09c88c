//! `verify --vectors FILE`: vector files brought by the user. Every supported format passes
//! on every implementation present; a copy with one expected byte changed in a known test
//! fails on every implementation with exactly that test's id and exit status 1; malformed
//! and unsupported files are usage errors (exit 2, one line on stderr); a crashing
//! implementation costs its own row only.

mod common;

use common::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn wycheproof(name: &str) -> PathBuf {
    vectors().join("wycheproof").join(name)
}

/// `verify --vectors FILE ARGS --json`, returning the exit code, stdout, stderr and the JSON.
fn verify_file(file: &Path, args: &[&str]) -> (Option<i32>, String, String, Option<Value>) {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("out.json");
    let out = cryptoscope()
        .args(["verify", "--quiet", "--vectors"])
        .arg(file)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let v = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (out.status.code(), stdout_of(&out), stderr_of(&out), v)
}

fn subjects(v: &Value) -> &Vec<Value> {
    v["subjects"].as_array().unwrap()
}

fn failing_ids(s: &Value) -> Vec<String> {
    s["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// The providers a worker offers `algorithm` from (what "every implementation" means here).
fn offered(algorithm: &str) -> usize {
    ["liboqs", "pqclean", "aws-lc", "rustcrypto", "openssl"]
        .iter()
        .flat_map(|p| describe(p))
        .filter(|d| d["algorithm"] == algorithm && d["availability"]["status"] == "available")
        .count()
}

/// Every subject passed, with `passed` tests each, none failed.
fn assert_all_pass(file: &Path, args: &[&str], algorithm: &str, passed: u64) -> Value {
    let (code, out, err, v) = verify_file(file, args);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let v = v.unwrap();
    let subjects = subjects(&v);
    assert_eq!(subjects.len(), offered(algorithm), "{out}");
    for s in subjects {
        assert_eq!(s["status"], "pass", "{out}");
        assert_eq!(s["passed"], passed, "{}: {out}", s["subject"]);
        assert_eq!(s["failed"], 0);
    }
    v
}

/// Every subject failed exactly test `id`.
fn assert_all_fail_only(file: &Path, args: &[&str], algorithm: &str, id: &str) {
    let (code, out, err, v) = verify_file(file, args);
    assert_eq!(code, Some(1), "{out}\n{err}");
    let v = v.unwrap();
    assert_eq!(subjects(&v).len(), offered(algorithm), "{out}");
    for s in subjects(&v) {
        assert_eq!(s["status"], "fail", "{}: {out}", s["subject"]);
        assert_eq!(failing_ids(s), [id], "{}: {out}", s["subject"]);
    }
    let kind = v["id_kind"].as_str().unwrap();
    assert!(out.contains(&format!(": {kind} {id}: ")), "{out}");
}

/// A copy of a Wycheproof file with one hex digit of `field` of test `tc_id` changed.
fn altered_wycheproof(src: &Path, dir: &Path, tc_id: u64, field: &str) -> PathBuf {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let mut done = false;
    for g in v["testGroups"].as_array_mut().unwrap() {
        for t in g["tests"].as_array_mut().unwrap() {
            if t["tcId"] == tc_id {
                assert_eq!(t["result"], "valid", "alter a valid test");
                let s = t[field].as_str().unwrap().to_string();
                let flipped = format!("{}{}", if s.starts_with('0') { '1' } else { '0' }, &s[1..]);
                t[field] = Value::String(flipped);
                done = true;
            }
        }
    }
    assert!(done);
    let p = dir.join(src.file_name().unwrap());
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p
}

#[test]
fn wycheproof_x25519_passes_everywhere_and_a_changed_secret_fails_its_tcid() {
    let f = wycheproof("x25519_test.json");
    let v = assert_all_pass(&f, &[], "X25519", 264);
    assert_eq!(v["format"], "wycheproof-x25519");
    assert_eq!(v["id_kind"], "tcId");
    for s in subjects(&v) {
        assert_eq!(s["acceptable"], 254, "acceptable tests are counted apart");
    }
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 1, "shared");
    assert_all_fail_only(&bad, &[], "X25519", "1");
}

#[test]
fn wycheproof_p256_passes_everywhere_and_a_changed_secret_fails_its_tcid() {
    let f = wycheproof("ecdh_secp256r1_ecpoint_test.json");
    // 330 valid and 24 invalid tests (rejected as they must be), 1 acceptable.
    assert_all_pass(&f, &[], "P-256", 354);
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 17, "shared");
    assert_all_fail_only(&bad, &[], "P-256", "17");
    // Selection flags narrow the rows.
    let (code, out, _, v) = verify_file(&bad, &["--provider", "openssl"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(subjects(&v.unwrap()).len(), 1);
}

#[test]
fn wycheproof_mlkem_passes_everywhere_and_a_changed_key_fails_its_tcid() {
    let f = wycheproof("mlkem_768_test.json");
    // 181 tests run; 20 "private key too short" tests are skipped: their seeds are not the
    // 64 bytes of randomness a key pair is made from.
    let v = assert_all_pass(&f, &[], "ML-KEM-768", 181);
    for s in subjects(&v) {
        assert_eq!(s["skipped"], 20, "{s}");
    }
    let aws = subjects(&v).iter().find(|s| s["provider"] == "aws-lc").unwrap();
    assert!(
        aws["notes"].to_string().contains("decapsulation keys derived by"),
        "{aws}"
    );
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 2, "K");
    assert_all_fail_only(&bad, &[], "ML-KEM-768", "2");
    // Alone, AWS-LC still gets its keys (from an implementation run for that purpose).
    let (code, out, _, v) = verify_file(&f, &["--provider", "aws-lc"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(subjects(&v.unwrap())[0]["passed"], 181, "{out}");
}

/// The tests of a Wycheproof file, every group's.
fn wycheproof_tests(file: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["testGroups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["tests"].as_array().unwrap().clone())
        .collect()
}

/// The tcIds of the tests `pick` chooses.
fn tc_ids(tests: &[Value], pick: impl Fn(&Value) -> bool) -> BTreeSet<String> {
    tests
        .iter()
        .filter(|t| pick(t))
        .map(|t| t["tcId"].to_string())
        .collect()
}

fn hex_len(v: &Value) -> usize {
    v.as_str().unwrap().len() / 2
}

/// Whether an ML-KEM encapsulation key has a coefficient of t̂ that is not reduced mod
/// q = 3329: ByteDecode₁₂ of its first 384k bytes (FIPS 203 §4.2.1), which §7.2's
/// modulus check compares with ByteEncode₁₂ of the reduced values.
fn unreduced(ek_hex: &Value) -> bool {
    let ek = hex::decode(ek_hex.as_str().unwrap()).unwrap();
    ek[..ek.len() - 32].chunks(3).any(|b| {
        let (lo, hi) = (
            u16::from(b[0]) | (u16::from(b[1] & 0x0f) << 8),
            u16::from(b[1] >> 4) | (u16::from(b[2]) << 4),
        );
        lo >= 3329 || hi >= 3329
    })
}

/// Runs `file` on every ML-KEM-768 subject: each must fail exactly the tests `expected`
/// names for it (none: it passes), having run `ran` of them. Returns the JSON.
fn assert_mlkem_fails_exactly(file: &Path, ran: u64, expected: impl Fn(&Value) -> BTreeSet<String>) -> Value {
    let (code, out, err, v) = verify_file(file, &[]);
    let v = v.unwrap_or_else(|| panic!("{out}\n{err}"));
    assert_eq!(subjects(&v).len(), offered("ML-KEM-768"), "{out}");
    let mut any_fails = false;
    for s in subjects(&v) {
        let want = expected(s);
        let got: BTreeSet<String> = failing_ids(s).into_iter().collect();
        assert_eq!(got, want, "{}: {out}", s["subject"]);
        assert_eq!(s["status"], if want.is_empty() { "pass" } else { "fail" }, "{out}");
        assert_eq!(
            s["passed"].as_u64().unwrap() + s["failed"].as_u64().unwrap(),
            ran,
            "{s}"
        );
        any_fails |= !want.is_empty();
    }
    assert_eq!(code, Some(i32::from(any_fails)), "{out}\n{err}");
    v
}

#[test]
fn wycheproof_mlkem_encaps_presents_every_key_and_finds_pqclean_without_the_modulus_check() {
    let f = wycheproof("mlkem_768_encaps_test.json");
    let tests = wycheproof_tests(&f);
    // From the file alone: its invalid keys of ML-KEM-768's length (1184 bytes) are those
    // that fail FIPS 203's modulus check. The 12 flagged ModulusOverflow are among them; the
    // other 100 ("Public key not reduced") carry no flag. The rest are of wrong lengths.
    let full_length_invalid = tc_ids(&tests, |t| t["result"] == "invalid" && hex_len(&t["ek"]) == 1184);
    let flagged = tc_ids(&tests, |t| t["flags"].to_string().contains("ModulusOverflow"));
    assert_eq!((full_length_invalid.len(), flagged.len()), (112, 12));
    assert!(flagged.is_subset(&full_length_invalid));
    for t in &tests {
        let full_length = hex_len(&t["ek"]) == 1184;
        assert_eq!(
            full_length && unreduced(&t["ek"]),
            full_length && t["result"] == "invalid",
            "{}",
            t["tcId"]
        );
    }
    // PQClean's ML-KEM does not make the modulus check: it accepts exactly those keys. The
    // others refuse every invalid key; AWS-LC's valid tests are acceptance only.
    let v = assert_mlkem_fails_exactly(&f, tests.len() as u64, |s| {
        if s["provider"] == "pqclean" {
            full_length_invalid.clone()
        } else {
            BTreeSet::new()
        }
    });
    assert_eq!(v["format"], "wycheproof-mlkem-encaps");
    let aws = subjects(&v).iter().find(|s| s["provider"] == "aws-lc").unwrap();
    assert!(aws["notes"].to_string().contains("on acceptance alone"), "{aws}");
    // A changed K of a valid test fails it wherever m can be injected; AWS-LC cannot
    // compare K, and its notes have said so.
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 14, "K");
    assert_mlkem_fails_exactly(&bad, tests.len() as u64, |s| {
        let mut ids = if s["provider"] == "pqclean" {
            full_length_invalid.clone()
        } else {
            BTreeSet::new()
        };
        if s["provider"] != "aws-lc" {
            ids.insert("14".into());
        }
        ids
    });
}

#[test]
fn wycheproof_mlkem_keygen_passes_where_the_seed_can_be_injected() {
    let f = wycheproof("mlkem_768_keygen_seed_test.json");
    let (code, out, err, v) = verify_file(&f, &[]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let v = v.unwrap();
    assert_eq!(v["format"], "wycheproof-mlkem-keygen");
    assert_eq!(subjects(&v).len(), offered("ML-KEM-768"), "{out}");
    for s in subjects(&v) {
        if s["provider"] == "aws-lc" {
            assert_eq!(
                (s["status"].as_str(), s["skipped"].as_u64()),
                (Some("skipped"), Some(100)),
                "{s}"
            );
            assert!(s["notes"].to_string().contains("randomness not injectable"), "{s}");
        } else {
            assert_eq!(
                (s["status"].as_str(), s["passed"].as_u64()),
                (Some("pass"), Some(100)),
                "{s}"
            );
        }
    }
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 7, "ek");
    let (code, out, _, v) = verify_file(&bad, &[]);
    assert_eq!(code, Some(1), "{out}");
    for s in subjects(&v.unwrap()).iter().filter(|s| s["provider"] != "aws-lc") {
        assert_eq!(failing_ids(s), ["7"], "{out}");
    }
}

#[test]
fn wycheproof_mlkem_decaps_counts_refusals_at_either_step_and_finds_pqclean_without_the_hash_check() {
    let f = wycheproof("mlkem_768_semi_expanded_decaps_test.json");
    let tests = wycheproof_tests(&f);
    // PQClean does not make FIPS 203 §7.3's hash check on dk: it fails exactly the tests
    // the file flags InvalidDecapsulationKey.
    let hash_check = tc_ids(&tests, |t| t["flags"].to_string().contains("InvalidDecapsulationKey"));
    assert_eq!(hash_check.len(), 2);
    let expected = |s: &Value| {
        if s["provider"] == "pqclean" {
            hash_check.clone()
        } else {
            BTreeSet::new()
        }
    };
    let v = assert_mlkem_fails_exactly(&f, 9, expected);
    assert_eq!(v["format"], "wycheproof-mlkem-decaps");
    for s in subjects(&v) {
        assert!(
            s["notes"].to_string().contains("when preparing dk (decapsulator)"),
            "{s}"
        );
    }
    // A changed K fails its test everywhere, AWS-LC included (no randomness is needed).
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 1, "K");
    assert_mlkem_fails_exactly(&bad, 9, |s| {
        let mut ids = expected(s);
        ids.insert("1".into());
        ids
    });
}

/// The tcIds a gate detail lists after `what` ("2 decapsulation keys with a wrong H(ek)
/// accepted (tcId 4, 5: …"), or `None` when it lists none.
fn accepted_ids(detail: &str, what: &str) -> Option<BTreeSet<u64>> {
    let at = detail.find(&format!("{what} accepted (tcId "))?;
    let rest = &detail[at..];
    let list = &rest[rest.find("(tcId ")? + 6..rest.find(':')?];
    Some(id_set(list).unwrap_or_else(|| panic!("not a list of tcIds: {list}")))
}

#[test]
fn the_kem_gate_runs_every_ml_kem_file_at_every_level_and_records_input_checks_beside_it() {
    // `verify --kat all` on ML-KEM-512, -768 and -1024: every implementation's gate runs
    // the four Wycheproof files of its level and passes them. Tests that only probe checks
    // FIPS 203 lets the caller make are a verdict beside the gate: from the files alone,
    // the encapsulation file's invalid keys of the level's length (unreduced: a key of that
    // length can be invalid for no other reason) and the decapsulation file's keys flagged
    // InvalidDecapsulationKey (a wrong H(ek)). PQClean makes neither check and is named
    // with exactly those tcIds; every other implementation makes both.
    let (levels, algs) = (["512", "768", "1024"], ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"]);
    let mut args = vec!["verify", "--quiet", "--kat", "all"];
    for a in algs {
        args.extend(["--alg", a]);
    }
    let o = cryptoscope().args(&args).output().unwrap();
    let out = stdout_of(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr_of(&o));
    for (level, alg) in levels.into_iter().zip(algs) {
        let file = |schema: &str| format!("mlkem_{level}_{schema}.json");
        let ek_len = hex_len(&wycheproof_tests(&wycheproof(&file("keygen_seed_test")))[0]["ek"]);
        let unreduced = tc_ids(&wycheproof_tests(&wycheproof(&file("encaps_test"))), |t| {
            t["result"] == "invalid" && hex_len(&t["ek"]) == ek_len
        });
        let wrong_hash = tc_ids(
            &wycheproof_tests(&wycheproof(&file("semi_expanded_decaps_test"))),
            |t| t["flags"].to_string().contains("\"InvalidDecapsulationKey\""),
        );
        assert!(!unreduced.is_empty() && !wrong_hash.is_empty(), "{level}");
        let as_u64 = |s: &BTreeSet<String>| s.iter().map(|x| x.parse::<u64>().unwrap()).collect::<BTreeSet<u64>>();
        let rows: Vec<&str> = out.lines().filter(|l| l.starts_with(&format!("{alg} "))).collect();
        assert_eq!(rows.len(), offered(alg), "{out}");
        for row in rows {
            assert!(row.contains("PASS"), "{row}");
            for schema in ["test", "encaps_test", "keygen_seed_test", "semi_expanded_decaps_test"] {
                assert!(
                    row.contains(&format!("{}: ", file(schema))),
                    "{} did not run: {row}",
                    file(schema)
                );
            }
            let ek = accepted_ids(row, "unreduced encapsulation keys");
            let dk = accepted_ids(row, "decapsulation keys with a wrong H(ek)");
            if row.split_whitespace().nth(1) == Some("pqclean") {
                assert_eq!(ek, Some(as_u64(&unreduced)), "{row}");
                assert_eq!(dk, Some(as_u64(&wrong_hash)), "{row}");
            } else {
                assert_eq!((ek, dk), (None, None), "{row}");
            }
        }
    }
}

#[test]
fn wycheproof_aead_files_pass_everywhere_and_a_changed_tag_fails_its_tcid() {
    // The expected counts come from the files (vectors/README.md): ChaCha20-Poly1305 has
    // 325 tests, all for 256-bit keys and runnable (nine invalid ones are refused by
    // `seal`); AES-GCM's 128-bit tests are 40 valid and 27 invalid with 96-bit nonces, two
    // invalid ones with empty nonces, and 39 valid ones with other nonce lengths (skipped);
    // its 256-bit tests 39 + 27 + 2 and 37.
    let chacha = vectors().join("aead").join("chacha20_poly1305_test.json");
    let v = assert_all_pass(&chacha, &[], "ChaCha20-Poly1305", 325);
    assert_eq!(v["format"], "wycheproof-aead");
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&chacha, d.path(), 3, "tag");
    assert_all_fail_only(&bad, &[], "ChaCha20-Poly1305", "3");
    // AES-GCM: both catalogue key lengths without --alg, each subject on its own tests.
    let gcm = vectors().join("aead").join("aes_gcm_test.json");
    let (code, out, err, v) = verify_file(&gcm, &[]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let v = v.unwrap();
    assert_eq!(
        subjects(&v).len(),
        offered("AES-128-GCM") + offered("AES-256-GCM"),
        "{out}"
    );
    for s in subjects(&v) {
        let (passed, skipped) = if s["algorithm"] == "AES-128-GCM" {
            (69, 39)
        } else {
            (68, 37)
        };
        assert_eq!(s["status"], "pass", "{out}");
        assert_eq!(
            (s["passed"].as_u64(), s["skipped"].as_u64()),
            (Some(passed), Some(skipped)),
            "{out}"
        );
    }
    // --alg picks one of them.
    let (code, out, _, v) = verify_file(&gcm, &["--alg", "AES-256-GCM"]);
    assert_eq!(code, Some(0), "{out}");
    let v = v.unwrap();
    assert_eq!(subjects(&v).len(), offered("AES-256-GCM"));
    assert!(subjects(&v).iter().all(|s| s["algorithm"] == "AES-256-GCM"));
    // A changed ciphertext byte of a valid 128-bit test (tcId 1) fails it everywhere.
    let bad = altered_wycheproof(&gcm, d.path(), 1, "ct");
    assert_all_fail_only(&bad, &["--alg", "AES-128-GCM"], "AES-128-GCM", "1");
}

#[test]
fn cavp_hash_rsp_passes_everywhere_and_a_changed_digest_fails_its_record() {
    let f = vectors().join("hash/cavp/SHA256ShortMsg.rsp");
    let v = assert_all_pass(&f, &[], "SHA-256", 65);
    assert_eq!(v["algorithm"], "SHA-256", "from the file name");
    let d = tempfile::tempdir().unwrap();
    // Named so that the name says nothing: --alg is then required.
    let text = std::fs::read_to_string(&f).unwrap();
    let at = text.match_indices("MD = ").nth(2).unwrap().0 + 5;
    let mut b = text.clone().into_bytes();
    b[at] = if b[at] == b'0' { b'1' } else { b'0' };
    let bad = d.path().join("mine.rsp");
    std::fs::write(&bad, &b).unwrap();
    let (code, _, err, _) = verify_file(&bad, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("give --alg") && err.lines().count() == 1, "{err}");
    assert_all_fail_only(&bad, &["--alg", "SHA-256"], "SHA-256", "3");
    // Bit-level entries are skipped and said to be.
    let bits = d.path().join("SHA3_256ShortMsg.rsp");
    let sha3 = std::fs::read_to_string(vectors().join("hash/cavp/SHA3_256ShortMsg.rsp")).unwrap();
    std::fs::write(&bits, format!("{sha3}\nLen = 5\nMsg = 48\nMD = aa\n")).unwrap();
    let (code, out, _, v) = verify_file(&bits, &[]);
    assert_eq!(code, Some(0), "{out}");
    for s in subjects(&v.unwrap()) {
        assert_eq!(s["skipped"], 1);
        assert!(s["notes"].to_string().contains("not a multiple of 8"), "{s}");
    }
}

#[test]
fn a_crashing_implementation_costs_its_own_row() {
    let f = vectors().join("hash/cavp/SHA256ShortMsg.rsp");
    let (code, out, _, v) = verify_file(
        &f,
        &["--provider", "testbed", "--impl", "sound,segfault,wrong-digest,overrun"],
    );
    assert_eq!(code, Some(1), "{out}");
    let v = v.unwrap();
    let status = |i: &str| {
        subjects(&v).iter().find(|s| s["implementation"] == i).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("sound"), "pass", "{out}");
    assert_eq!(status("segfault"), "crashed", "{out}");
    assert_eq!(status("wrong-digest"), "fail", "{out}");
    assert_eq!(status("overrun"), "fail", "canaries around the digest: {out}");
    assert!(out.contains("SIGSEGV"), "{out}");
}

/// The NIST KAT text of ML-KEM-768 (100 entries) from the gate's kept entries and the
/// NIST DRBG's seeds, and the published SHA-256 of the file it must equal.
fn mlkem768_kat_rsp(dir: &Path) -> String {
    let entries = dir.join("entries.json");
    let (_, out) = worker_events(
        "pqclean",
        &[
            "gate",
            "--subject",
            "ML-KEM-768/pqclean/clean",
            "--vectors",
            vectors().to_str().unwrap(),
            "--depth",
            "all",
            "--keep",
            "100",
            "--entries-out",
            entries.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let kept: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&entries).unwrap()).unwrap();
    assert_eq!(kept.len(), 100);
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let mut drbg = cryptoscope_catalogue::rng::CtrDrbg::new(&entropy);
    let mut text = String::new();
    for (count, e) in kept.iter().enumerate() {
        let mut seed = [0u8; 48];
        cryptoscope_catalogue::rng::KatPrng::fill(&mut drbg, &mut seed);
        if count > 0 {
            text.push('\n');
        }
        text += &format!("count = {count}\nseed = {}\n", hex::encode_upper(seed));
        for k in ["pk", "sk", "ct", "ss"] {
            text += &format!("{k} = {}\n", e[k].as_str().unwrap().to_uppercase());
        }
    }
    // Published data only: the file must be the one whose digest liboqs publishes.
    let kats: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors().join("kem/liboqs-kats.json")).unwrap()).unwrap();
    assert_eq!(
        hex::encode(Sha256::digest(text.as_bytes())),
        kats["ML-KEM-768"]["all"].as_str().unwrap().to_lowercase(),
        "the generated KAT file is not the published one"
    );
    text
}

#[test]
fn nist_kem_kat_rsp_passes_everywhere_and_a_changed_secret_fails_its_count() {
    let d = tempfile::tempdir().unwrap();
    let text = mlkem768_kat_rsp(d.path());
    let f = d.path().join("PQCkemKAT_2400.rsp");
    std::fs::write(&f, &text).unwrap();
    let (code, _, err, _) = verify_file(&f, &[]);
    assert_eq!(code, Some(2), "no header, no --alg");
    assert!(err.contains("--alg") && err.lines().count() == 1, "{err}");
    let v = assert_all_pass(&f, &["--alg", "ML-KEM-768"], "ML-KEM-768", 100);
    let aws = subjects(&v).iter().find(|s| s["provider"] == "aws-lc").unwrap();
    assert!(aws["notes"].to_string().contains("only decaps(sk, ct) = ss"), "{aws}");
    // A header line names the algorithm.
    let headed = d.path().join("headed.rsp");
    std::fs::write(&headed, format!("# ML-KEM-768\n\n{text}")).unwrap();
    assert_all_pass(&headed, &[], "ML-KEM-768", 100);
    // One byte of count 42's ss changed.
    let at = text.find("count = 42\n").unwrap();
    let at = at + text[at..].find("ss = ").unwrap() + 5;
    let mut b = text.into_bytes();
    b[at] = if b[at] == b'0' { b'1' } else { b'0' };
    let bad = d.path().join("bad.rsp");
    std::fs::write(&bad, &b).unwrap();
    assert_all_fail_only(&bad, &["--alg", "ML-KEM-768"], "ML-KEM-768", "42");
    // A wrong --alg shows in the sizes.
    let (code, _, err, _) = verify_file(&bad, &["--alg", "ML-KEM-512"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is --alg right?"), "{err}");
}

/// `ecdh_test_schema`: every peer key goes through the library's own SubjectPublicKeyInfo
/// decoder. A library may fail only tests the file marks as explicit curve parameters
/// (`UnnamedCurve`) whose key is still the right point, and only by deriving the file's
/// own secret from them (the benign outcome, per the file's note on `InvalidPublic`):
/// anything else is a finding this test reports. A changed secret fails its tcId.
#[test]
fn wycheproof_ecdh_spki_reaches_each_library_decoder() {
    let f = wycheproof("ecdh_secp256r1_test.json");
    let tests = wycheproof_tests(&f);
    let (code, out, err, v) = verify_file(&f, &[]);
    assert!(matches!(code, Some(0 | 1)), "{out}\n{err}");
    let v = v.unwrap();
    assert_eq!(v["format"], "wycheproof-ecdh-spki");
    assert_eq!(subjects(&v).len(), offered("P-256"), "{out}");
    for s in subjects(&v) {
        assert_eq!(
            s["skipped"], 0,
            "{}: every test reaches the library: {out}",
            s["subject"]
        );
        for fail in s["failures"].as_array().unwrap() {
            let id = fail["id"].as_str().unwrap();
            let t = tests
                .iter()
                .find(|t| t["tcId"].as_u64().map(|n| n.to_string()).as_deref() == Some(id))
                .unwrap();
            assert_eq!(t["result"], "invalid", "{}: tcId {id}: {out}", s["subject"]);
            let flags = &t["flags"];
            assert!(
                flags.as_array().unwrap().iter().any(|f| f == "UnnamedCurve"),
                "{}: tcId {id} {flags}: {out}",
                s["subject"]
            );
            assert!(
                fail["detail"]
                    .as_str()
                    .unwrap()
                    .ends_with(t["shared"].as_str().unwrap()),
                "{}: tcId {id} derived another secret than the file's: {out}",
                s["subject"]
            );
        }
    }
    let d = tempfile::tempdir().unwrap();
    let bad = altered_wycheproof(&f, d.path(), 1, "shared");
    let (code, out, _, v) = verify_file(&bad, &[]);
    assert_eq!(code, Some(1), "{out}");
    for s in subjects(&v.unwrap()) {
        assert!(failing_ids(s).contains(&"1".to_string()), "{}: {out}", s["subject"]);
    }
}
