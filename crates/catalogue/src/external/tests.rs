//! Recognising, parsing and running user vector files: each format, each malformed case
//! with its one-line error, and implementations that must fail.

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn err(p: &Path) -> String {
    load(p).unwrap_err().to_string()
}

#[test]
fn recognises_by_content_not_name() {
    let _serial = crate::rng::serial();
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "whatever.txt",
        "# c\n[L = 32]\n\nLen = 0\nMsg = 00\nMD = aa\n\nLen = 12\nMsg = abc0\nMD = bb\n",
    );
    let f = load(&p).unwrap();
    assert_eq!(f.format(), Format::CavpHash);
    assert!(f.stated_algorithms().is_empty());
    let External::Hash { records, l, .. } = f else { panic!() };
    assert_eq!(l, Some(32));
    assert!(records[0].message.is_empty() && !records[0].bit_level());
    assert!(records[1].bit_level());
    let p = write(d.path(), "SHA3_256ShortMsg.rsp", "Len = 8\nMsg = 01\nMD = aa\n");
    assert_eq!(load(&p).unwrap().stated_algorithms(), ["SHA3-256"]);
    let seed = "00".repeat(48);
    let p = write(
        d.path(),
        "k.rsp",
        &format!("# ML-KEM-768\n\ncount = 0\nseed = {seed}\npk = 01\nsk = 02\nct = 03\nss = 04\n"),
    );
    let f = load(&p).unwrap();
    assert_eq!(f.format(), Format::KemKat);
    assert_eq!(f.stated_algorithms(), ["ML-KEM-768"]);
}

