//! The signature schemas: the repository's files parse with the counts their own fields
//! give; each malformed case is a one-line error naming the file and the tcId (or the
//! group and its first tcId); files for other curves, hashes or parameter sets are refused
//! as unsupported. Then the runners: Ed25519 and ECDSA P-256 wrappers over independent
//! libraries (ed25519-dalek, p256) pass every test of the Wycheproof files, and broken
//! wrappers fail exactly the tests they must, by tcId. ML-DSA is run on a toy that does no
//! cryptography: it answers from tables of the files' own values, as a correct (or, with a
//! fault, a careless) implementation would, so that what the runners hand it (the seed and
//! rnd as harness randomness, keys, contexts) is what decides. Expected values come only
//! from the files.

use super::*;
use crate::descriptor::{Descriptor, Randomness, SigInfo, Signing};
use crate::traits::{check_len, OpError, Signer, Verifier};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap, HashSet};

const SEED: &str = "mldsa_65_sign_seed_test.json";
const NOSEED: &str = "mldsa_65_sign_noseed_test.json";
const VERIFY: &str = "mldsa_65_verify_test.json";
const ED25519: &str = "ed25519_test.json";
const ECDSA: &str = "ecdsa_secp256r1_sha256_test.json";

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

/// The tcIds of the file's tests that `keep` picks (group, test).
fn ids_where(v: &Value, keep: impl Fn(&Value, &Value) -> bool) -> BTreeSet<String> {
    v["testGroups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["tests"].as_array().unwrap().iter().map(move |t| (g, t)))
        .filter(|(g, t)| keep(g, t))
        .map(|(_, t)| t["tcId"].to_string())
        .collect()
}

fn failed_ids(o: &FileOutcome) -> BTreeSet<String> {
    o.failures.iter().map(|f| f.id.clone()).collect()
}

#[test]
fn formats_have_names_and_are_signature_files() {
    let _serial = crate::rng::serial();
    for f in [
        Format::WycheproofMldsaSign,
        Format::WycheproofMldsaVerify,
        Format::WycheproofEddsa,
        Format::WycheproofEcdsa,
    ] {
        assert_eq!(Format::parse(f.as_str()), Some(f));
        assert_eq!(f.family(), crate::Family::Sig);
        assert_eq!(f.id_kind(), "tcId");
    }
    assert_eq!(
        mldsa_lengths("ML-DSA-65"),
        Some(MldsaLengths {
            pk: 1952,
            sk: 4032,
            sig: 3309
        })
    );
    assert!(mldsa_lengths("Dilithium3").is_none());
    for s in [
        "eddsa_verify_schema",
        "ecdsa_verify_schema",
        "mldsa_sign_seed_schema",
        "mldsa_sign_noseed_schema",
    ] {
        assert!(SUPPORTED.contains(s), "{s}");
    }
}

#[test]
fn the_repository_files_parse_with_their_own_counts() {
    let _serial = crate::rng::serial();
    let cases = [
        (SEED, Format::WycheproofMldsaSign, "ML-DSA-65"),
        (NOSEED, Format::WycheproofMldsaSign, "ML-DSA-65"),
        (VERIFY, Format::WycheproofMldsaVerify, "ML-DSA-65"),
        (ED25519, Format::WycheproofEddsa, "Ed25519"),
        (ECDSA, Format::WycheproofEcdsa, "ECDSA-P256-SHA256"),
    ];
    for (name, format, algorithm) in cases {
        let raw = file_json(name);
        let f = load(&wycheproof(name)).unwrap();
        assert_eq!(f.format(), format, "{name}");
        assert_eq!(f.stated_algorithms(), [algorithm], "{name}");
        assert_eq!(f.tests() as u64, raw["numberOfTests"].as_u64().unwrap(), "{name}");
        assert_eq!(f.tests(), all_tests(&raw).len(), "{name}");
    }
    let External::MldsaSign(f) = load(&wycheproof(SEED)).unwrap() else {
        panic!()
    };
    let tests: Vec<&SignTest> = f.groups.iter().flat_map(|g| &g.tests).collect();
    assert_eq!(tests.iter().filter(|t| t.msg.is_none()).count(), 17, "mu-only tests");
    assert_eq!(tests.iter().filter(|t| t.case.result == Expect::Invalid).count(), 4);
    assert_eq!(tests.iter().filter(|t| t.rnd.is_some()).count(), 1);
    // Seeds of wrong lengths (invalid tests) are kept, without a public key.
    let odd: Vec<usize> = f
        .groups
        .iter()
        .filter_map(|g| match &g.key {
            SignKey::Seed(s) if s.len() != 32 => Some(s.len()),
            _ => None,
        })
        .collect();
    assert_eq!(odd, [0, 31, 33]);
    assert!(f.groups.iter().all(|g| matches!(g.key, SignKey::Seed(_))));
    let External::MldsaSign(f) = load(&wycheproof(NOSEED)).unwrap() else {
        panic!()
    };
    assert!(f
        .groups
        .iter()
        .all(|g| matches!(&g.key, SignKey::Expanded(k) if (4031..=4033).contains(&k.len()))));
    let External::SigVerify(f) = load(&wycheproof(VERIFY)).unwrap() else {
        panic!()
    };
    let lengths: BTreeSet<usize> = f.groups.iter().map(|g| g.public_key.len()).collect();
    assert_eq!(lengths, BTreeSet::from([1951, 1952, 1953]));
    let External::SigVerify(f) = load(&wycheproof(ECDSA)).unwrap() else {
        panic!()
    };
    assert!(f
        .groups
        .iter()
        .all(|g| g.public_key.len() == 65 && g.public_key[0] == 4));
    let External::SigVerify(f) = load(&wycheproof(ED25519)).unwrap() else {
        panic!()
    };
    assert!(f.groups.iter().all(|g| g.public_key.len() == 32));
}

/// A copy of `name` with `edit` applied.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v = file_json(name);
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

fn test_at(v: &mut Value, group: usize, test: usize) -> &mut Value {
    &mut v["testGroups"][group]["tests"][test]
}

#[test]
fn malformed_files_are_one_line_errors_naming_file_and_tcid() {
    let _serial = crate::rng::serial();
    let d = tempfile::tempdir().unwrap();
    let ecdsa_group2 = file_json(ECDSA)["testGroups"][1]["tests"][0]["tcId"].clone();
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit, String)> = vec![
        (
            ED25519,
            Box::new(|v| test_at(v, 0, 0)["sig"] = json!("zz")),
            "tcId 1: `sig` is not hex".into(),
        ),
        (
            ED25519,
            Box::new(|v| {
                v["testGroups"][0]["publicKey"].as_object_mut().unwrap().remove("pk");
            }),
            "test group 1 (tcId 1): no `publicKey.pk` string".into(),
        ),
        (
            ECDSA,
            Box::new(|v| v["testGroups"][1]["publicKey"]["uncompressed"] = json!("04zz")),
            format!("test group 2 (tcId {ecdsa_group2}): `publicKey.uncompressed` is not hex"),
        ),
        (
            ECDSA,
            Box::new(|v| {
                test_at(v, 0, 0).as_object_mut().unwrap().remove("msg");
            }),
            "tcId 1: no `msg` string".into(),
        ),
        (
            VERIFY,
            Box::new(|v| test_at(v, 0, 0)["sig"] = json!("00")),
            "tcId 1: `sig` has 1 bytes, not 3309".into(),
        ),
        (
            VERIFY,
            Box::new(|v| {
                test_at(v, 0, 0).as_object_mut().unwrap().remove("result");
            }),
            "tcId 1: no `result` string".into(),
        ),
        (
            VERIFY,
            Box::new(|v| test_at(v, 0, 0)["ctx"] = json!("00".repeat(256))),
            "tcId 1: `ctx` has 256 bytes, more than FIPS 204's 255".into(),
        ),
        (
            VERIFY,
            Box::new(|v| v["testGroups"][0]["publicKey"] = json!("0000")),
            "tcId 1: `publicKey` has 2 bytes, not 1952".into(),
        ),
        (
            SEED,
            Box::new(|v| {
                let t = test_at(v, 0, 0).as_object_mut().unwrap();
                t.remove("msg");
                t.remove("mu");
            }),
            "tcId 1: neither `msg` nor `mu`".into(),
        ),
        (
            SEED,
            Box::new(|v| v["testGroups"][0]["privateSeed"] = json!("00")),
            "tcId 1: `privateSeed` has 1 bytes, not 32".into(),
        ),
        (
            SEED,
            Box::new(|v| v["testGroups"][0]["publicKey"] = Value::Null),
            "tcId 1: its group has no `publicKey`".into(),
        ),
        (
            SEED,
            Box::new(|v| {
                let last = v["testGroups"].as_array().unwrap().len() - 1;
                test_at(v, last, 0)["rnd"] = json!("00");
            }),
            "tcId 109: `rnd` has 1 bytes, not 32".into(),
        ),
        (
            NOSEED,
            Box::new(|v| v["testGroups"][0]["privateKey"] = json!("0g")),
            "test group 1 (tcId 1): `privateKey` is not hex".into(),
        ),
        (
            NOSEED,
            Box::new(|v| test_at(v, 0, 1)["flags"] = json!("ValidSignature")),
            "tcId 2: `flags` is not an array of strings".into(),
        ),
        (
            NOSEED,
            Box::new(|v| {
                test_at(v, 0, 0).as_object_mut().unwrap().remove("tcId");
            }),
            "a test has no numeric `tcId`".into(),
        ),
        (NOSEED, Box::new(|v| v["testGroups"] = json!([])), "no tests".into()),
    ];
    for (name, edit, want) in cases {
        let p = edited(d.path(), name, edit);
        let e = load(&p).unwrap_err();
        assert!(matches!(e, ExternalError::Malformed { .. }), "{want}: {e}");
        let e = e.to_string();
        assert!(e.contains(name) && e.contains(&want), "{want}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A truncated file.
    let text = std::fs::read_to_string(wycheproof(ED25519)).unwrap();
    let p = d.path().join("cut.json");
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    assert!(load(&p).unwrap_err().to_string().contains("not valid JSON"));
}

#[test]
fn other_curves_hashes_and_parameter_sets_are_unsupported() {
    let _serial = crate::rng::serial();
    let d = tempfile::tempdir().unwrap();
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            ED25519,
            Box::new(|v| v["testGroups"][3]["publicKey"]["curve"] = json!("edwards448")),
            "test group 4 is for curve `edwards448`, only edwards25519 (Ed25519)",
        ),
        (
            ECDSA,
            Box::new(|v| v["testGroups"][0]["sha"] = json!("SHA-512")),
            "curve `secp256r1` with `SHA-512`, only secp256r1 with SHA-256",
        ),
        (
            ECDSA,
            Box::new(|v| v["testGroups"][2]["publicKey"]["curve"] = json!("secp384r1")),
            "test group 3 is for curve `secp384r1`",
        ),
        (
            VERIFY,
            Box::new(|v| v["algorithm"] = json!("ML-DSA-66")),
            "file for `ML-DSA-66`: only ML-DSA-44, ML-DSA-65 and ML-DSA-87",
        ),
        (
            SEED,
            Box::new(|v| v["algorithm"] = json!("Dilithium3\nFAKE")),
            "file for `Dilithium3\\nFAKE`",
        ),
    ];
    for (name, edit, want) in cases {
        let e = load(&edited(d.path(), name, edit)).unwrap_err();
        assert!(matches!(e, ExternalError::Unsupported(_)), "{want}: {e}");
        let e = e.to_string();
        assert!(e.contains(want) && e.contains("supported are"), "{want}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

fn sig_descriptor(algorithm: &str, keys: [usize; 2], randomness: Randomness, info: SigInfo) -> Descriptor {
    Descriptor::signature(
        algorithm,
        "test",
        "wrapper",
        "0".into(),
        "-".into(),
        keys,
        randomness,
        info,
    )
}

fn sig_info(bytes: usize, signing: Signing, context: bool) -> SigInfo {
    SigInfo {
        signature_bytes: bytes,
        variable_length: false,
        signing,
        context,
        scheme: "test".into(),
        encoding: "test".into(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Wrap {
    Right,
    /// Every signature verifies.
    AcceptsAll,
    /// Every public key is refused.
    RefusesKeys,
}

/// Verification only, over an independent library; the others are unavailable.
struct Library {
    desc: Descriptor,
    wrap: Wrap,
    ecdsa: bool,
}

fn ed25519(wrap: Wrap) -> Library {
    let info = sig_info(64, Signing::Deterministic, false);
    Library {
        desc: sig_descriptor("Ed25519", [32, 32], Randomness::Internal, info),
        wrap,
        ecdsa: false,
    }
}

fn p256(wrap: Wrap) -> Library {
    let mut info = sig_info(72, Signing::Randomized, false);
    info.variable_length = true;
    Library {
        desc: sig_descriptor("ECDSA-P256-SHA256", [65, 32], Randomness::Internal, info),
        wrap,
        ecdsa: true,
    }
}

enum LibraryKey {
    Ed25519(ed25519_dalek::VerifyingKey),
    P256(p256::ecdsa::VerifyingKey),
}

struct LibraryVerifier(LibraryKey, Wrap);

impl Sig for Library {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keypair(&self, _pk: &mut [u8], _sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        Err(OpError::Unavailable("verification only".into()))
    }
    fn signer<'a>(&'a self, _sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        Err(OpError::Unavailable("verification only".into()))
    }
    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let refused = |e: String| OpError::failed("verifier", e);
        if self.wrap == Wrap::RefusesKeys {
            return Err(refused("refuses every key".into()));
        }
        check_len("verifier", "pk", pk.len(), self.desc.sizes.public_key)?;
        let key = if self.ecdsa {
            LibraryKey::P256(p256::ecdsa::VerifyingKey::from_sec1_bytes(pk).map_err(|e| refused(e.to_string()))?)
        } else {
            let pk: &[u8; 32] = pk.try_into().unwrap();
            LibraryKey::Ed25519(ed25519_dalek::VerifyingKey::from_bytes(pk).map_err(|e| refused(e.to_string()))?)
        };
        Ok(Box::new(LibraryVerifier(key, self.wrap)))
    }
}

impl Verifier for LibraryVerifier {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        if !ctx.is_empty() {
            return Err(OpError::Unavailable("no contexts".into()));
        }
        if self.1 == Wrap::AcceptsAll {
            return Ok(true);
        }
        Ok(match &self.0 {
            LibraryKey::Ed25519(k) => ed25519_dalek::Signature::from_slice(sig)
                .is_ok_and(|s| ed25519_dalek::Verifier::verify(k, msg, &s).is_ok()),
            LibraryKey::P256(k) => p256::ecdsa::Signature::from_der(sig)
                .is_ok_and(|s| p256::ecdsa::signature::Verifier::verify(k, msg, &s).is_ok()),
        })
    }
}

fn run_file(s: &dyn Sig, name: &str) -> FileOutcome {
    run_sig(s, &load(&wycheproof(name)).unwrap()).expect("a signature file")
}

#[test]
fn independent_libraries_pass_every_test_and_broken_wrappers_fail_by_tcid() {
    let _serial = crate::rng::serial();
    for (name, right, accepts, refuses) in [
        (
            ED25519,
            ed25519(Wrap::Right),
            ed25519(Wrap::AcceptsAll),
            ed25519(Wrap::RefusesKeys),
        ),
        (
            ECDSA,
            p256(Wrap::Right),
            p256(Wrap::AcceptsAll),
            p256(Wrap::RefusesKeys),
        ),
    ] {
        let raw = file_json(name);
        let total = all_tests(&raw).len();
        let o = run_file(&right, name);
        assert_eq!(
            (o.passed, o.failed, o.skipped, o.acceptable),
            (total, 0, 0, 0),
            "{name}: {o:?}"
        );
        // Accepting everything fails exactly the invalid tests.
        let o = run_file(&accepts, name);
        let invalid = ids_where(&raw, |_, t| t["result"] == "invalid");
        assert_eq!(failed_ids(&o), invalid, "{name}");
        assert!(o
            .failures
            .iter()
            .all(|f| f.detail.starts_with("accepted an invalid signature")));
        // A refused key is a rejection: every valid test fails, every invalid one passes.
        let o = run_file(&refuses, name);
        assert_eq!(failed_ids(&o), ids_where(&raw, |_, t| t["result"] == "valid"), "{name}");
        assert_eq!(o.passed, invalid.len());
    }
}

#[test]
fn files_for_another_algorithm_or_family_are_refused() {
    let _serial = crate::rng::serial();
    let o = run_file(&ed25519(Wrap::Right), ECDSA);
    assert_eq!(failed_ids(&o), BTreeSet::from(["-".to_string()]));
    assert!(o.failures[0]
        .detail
        .contains("the file is for ECDSA-P256-SHA256, the subject is Ed25519"));
    let x25519 = External::X25519(Vec::new());
    assert!(run_sig(&ed25519(Wrap::Right), &x25519).is_none());
}

/// Four bytes that begin the toy's own secret keys: `TOY!` ‖ pk ‖ zeros.
const TOY_SK: &[u8; 4] = b"TOY!";
const PK: usize = 1952;
const SK: usize = 4032;
const SIG: usize = 3309;

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Signs with rnd all zero whatever it draws (deterministic while said hedged).
    IgnoresRnd,
    /// Key generation draws 16 bytes of its seed, the rest all 0xff.
    ShortDraw,
    /// Takes any expanded key of the right length (no range check of s1, s2).
    LaxKeys,
    /// Every signature verifies.
    AcceptsAll,
}

type Quad = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);
type Triple = (Vec<u8>, Vec<u8>, Vec<u8>);

/// The files' values as tables.
#[derive(Default)]
struct Known {
    /// seed → public key.
    seeds: HashMap<Vec<u8>, Vec<u8>>,
    /// Expanded private key (of groups with tests that are not invalid) → public key.
    expanded: HashMap<Vec<u8>, Vec<u8>>,
    /// (pk, msg, ctx, rnd) → signature.
    signed: HashMap<Quad, Vec<u8>>,
    /// (pk, msg, ctx) → one of its signatures, whatever the rnd.
    any: HashMap<Triple, Vec<u8>>,
    /// (pk, msg, ctx, sig) that verify.
    valid: HashSet<Quad>,
}

fn known() -> Known {
    let mut k = Known::default();
    for name in [SEED, NOSEED] {
        let External::MldsaSign(f) = load(&wycheproof(name)).unwrap() else {
            panic!()
        };
        for g in &f.groups {
            let Some(pk) = &g.public_key else { continue };
            let valid: Vec<&SignTest> = g.tests.iter().filter(|t| t.case.result == Expect::Valid).collect();
            if !valid.is_empty() {
                match &g.key {
                    SignKey::Seed(s) => k.seeds.insert(s.clone(), pk.clone()),
                    SignKey::Expanded(sk) => k.expanded.insert(sk.clone(), pk.clone()),
                };
            }
            for t in valid {
                let Some(msg) = &t.msg else { continue };
                let ctx = t.ctx.clone().unwrap_or_default();
                let rnd = t.rnd.clone().unwrap_or_else(|| vec![0; 32]);
                k.signed
                    .insert((pk.clone(), msg.clone(), ctx.clone(), rnd), t.sig.clone());
                k.any.insert((pk.clone(), msg.clone(), ctx.clone()), t.sig.clone());
                k.valid.insert((pk.clone(), msg.clone(), ctx, t.sig.clone()));
            }
        }
    }
    let External::SigVerify(f) = load(&wycheproof(VERIFY)).unwrap() else {
        panic!()
    };
    for g in &f.groups {
        for t in g.tests.iter().filter(|t| t.case.result == Expect::Valid) {
            let ctx = t.ctx.clone().unwrap_or_default();
            k.valid
                .insert((g.public_key.clone(), t.msg.clone(), ctx, t.sig.clone()));
        }
    }
    k
}

/// A toy ML-DSA-65 that answers from the files' tables: key generation draws the 32-byte
/// seed, signing draws the 32-byte rnd. With `seed_keys` its secret key is the seed itself.
struct Toy {
    desc: Descriptor,
    known: Known,
    fault: Fault,
    seed_keys: bool,
}

fn toy(randomness: Randomness, fault: Fault) -> Toy {
    let info = sig_info(SIG, Signing::Hedged, true);
    Toy {
        desc: sig_descriptor("ML-DSA-65", [PK, SK], randomness, info),
        known: known(),
        fault,
        seed_keys: false,
    }
}

struct ToySigner<'a> {
    toy: &'a Toy,
    pk: Vec<u8>,
}

