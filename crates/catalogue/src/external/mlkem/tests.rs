//! The three ML-KEM schemas: the repository's files parse with the counts their own fields
//! give; each malformed case is a one-line error naming the file and the tcId; and the
//! runners present every invalid input, count a refusal at either decapsulation step, and
//! fail an implementation that accepts what it must refuse. The toy KEM below does no
//! cryptography: it only answers as a correct or a careless implementation would.

use super::*;
use crate::descriptor::{Availability, Family, Sizes};
use crate::traits::{Decapsulator, OpError};
use serde_json::{json, Value};

fn wycheproof(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/wycheproof")).join(name)
}

fn file_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(wycheproof(name)).unwrap()).unwrap()
}

fn all_tests(v: &Value) -> Vec<&Value> {
    v["testGroups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["tests"].as_array().unwrap())
        .collect()
}

#[test]
fn lengths_are_fips_203s() {
    let _serial = crate::rng::serial();
    let l = mlkem_lengths("ML-KEM-768").unwrap();
    assert_eq!((l.ek, l.dk, l.c), (1184, 2400, 1088));
    let l = mlkem_lengths("ML-KEM-512").unwrap();
    assert_eq!((l.ek, l.dk, l.c), (800, 1632, 768));
    let l = mlkem_lengths("ML-KEM-1024").unwrap();
    assert_eq!((l.ek, l.dk, l.c), (1568, 3168, 1568));
    assert!(mlkem_lengths("Kyber768").is_none());
}

#[test]
fn formats_have_names_and_are_kem_files() {
    let _serial = crate::rng::serial();
    for f in [
        Format::WycheproofMlkemEncaps,
        Format::WycheproofMlkemKeygen,
        Format::WycheproofMlkemDecaps,
    ] {
        assert_eq!(Format::parse(f.as_str()), Some(f));
        assert_eq!(f.family(), crate::Family::Kem);
        assert_eq!(f.id_kind(), "tcId");
    }
}

#[test]
fn the_repository_files_parse_with_their_own_counts() {
    let _serial = crate::rng::serial();
    let name = "mlkem_768_encaps_test.json";
    let raw = file_json(name);
    let f = load(&wycheproof(name)).unwrap();
    assert_eq!(f.format(), Format::WycheproofMlkemEncaps);
    assert_eq!(f.stated_algorithms(), ["ML-KEM-768"]);
    assert_eq!(f.tests() as u64, raw["numberOfTests"].as_u64().unwrap());
    let External::MlkemEncaps(tests) = f else { panic!() };
    let raw = all_tests(&raw);
    let count = |r: &str| raw.iter().filter(|t| t["result"] == r).count();
    let valid = tests.iter().filter(|t| t.case.result == Expect::Valid).count();
    assert_eq!((valid, tests.len() - valid), (count("valid"), count("invalid")));
    let overflow = tests.iter().filter(|t| t.case.flags == ["ModulusOverflow"]).count();
    assert_eq!(overflow, 12);
    // Keys of wrong lengths are invalid tests, kept to be presented.
    assert!(tests
        .iter()
        .any(|t| t.case.result == Expect::Invalid && t.ek.len() != 1184));

    let f = load(&wycheproof("mlkem_768_keygen_seed_test.json")).unwrap();
    assert_eq!(f.format(), Format::WycheproofMlkemKeygen);
    assert_eq!(
        (f.tests(), f.stated_algorithms()),
        (100, vec!["ML-KEM-768".to_string()])
    );

    let f = load(&wycheproof("mlkem_768_semi_expanded_decaps_test.json")).unwrap();
    assert_eq!(f.format(), Format::WycheproofMlkemDecaps);
    let External::MlkemDecaps(tests) = f else { panic!() };
    assert_eq!(tests.len(), 9);
    let hash = tests.iter().filter(|t| t.case.flags == ["InvalidDecapsulationKey"]);
    assert!(hash.clone().all(|t| t.case.result == Expect::Invalid && t.k.is_none()));
    assert_eq!(hash.count(), 2);
    assert!(tests.iter().any(|t| t.dk.len() == 2399));
}

/// A copy of `name` with `edit` applied to its first test (or to the file).
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v = file_json(name);
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

fn first(v: &mut Value) -> &mut Value {
    &mut v["testGroups"][0]["tests"][0]
}

/// The first test that is `valid`.
fn first_valid(v: &mut Value) -> &mut Value {
    v["testGroups"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|g| g["tests"].as_array_mut().unwrap())
        .find(|t| t["result"] == "valid")
        .unwrap()
}

#[test]
fn malformed_files_are_one_line_errors_naming_file_and_tcid() {
    let _serial = crate::rng::serial();
    let d = tempfile::tempdir().unwrap();
    let (enc, gen, dec) = (
        "mlkem_768_encaps_test.json",
        "mlkem_768_keygen_seed_test.json",
        "mlkem_768_semi_expanded_decaps_test.json",
    );
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            enc,
            Box::new(|v| first(v)["m"] = json!("00")),
            "tcId 2: `m` has 1 bytes, not 32",
        ),
        (
            enc,
            Box::new(|v| first(v)["ek"] = json!("0g")),
            "tcId 2: `ek` is not hex",
        ),
        (
            enc,
            Box::new(|v| {
                first(v).as_object_mut().unwrap().remove("result");
            }),
            "tcId 2: no `result` string",
        ),
        (
            enc,
            Box::new(|v| first_valid(v)["c"] = json!("00")),
            "tcId 14: `c` has 1 bytes, not 1088",
        ),
        (
            enc,
            Box::new(|v| first_valid(v)["K"] = json!("")),
            "tcId 14: `K` has 0 bytes, not 32",
        ),
        (
            enc,
            Box::new(|v| v["testGroups"][1]["parameterSet"] = json!("ML-KEM-640")),
            "test group 2: `parameterSet` is `ML-KEM-640`",
        ),
        (
            enc,
            Box::new(|v| first(v)["flags"] = json!("ModulusOverflow")),
            "`flags` is not an array",
        ),
        (enc, Box::new(|v| v["testGroups"] = json!([])), "no tests"),
        (
            gen,
            Box::new(|v| first(v)["seed"] = json!("00")),
            "tcId 1: `seed` has 1 bytes, not 64",
        ),
        (
            gen,
            Box::new(|v| first(v)["dk"] = json!("0000")),
            "tcId 1: `dk` has 2 bytes, not 2400",
        ),
        (
            gen,
            Box::new(|v| v["testGroups"][0]["parameterSet"] = json!("Kyber768")),
            "`parameterSet` is `Kyber768`",
        ),
        (
            dec,
            Box::new(|v| {
                first(v).as_object_mut().unwrap().remove("K");
            }),
            "tcId 1: no `K` string",
        ),
        (dec, Box::new(|v| first(v)["c"] = json!("zz")), "tcId 1: `c` is not hex"),
    ];
    for (name, edit, want) in cases {
        let p = edited(d.path(), name, edit);
        let e = load(&p).unwrap_err();
        assert!(matches!(e, ExternalError::Malformed { .. }), "{want}: {e}");
        let e = e.to_string();
        assert!(e.contains(name) && e.contains(want), "{want}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A truncated file.
    let text = std::fs::read_to_string(wycheproof(dec)).unwrap();
    let p = d.path().join("cut.json");
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    assert!(load(&p).unwrap_err().to_string().contains("not valid JSON"));
}

const EK: usize = 1184;
const DK: usize = 2400;
const C: usize = 1088;

/// A toy ML-KEM-768 "implementation": encaps writes fixed bytes (`c` all 2, `K` all 3);
/// a dk beginning with 0xff is refused when prepared; decaps gives the first 32 bytes of
/// `c` as K. Faults make it careless.
struct Toy {
    desc: Descriptor,
    /// Takes every encapsulation key of the right length (no modulus check).
    lax_ek: bool,
    /// Refuses every encapsulation key.
    refuses_ek: bool,
    /// Writes past the shared secret in decaps, then reports an error.
    overruns: bool,
}

fn toy(randomness: Randomness) -> Toy {
    Toy {
        desc: Descriptor {
            id: "ML-KEM-768/toy/test".into(),
            algorithm: "ML-KEM-768".into(),
            family: Family::Kem,
            provider: "toy".into(),
            provider_version: "0".into(),
            implementation: "test".into(),
            algorithm_version: "-".into(),
            build: "-".into(),
            nist_level: None,
            classical_bits: None,
            sizes: Sizes {
                public_key: EK,
                secret_key: DK,
                ciphertext: C,
                shared_secret: 32,
            },
            availability: Availability::Available,
            randomness,
            kat: None,
            cipher: None,
            aead: None,
            sig: None,
        },
        lax_ek: false,
        refuses_ek: false,
        overruns: false,
    }
}

impl Kem for Toy {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        // Draws nothing: a harness seed is never used.
        pk.fill(1);
        sk.fill(1);
        Ok(())
    }
    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
        crate::traits::check_len("encaps", "pk", pk.len(), EK)?;
        // The toy's "modulus check": a key beginning with 0xff is not reduced.
        if self.refuses_ek || (!self.lax_ek && pk[0] == 0xff) {
            return Err(OpError::failed("encaps", "public key rejected"));
        }
        ct.fill(2);
        ss.fill(3);
        Ok(())
    }
    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
        crate::traits::check_len("decaps", "sk", sk.len(), DK)?;
        if sk[0] == 0xff {
            return Err(OpError::failed("decaps", "H(ek) does not match"));
        }
        Ok(Box::new(ToyDec(self.overruns)))
    }
}