#[test]
fn malformed_files_name_file_and_place() {
    let _serial = crate::rng::serial();
    let d = tempfile::tempdir().unwrap();
    let seed = "00".repeat(48);
    let cases = [
        ("a.rsp", "Len = 8\nMsg = 0g\nMD = aa\n".to_string(), "line 2"),
        ("b.rsp", "Len = 8\nMsg = 01\n".to_string(), "no `MD`"),
        ("c.rsp", "Len = 8\nMsg = 01\nMD = aa\ngarbage\n".to_string(), "line 4"),
        (
            "d.rsp",
            format!("count = 0\nseed = {seed}\npk = 01\nsk = 02\nct = 03\nss = 04\n\ncount = 1\nseed = {seed}\npk = 01\n"),
            "count 1 (line 8) has no `sk`",
        ),
        ("e.json", "{\"schema\": \"xdh_comp_schema_v1.json\", \"testGroups\": [".into(), "not valid JSON"),
        (
            "f.json",
            r#"{"schema":"xdh_comp_schema_v1.json","testGroups":[{"curve":"curve25519","tests":[{"tcId":7,"public":"00","private":"zz","shared":"","result":"valid"}]}]}"#.into(),
            "tcId 7: `private` is not hex",
        ),
        (
            "g.json",
            r#"{"schema":"xdh_comp_schema_v1.json","testGroups":[{"curve":"curve25519","tests":[{"tcId":8,"public":"00","private":"00","result":"valid"}]}]}"#.into(),
            "tcId 8: no `shared`",
        ),
        (
            "h.json",
            r#"{"algorithm":"AES-GCM","schema":"aead_test_schema_v1.json","testGroups":[{"keySize":128,"ivSize":96,"tagSize":128,"tests":[{"tcId":3,"key":"00000000000000000000000000000000","iv":"000000000000000000000000","aad":"","msg":"","ct":"","tag":"00","result":"valid"}]}]}"#.into(),
            "tcId 3: `tag` has 8 bits, its group says 128",
        ),
        (
            "i.json",
            r#"{"algorithm":"CHACHA20-POLY1305","schema":"aead_test_schema_v1.json","testGroups":[{"keySize":256,"tagSize":128,"tests":[]}]}"#.into(),
            "test group 1 lacks a numeric keySize, ivSize or tagSize",
        ),
        (
            "j.json",
            r#"{"algorithm":"AES-GCM","schema":"aead_test_schema_v1.json","testGroups":[{"keySize":128,"ivSize":96,"tagSize":128,"tests":[{"tcId":4,"key":"00000000000000000000000000000000","iv":"000000000000000000000000","aad":"","msg":"00","ct":"","tag":"00000000000000000000000000000000","result":"valid"}]}]}"#.into(),
            "tcId 4: `ct` has 0 bytes, `msg` 1",
        ),
    ];
    for (name, text, want) in cases {
        let p = write(d.path(), name, &text);
        let e = load(&p).unwrap_err();
        assert!(matches!(e, ExternalError::Malformed { .. }), "{name}: {e}");
        let e = e.to_string();
        assert!(e.contains(name) && e.contains(want), "{name}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn errors_stay_on_one_line_whatever_the_file_holds() {
    let _serial = crate::rng::serial();
    // Found by fuzzing (`external_vectors`): a `schema` with a line break was quoted
    // as it was into the error.
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "x.json",
        r#"{"algorithm":"ML-KEM","schema":"mlkem_test\nFAKE LINE\r","testGroups":[]}"#,
    );
    let e = err(&p);
    assert!(!e.contains('\n') && !e.contains('\r'), "{e}");
    assert!(e.contains("mlkem_test\\nFAKE LINE\\r"), "{e}");
    let p = write(
        d.path(),
        "y.json",
        r#"{"algorithm":"X25519","schema":"xdh_comp_schema.json","testGroups":[{"curve":"curve25519","tests":[{"tcId":1,"public":"00","private":"00","shared":"00","result":"valid\n2"}]}]}"#,
    );
    let e = err(&p);
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn unsupported_files_say_what_is_supported() {
    let _serial = crate::rng::serial();
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "aead.json",
        r#"{"algorithm":"AES-CCM","schema":"aead_test_schema_v1.json","testGroups":[]}"#,
    );
    let e = err(&p);
    assert!(
        e.contains("AES-CCM") && e.contains("only AES-GCM and CHACHA20-POLY1305") && e.contains("supported are"),
        "{e}"
    );
    let p = write(
        d.path(),
        "ecdsa.json",
        r#"{"algorithm":"ECDSA","schema":"ecdsa_p1363_verify_schema.json","testGroups":[]}"#,
    );
    assert!(err(&p).contains("`ecdsa_p1363_verify_schema.json` is not supported"));
    let p = write(
        d.path(),
        "x448.json",
        r#"{"schema":"xdh_comp_schema_v1.json","testGroups":[{"curve":"curve448","tests":[]}]}"#,
    );
    assert!(err(&p).contains("curve448"));
    let p = write(
        d.path(),
        "SHA256Monte.rsp",
        "[L = 32]\n\nSeed = 00\n\nCOUNT = 0\nMD = aa\n",
    );
    assert!(err(&p).contains("Monte Carlo"));
    let p = write(d.path(), "notes.txt", "Key = 1\n");
    assert!(matches!(load(&p).unwrap_err(), ExternalError::Unsupported(_)));
}

#[test]
fn file_names_give_hash_algorithms() {
    let _serial = crate::rng::serial();
    for (f, a) in [
        ("SHA256ShortMsg.rsp", Some("SHA-256")),
        ("SHA3_256LongMsg.rsp", Some("SHA3-256")),
        ("SHA512_256ShortMsg.rsp", Some("SHA-512/256")),
        ("SHAKE128VariableOut.rsp", Some("SHAKE128")),
        ("SHA224ShortMsg.rsp", Some("SHA-224")),
        ("vectors.rsp", None),
    ] {
        assert_eq!(hash_algorithm_from_name(Path::new(f)).as_deref(), a, "{f}");
    }
}

#[test]
fn p256_scalars_are_normalised() {
    let _serial = crate::rng::serial();
    assert_eq!(
        private_scalar(true, &[0, 1]).unwrap(),
        [vec![0u8; 31], vec![1]].concat()
    );
    let mut k = vec![0u8];
    k.extend([0xff; 32]);
    assert_eq!(private_scalar(true, &k).unwrap(), vec![0xff; 32]);
    assert!(private_scalar(true, &[1; 33]).is_none());
    assert!(private_scalar(false, &[1; 31]).is_none());
}

#[test]
fn seed_feed_hands_out_the_seed_in_order_and_counts() {
    let _serial = crate::rng::serial();
    let drawn = Arc::new(AtomicUsize::new(0));
    let mut f = SeedFeed {
        seed: (0..64).collect(),
        drawn: drawn.clone(),
    };
    let (mut a, mut b, mut c) = ([0u8; 32], [0u8; 32], [0u8; 4]);
    f.fill(&mut a);
    f.fill(&mut b);
    f.fill(&mut c);
    assert_eq!(a[0], 0);
    assert_eq!(b[31], 63);
    assert_eq!(c, [0; 4]);
    assert_eq!(drawn.load(Ordering::SeqCst), 68);
}