struct ToyVerifier<'a> {
    toy: &'a Toy,
    pk: Vec<u8>,
}

impl Sig for Toy {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        let mut seed = [0xffu8; 32];
        let drawn = if self.fault == Fault::ShortDraw { 16 } else { 32 };
        crate::rng::fill(&mut seed[..drawn]);
        let public = self
            .known
            .seeds
            .get(seed.as_slice())
            .cloned()
            .unwrap_or_else(|| vec![0; PK]);
        pk.copy_from_slice(&public);
        sk.fill(0);
        if self.seed_keys {
            sk.copy_from_slice(&seed);
        } else {
            sk[..4].copy_from_slice(TOY_SK);
            sk[4..4 + PK].copy_from_slice(&public);
        }
        Ok((PK, sk.len()))
    }
    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        check_len("signer", "sk", sk.len(), self.desc.sizes.secret_key)?;
        let pk = if self.seed_keys {
            self.known.seeds.get(sk).cloned()
        } else if sk.starts_with(TOY_SK) {
            Some(sk[4..4 + PK].to_vec())
        } else {
            let lax = (self.fault == Fault::LaxKeys).then(|| vec![0; PK]);
            self.known.expanded.get(sk).cloned().or(lax)
        };
        let pk = pk.ok_or_else(|| OpError::failed("signer", "a private key out of range"))?;
        Ok(Box::new(ToySigner { toy: self, pk }))
    }
    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        check_len("verifier", "pk", pk.len(), PK)?;
        Ok(Box::new(ToyVerifier {
            toy: self,
            pk: pk.to_vec(),
        }))
    }
}