struct ToyDec(bool);

impl Decapsulator for ToyDec {
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
        if self.0 {
            // SAFETY (test only): the harness's buffers carry 32 canary bytes after each
            // slice inside the same allocation, so this one-byte overrun stays within it.
            unsafe { *ss.as_mut_ptr().add(ss.len()) = 0 };
            return Err(OpError::failed("decaps", "after writing past ss"));
        }
        crate::traits::check_len("decaps", "ct", ct.len(), C)?;
        ss.copy_from_slice(&ct[..32]);
        Ok(())
    }
}

fn case(tc_id: u64, result: Expect, flags: &[&str]) -> MlkemCase {
    MlkemCase {
        tc_id,
        parameter_set: "ML-KEM-768".into(),
        comment: String::new(),
        flags: flags.iter().map(|f| f.to_string()).collect(),
        result,
    }
}

/// 1: valid; 2: invalid, not reduced (begins with 0xff); 3: invalid, too short;
/// 4: for another parameter set.
fn encaps_tests() -> Vec<MlkemEncapsTest> {
    let t = |id, result, flags: &[&str], ek: Vec<u8>, c: Vec<u8>, k: Vec<u8>| MlkemEncapsTest {
        case: case(id, result, flags),
        ek,
        m: vec![9; 32],
        c,
        k,
    };
    let mut unreduced = vec![0u8; EK];
    unreduced[0] = 0xff;
    let mut other = t(4, Expect::Valid, &[], vec![0; 800], vec![2; 768], vec![3; 32]);
    other.case.parameter_set = "ML-KEM-512".into();
    vec![
        t(1, Expect::Valid, &[], vec![0; EK], vec![2; C], vec![3; 32]),
        t(2, Expect::Invalid, &["ModulusOverflow"], unreduced, vec![], vec![]),
        t(3, Expect::Invalid, &[], vec![0; EK - 1], vec![], vec![]),
        other,
    ]
}