impl Signer for ToySigner<'_> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        if ctx.len() > 255 {
            return Err(OpError::failed("sign", "a context over 255 bytes"));
        }
        let mut rnd = vec![0u8; 32];
        crate::rng::fill(&mut rnd);
        let k = &self.toy.known;
        let (pk, msg, ctx) = (self.pk.clone(), msg.to_vec(), ctx.to_vec());
        let found = if self.toy.fault == Fault::IgnoresRnd {
            k.signed.get(&(pk, msg, ctx, vec![0; 32]))
        } else {
            let hedged = k.any.get(&(pk.clone(), msg.clone(), ctx.clone()));
            k.signed.get(&(pk, msg, ctx, rnd)).or(hedged)
        };
        match found {
            Some(s) => sig[..SIG].copy_from_slice(s),
            None => sig[..SIG].fill(0x5a),
        }
        Ok(SIG)
    }
}

impl Verifier for ToyVerifier<'_> {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        let quad = (self.pk.clone(), msg.to_vec(), ctx.to_vec(), sig.to_vec());
        Ok(self.toy.fault == Fault::AcceptsAll || self.toy.known.valid.contains(&quad))
    }
}

fn counts(o: &FileOutcome) -> (usize, usize, usize) {
    (o.passed, o.failed, o.skipped)
}

#[test]
fn mldsa_verify_file_on_the_toy() {
    let _serial = crate::rng::serial();
    let raw = file_json(VERIFY);
    let o = run_file(&toy(Randomness::Internal, Fault::None), VERIFY);
    assert_eq!(counts(&o), (210, 0, 0), "{o:?}");
    // Accepting every signature fails the invalid tests, except those whose key (of a
    // wrong length) is refused: a refused key is a rejection.
    let o = run_file(&toy(Randomness::Internal, Fault::AcceptsAll), VERIFY);
    let want = ids_where(&raw, |g, t| {
        t["result"] == "invalid" && g["publicKey"].as_str().unwrap().len() == 2 * PK
    });
    assert_eq!(want.len(), 127);
    assert_eq!(failed_ids(&o), want);
}

#[test]
fn mldsa_seed_file_reproduced_from_harness_randomness() {
    let _serial = crate::rng::serial();
    let o = run_file(&toy(Randomness::Harness, Fault::None), SEED);
    // 84 valid tests signed to the file's signature, tcId 5's 256-byte context refused; 17
    // tests give only mu; the 0-, 31- and 33-byte seeds cannot reach key generation.
    assert_eq!(counts(&o), (85, 0, 20), "{o:?}");
    let notes = o.notes.join("\n");
    assert!(notes.contains("17 skipped: only μ is given"), "{notes}");
    assert!(
        notes.contains("3 skipped: a seed of another length than 32 bytes"),
        "{notes}"
    );
    // Its secret key the seed: those seeds are presented to the signer, and refused.
    let mut seeds = toy(Randomness::Harness, Fault::None);
    seeds.seed_keys = true;
    seeds.desc.sizes.secret_key = 32;
    assert_eq!(counts(&run_file(&seeds, SEED)), (88, 0, 17));
    // The rnd drawn must be the test's: only the hedged test (tcId 109) tells.
    let o = run_file(&toy(Randomness::Harness, Fault::IgnoresRnd), SEED);
    assert_eq!(failed_ids(&o), BTreeSet::from(["109".to_string()]), "{o:?}");
    assert!(
        o.failures[0]
            .detail
            .contains("signs differently from the file (Randomized"),
        "{o:?}"
    );
    // Key generation must draw the whole seed: half of it gives other keys, and every valid
    // test fails.
    let o = run_file(&toy(Randomness::Harness, Fault::ShortDraw), SEED);
    assert_eq!((o.passed, o.failed), (1, 84), "{o:?}");
    assert!(o.failures[0].detail.contains("drew 16 bytes"), "{o:?}");
}