fn ids(o: &FileOutcome) -> Vec<&str> {
    o.failures.iter().map(|f| f.id.as_str()).collect()
}

#[test]
fn encaps_presents_every_invalid_key_and_fails_one_accepted() {
    let _serial = crate::rng::serial();
    let tests = encaps_tests();
    // Internal randomness: the valid test passes on acceptance alone, and says so.
    let o = run_mlkem_encaps(&toy(Randomness::Internal), &tests);
    assert_eq!((o.passed, o.failed, o.skipped), (3, 0, 0), "{o:?}");
    let notes = o.notes.join("\n");
    assert!(
        notes.contains("1 valid tests are counted as passed on acceptance alone"),
        "{notes}"
    );
    assert!(
        notes.contains("1 tests of the file are for other parameter sets"),
        "{notes}"
    );
    // Without the modulus check the unreduced key is accepted: that test fails, by id.
    let lax = Toy {
        lax_ek: true,
        ..toy(Randomness::Internal)
    };
    let o = run_mlkem_encaps(&lax, &tests);
    assert_eq!(ids(&o), ["2"], "{o:?}");
    assert!(o.failures[0].detail.contains("(ModulusOverflow)"), "{o:?}");
    // Refusing a valid key fails it.
    let strict = Toy {
        refuses_ek: true,
        ..toy(Randomness::Internal)
    };
    assert_eq!(ids(&run_mlkem_encaps(&strict, &tests)), ["1"]);
}