#[test]
fn mldsa_seed_file_without_injectable_randomness_is_checked_by_verification() {
    let _serial = crate::rng::serial();
    let o = run_file(&toy(Randomness::Internal, Fault::None), SEED);
    assert_eq!(counts(&o), (85, 0, 20), "{o:?}");
    let notes = o.notes.join("\n");
    assert!(
        notes.contains("randomness not injectable")
            && notes.contains("84 valid sign tests were checked by verification"),
        "{notes}"
    );
    // Its verifier is what is checked: accepting everything still passes the valid tests,
    // and signing with a 256-byte context is still refused with its own key.
    let o = run_file(&toy(Randomness::Internal, Fault::AcceptsAll), SEED);
    assert_eq!(counts(&o), (85, 0, 20), "{o:?}");
}

#[test]
fn mldsa_expanded_keys_sign_and_verify() {
    let _serial = crate::rng::serial();
    let o = run_file(&toy(Randomness::Harness, Fault::None), NOSEED);
    // 63 valid tests signed (fresh randomness, verified; then exactly), 5 invalid refused.
    assert_eq!(counts(&o), (68, 0, 10), "{o:?}");
    assert!(o
        .notes
        .iter()
        .any(|n| n.starts_with("63 valid tests signed with the file's expanded private key")));
    let o = run_file(&toy(Randomness::Internal, Fault::None), NOSEED);
    assert_eq!(counts(&o), (68, 0, 10), "{o:?}");
    // Keys with s1 or s2 out of range must be refused.
    let o = run_file(&toy(Randomness::Internal, Fault::LaxKeys), NOSEED);
    assert_eq!(
        failed_ids(&o),
        BTreeSet::from(["56".to_string(), "57".to_string()]),
        "{o:?}"
    );
    assert!(
        o.failures[0]
            .detail
            .contains("signed an invalid test (InvalidPrivateKey"),
        "{o:?}"
    );
    // A subject whose secret key is another encoding cannot take them: all skipped.
    let mut seeds = toy(Randomness::Harness, Fault::None);
    seeds.seed_keys = true;
    seeds.desc.sizes.secret_key = 32;
    let o = run_file(&seeds, NOSEED);
    assert_eq!(counts(&o), (0, 0, 78), "{o:?}");
    assert!(o
        .notes
        .iter()
        .any(|n| n.contains("68 skipped: the file's private keys are FIPS 204 expanded keys")));
}