#[test]
fn encaps_with_harness_randomness_must_draw_m() {
    let _serial = crate::rng::serial();
    // The toy draws nothing, so the file's m never reaches it: the valid test fails
    // whatever it returns; the invalid ones are still refused.
    let o = run_mlkem_encaps(&toy(Randomness::Harness), &encaps_tests());
    assert_eq!(ids(&o), ["1"], "{o:?}");
    assert_eq!(o.passed, 2);
}

#[test]
fn keygen_needs_injectable_randomness() {
    let _serial = crate::rng::serial();
    let tests = vec![MlkemKeygenTest {
        case: case(1, Expect::Valid, &[]),
        seed: vec![0; 64],
        ek: vec![1; EK],
        dk: vec![1; DK],
    }];
    let o = run_mlkem_keygen(&toy(Randomness::Internal), &tests);
    assert_eq!((o.passed, o.skipped), (0, 1));
    assert!(o.notes[0].contains("randomness not injectable"), "{o:?}");
    // Harness randomness, but the toy does not draw the seed: right keys, still a failure.
    let o = run_mlkem_keygen(&toy(Randomness::Harness), &tests);
    assert_eq!(ids(&o), ["1"], "{o:?}");
    assert!(o.failures[0].detail.contains("not the 64 of d ‖ z"), "{o:?}");
}

/// 1: valid; 2: invalid key (refused when prepared); 3: invalid ciphertext length
/// (refused by decaps); 4: invalid key the toy does not detect.
fn decaps_tests() -> Vec<MlkemDecapsTest> {
    let t = |id, result, flags: &[&str], dk: Vec<u8>, c: Vec<u8>, k: Option<Vec<u8>>| MlkemDecapsTest {
        case: case(id, result, flags),
        dk,
        c,
        ek: None,
        k,
    };
    let mut bad_hash = vec![0u8; DK];
    bad_hash[0] = 0xff;
    vec![
        t(1, Expect::Valid, &[], vec![0; DK], vec![5; C], Some(vec![5; 32])),
        t(
            2,
            Expect::Invalid,
            &["InvalidDecapsulationKey"],
            bad_hash,
            vec![5; C],
            None,
        ),
        t(
            3,
            Expect::Invalid,
            &["IncorrectCiphertextLength"],
            vec![0; DK],
            vec![5; C + 1],
            None,
        ),
        t(
            4,
            Expect::Invalid,
            &["InvalidDecapsulationKey"],
            vec![1; DK],
            vec![5; C],
            None,
        ),
    ]
}

#[test]
fn decaps_counts_a_refusal_at_either_step() {
    let _serial = crate::rng::serial();
    let o = run_mlkem_decaps(&toy(Randomness::Internal), &decaps_tests());
    assert_eq!(ids(&o), ["4"], "{o:?}");
    assert_eq!(o.passed, 3);
    assert!(o.failures[0]
        .detail
        .contains("accepted an invalid test (InvalidDecapsulationKey)"));
    assert!(
        o.notes
            .iter()
            .any(|n| n.contains("1 when preparing dk (decapsulator), 1 by decaps")),
        "{o:?}"
    );
    // A changed K fails the valid test.
    let mut tests = decaps_tests();
    tests[0].k = Some(vec![6; 32]);
    assert_eq!(ids(&run_mlkem_decaps(&toy(Randomness::Internal), &tests))[0], "1");
}

#[test]
fn a_refusal_that_wrote_past_a_buffer_is_a_failure() {
    let _serial = crate::rng::serial();
    let overruns = Toy {
        overruns: true,
        ..toy(Randomness::Internal)
    };
    let o = run_mlkem_decaps(&overruns, &decaps_tests());
    // Test 2 is refused before decaps runs; every test that reaches decaps fails.
    assert_eq!(ids(&o), ["1", "3", "4"], "{o:?}");
    assert!(o.failures.iter().all(|f| f.detail.contains("canary")), "{o:?}");
}