#[test]
fn the_gate_records_lax_secret_keys_beside_itself() {
    let _serial = crate::rng::serial();
    // The gate runs the repository's ML-DSA-65 files: a signer that takes s1 or s2 out of
    // range fails only tcIds 56 and 57, which the gate reports as its input check, not as a
    // failed file; one that refuses them is "sk checked".
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"));
    let noseed = "wycheproof mldsa_65_sign_noseed_test.json";
    let lax = crate::sig_gate::gate_sig(
        &toy(Randomness::Internal, Fault::LaxKeys),
        &dir,
        crate::gate::KatDepth::Single,
        0,
        None,
    );
    let c = lax
        .report
        .checks
        .iter()
        .find(|c| c.name == noseed)
        .expect("the noseed file ran");
    assert!(
        c.ok && c.detail.contains("2 malformed secret keys accepted (tcId 56, 57"),
        "{c:?}"
    );
    assert_eq!(lax.report.input_check.as_deref(), Some("does not validate sk"));
    let strict = crate::sig_gate::gate_sig(
        &toy(Randomness::Internal, Fault::None),
        &dir,
        crate::gate::KatDepth::Single,
        0,
        None,
    );
    assert!(strict
        .report
        .checks
        .iter()
        .find(|c| c.name == noseed)
        .is_some_and(|c| c.ok));
    assert_eq!(strict.report.input_check.as_deref(), Some("sk checked"));
}
