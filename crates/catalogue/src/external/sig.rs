//! Wycheproof's signature schemas, run through the [`Sig`] trait:
//!
//! - `eddsa_verify_schema` (curve edwards25519: Ed25519), `ecdsa_verify_schema` (secp256r1
//!   with SHA-256 and DER signatures: ECDSA-P256-SHA256) and `mldsa_verify_schema`
//!   (ML-DSA-44, -65, -87): the group's public key in the catalogue's encoding (Ed25519's
//!   32 bytes, the 65-byte SEC1 uncompressed P-256 point Wycheproof gives as
//!   `publicKey.uncompressed`, ML-DSA's FIPS 204 public key), then `verify(msg, ctx, sig)`:
//!   `valid` must verify, `invalid` must not (a key the library refuses is a rejection),
//!   `acceptable` may do either.
//! - `mldsa_sign_seed_schema`: key generation from a 32-byte seed and deterministic signing.
//!   A subject that draws its randomness through the harness gets the seed as the 32 bytes
//!   key generation draws, then the test's `rnd` (all zero when none is given: FIPS 204's
//!   deterministic variant) as the 32 bytes signing draws, and must give the file's public
//!   key and exactly the file's signature. A subject with its own randomness cannot take the
//!   seed: its valid tests become checks that the file's signature verifies under the
//!   file's public key, and the notes say so.
//! - `mldsa_sign_noseed_schema`: FIPS 204 expanded private keys. A subject whose secret key
//!   is that encoding signs with the file's key (fresh randomness: hedged) and its signature
//!   must verify under the file's public key; a subject that draws through the harness must
//!   also give exactly the file's signature from the test's `rnd` (or zeros).
//!
//! In both signing schemas `invalid` tests (a context over 255 bytes, a private key of the
//! wrong length or with coefficients out of range) must be refused by signing. Tests that
//! give only μ (flag `Internal`: ML-DSA.Sign_internal with an external μ) cannot be
//! presented through the [`crate::traits::Signer`] trait, which signs a message under a
//! context: they are counted as skipped. Parsing refuses a file whose fields contradict its
//! schema in a test that is not `invalid` (a signature or a key of another length than the
//! parameter set's); keys and signatures of wrong lengths in `invalid` tests are what those
//! tests are about, and are kept to be presented. Expected values come only from the file.

use super::*;
use crate::descriptor::{Descriptor, SigInfo, Signing};
use crate::sig_gate::{keypair, sign, verify};
use crate::traits::Sig;

/// FIPS 204's ML-DSA key generation seed ξ, and the randomness `rnd` signing draws.
const SEED_BYTES: usize = 32;

/// The byte lengths of an ML-DSA parameter set (FIPS 204 §4, Table 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MldsaLengths {
    pub pk: usize,
    /// The expanded private key (skEncode).
    pub sk: usize,
    pub sig: usize,
}

/// The lengths of a catalogue ML-DSA parameter set (`None` for any other name).
pub fn mldsa_lengths(parameter_set: &str) -> Option<MldsaLengths> {
    let (pk, sk, sig) = match parameter_set {
        "ML-DSA-44" => (1312, 2560, 2420),
        "ML-DSA-65" => (1952, 4032, 3309),
        "ML-DSA-87" => (2592, 4896, 4627),
        _ => return None,
    };
    crate::names::algorithm(parameter_set)?;
    Some(MldsaLengths { pk, sk, sig })
}

/// Which verification schema a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifySchema {
    Eddsa,
    Ecdsa,
    Mldsa,
}

/// What every signature test has besides its data.
#[derive(Debug, Clone)]
pub struct SigCase {
    pub tc_id: u64,
    pub comment: String,
    /// Wycheproof's flags (the file's `notes` say what each means).
    pub flags: Vec<String>,
    pub result: Expect,
}

/// A verification test: does `sig` verify for `msg` (under `ctx`) with the group's key.
#[derive(Debug, Clone)]
pub struct VerifyTest {
    pub case: SigCase,
    pub msg: Vec<u8>,
    /// The context string, when the test gives one (ML-DSA).
    pub ctx: Option<Vec<u8>>,
    pub sig: Vec<u8>,
}

/// A group of verification tests under one public key.
#[derive(Debug, Clone)]
pub struct VerifyGroup {
    /// In the catalogue's encoding: Ed25519's 32 bytes, P-256's 65-byte SEC1 uncompressed
    /// point, ML-DSA's public key as FIPS 204 encodes it.
    pub public_key: Vec<u8>,
    pub tests: Vec<VerifyTest>,
}

/// A parsed verification file.
#[derive(Debug, Clone)]
pub struct SigVerifyFile {
    pub schema: VerifySchema,
    /// The catalogue algorithm: Ed25519, ECDSA-P256-SHA256, ML-DSA-65.
    pub algorithm: String,
    pub groups: Vec<VerifyGroup>,
}

/// The private key of an ML-DSA signing group.
#[derive(Debug, Clone)]
pub enum SignKey {
    /// `privateSeed`: the key generation seed ξ (32 bytes in a test that is not invalid).
    Seed(Vec<u8>),
    /// `privateKey`: FIPS 204's expanded private key.
    Expanded(Vec<u8>),
}

/// A signing test: sign `msg` under `ctx` (with `rnd`, or zeros) to `sig`, or be refused.
#[derive(Debug, Clone)]
pub struct SignTest {
    pub case: SigCase,
    /// Absent when the test gives only `mu`.
    pub msg: Option<Vec<u8>>,
    pub ctx: Option<Vec<u8>>,
    /// 32 bytes, for a hedged signature (flag `Randomized`).
    pub rnd: Option<Vec<u8>>,
    pub mu: Option<Vec<u8>>,
    /// Empty in an invalid test.
    pub sig: Vec<u8>,
}

/// A group of signing tests under one key.
#[derive(Debug, Clone)]
pub struct SignGroup {
    pub key: SignKey,
    /// Absent (null) in groups whose private key is invalid.
    pub public_key: Option<Vec<u8>>,
    pub tests: Vec<SignTest>,
}

/// A parsed ML-DSA signing file (`mldsa_sign_seed_schema` or `mldsa_sign_noseed_schema`).
#[derive(Debug, Clone)]
pub struct MldsaSignFile {
    /// The parameter set: ML-DSA-65.
    pub algorithm: String,
    pub groups: Vec<SignGroup>,
}

fn unsupported(path: &Path, why: String) -> ExternalError {
    ExternalError::Unsupported(format!(
        "unsupported vector file {}: {why}; {SUPPORTED}",
        path.display()
    ))
}

/// Parses a file of one of this module's schemas (`None`: another schema).
pub(super) fn load_schema(
    path: &Path,
    schema: &str,
    v: &serde_json::Value,
    groups: &[serde_json::Value],
) -> Result<Option<External>, ExternalError> {
    let verify = [
        ("eddsa_verify_schema", VerifySchema::Eddsa),
        ("ecdsa_verify_schema", VerifySchema::Ecdsa),
        ("mldsa_verify_schema", VerifySchema::Mldsa),
    ]
    .into_iter()
    .find(|(prefix, _)| schema.starts_with(prefix));
    if let Some((_, kind)) = verify {
        return load_verify(path, kind, v, groups).map(|f| Some(External::SigVerify(f)));
    }
    let seeded = if schema.starts_with("mldsa_sign_seed_schema") {
        true
    } else if schema.starts_with("mldsa_sign_noseed_schema") {
        false
    } else {
        return Ok(None);
    };
    load_sign(path, seeded, v, groups).map(|f| Some(External::MldsaSign(f)))
}

/// The file's ML-DSA parameter set (its top-level `algorithm`).
fn mldsa_algorithm(path: &Path, v: &serde_json::Value) -> Result<(String, MldsaLengths), ExternalError> {
    let a = v.get("algorithm").and_then(|a| a.as_str()).unwrap_or("");
    mldsa_lengths(a).map(|n| (a.to_string(), n)).ok_or_else(|| {
        unsupported(
            path,
            format!("Wycheproof ML-DSA file for `{a}`: only ML-DSA-44, ML-DSA-65 and ML-DSA-87 are in the catalogue"),
        )
    })
}

/// "test group 3 (tcId 17)": a group, by its place and its first test.
fn group_name(g: &serde_json::Value, gi: usize) -> String {
    let first = g
        .get("tests")
        .and_then(|t| t.as_array())
        .and_then(|t| t.first())
        .and_then(|t| t.get("tcId"))
        .and_then(|x| x.as_u64());
    match first {
        Some(id) => format!("test group {} (tcId {id})", gi + 1),
        None => format!("test group {}", gi + 1),
    }
}

/// A group's string at `pointer` ("/publicKey/pk").
fn group_str<'a>(path: &Path, g: &'a serde_json::Value, gi: usize, pointer: &str) -> Result<&'a str, ExternalError> {
    g.pointer(pointer).and_then(|x| x.as_str()).ok_or_else(|| {
        let field = pointer.trim_start_matches('/').replace('/', ".");
        malformed(path, format!("{}: no `{field}` string", group_name(g, gi)))
    })
}

/// A group's hex field at `pointer`.
fn group_hex(path: &Path, g: &serde_json::Value, gi: usize, pointer: &str) -> Result<Vec<u8>, ExternalError> {
    let s = group_str(path, g, gi, pointer)?;
    hex::decode(s).map_err(|e| {
        let field = pointer.trim_start_matches('/').replace('/', ".");
        malformed(path, format!("{}: `{field}` is not hex ({e})", group_name(g, gi)))
    })
}

/// A test's id, comment, flags and result.
fn case_of(path: &Path, t: &serde_json::Value) -> Result<SigCase, ExternalError> {
    let id = tc_id(path, t)?;
    let flags = match t.get("flags") {
        None => Vec::new(),
        Some(f) => f
            .as_array()
            .and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect())
            .ok_or_else(|| malformed(path, format!("tcId {id}: `flags` is not an array of strings")))?,
    };
    Ok(SigCase {
        tc_id: id,
        comment: t.get("comment").and_then(|c| c.as_str()).unwrap_or("").to_string(),
        flags,
        result: result_of(path, t, id)?,
    })
}

/// A hex field that may be absent.
fn maybe_hex(path: &Path, t: &serde_json::Value, id: u64, key: &str) -> Result<Option<Vec<u8>>, ExternalError> {
    t.get(key).map(|_| hex_json(path, t, id, key)).transpose()
}

/// A field of a test that is not invalid must have its parameter set's length.
fn sized(path: &Path, id: u64, field: &str, got: usize, want: usize, what: &str) -> Result<(), ExternalError> {
    if got == want {
        return Ok(());
    }
    Err(malformed(
        path,
        format!("tcId {id}: `{field}` has {got} bytes, not {want} ({what} of a test that is not invalid)"),
    ))
}

/// FIPS 204 contexts are at most 255 bytes: a longer one only in an invalid test.
fn context_fits(path: &Path, case: &SigCase, ctx: Option<&Vec<u8>>) -> Result<(), ExternalError> {
    match ctx {
        Some(c) if c.len() > 255 && case.result != Expect::Invalid => Err(malformed(
            path,
            format!(
                "tcId {}: `ctx` has {} bytes, more than FIPS 204's 255, in a test that is not invalid",
                case.tc_id,
                c.len()
            ),
        )),
        _ => Ok(()),
    }
}

/// The group's public key in the catalogue's encoding, after checking the group is for the
/// schema's one supported curve and hash.
fn verify_key(path: &Path, kind: VerifySchema, g: &serde_json::Value, gi: usize) -> Result<Vec<u8>, ExternalError> {
    let text = |p: &str| g.pointer(p).and_then(|x| x.as_str()).unwrap_or("");
    match kind {
        VerifySchema::Eddsa => {
            let curve = text("/publicKey/curve");
            if curve != "edwards25519" {
                return Err(unsupported(
                    path,
                    format!(
                        "test group {} is for curve `{curve}`, only edwards25519 (Ed25519) is supported in eddsa_verify_schema",
                        gi + 1
                    ),
                ));
            }
            group_hex(path, g, gi, "/publicKey/pk")
        }
        VerifySchema::Ecdsa => {
            let (curve, sha) = (text("/publicKey/curve"), text("/sha"));
            if curve != "secp256r1" || sha != "SHA-256" {
                return Err(unsupported(
                    path,
                    format!(
                        "test group {} is for curve `{curve}` with `{sha}`, only secp256r1 with SHA-256 \
                         (ECDSA-P256-SHA256) is supported in ecdsa_verify_schema",
                        gi + 1
                    ),
                ));
            }
            group_hex(path, g, gi, "/publicKey/uncompressed")
        }
        VerifySchema::Mldsa => group_hex(path, g, gi, "/publicKey"),
    }
}

fn load_verify(
    path: &Path,
    kind: VerifySchema,
    v: &serde_json::Value,
    groups: &[serde_json::Value],
) -> Result<SigVerifyFile, ExternalError> {
    let mldsa = match kind {
        VerifySchema::Mldsa => Some(mldsa_algorithm(path, v)?),
        _ => None,
    };
    let algorithm = match (&mldsa, kind) {
        (Some((a, _)), _) => a.clone(),
        (None, VerifySchema::Ecdsa) => "ECDSA-P256-SHA256".to_string(),
        (None, _) => "Ed25519".to_string(),
    };
    let mut out = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let public_key = verify_key(path, kind, g, gi)?;
        let mut tests = Vec::new();
        for t in tests_of(path, g, gi)? {
            let case = case_of(path, t)?;
            let id = case.tc_id;
            let x = VerifyTest {
                msg: hex_json(path, t, id, "msg")?,
                ctx: maybe_hex(path, t, id, "ctx")?,
                sig: hex_json(path, t, id, "sig")?,
                case,
            };
            if let (Some((set, n)), false) = (&mldsa, x.case.result == Expect::Invalid) {
                let key = format!("the group's {set} public key");
                sized(path, id, "publicKey", public_key.len(), n.pk, &key)?;
                sized(path, id, "sig", x.sig.len(), n.sig, &format!("a {set} signature"))?;
                context_fits(path, &x.case, x.ctx.as_ref())?;
            }
            tests.push(x);
        }
        out.push(VerifyGroup { public_key, tests });
    }
    if out.iter().all(|g| g.tests.is_empty()) {
        return Err(malformed(path, "no tests"));
    }
    Ok(SigVerifyFile {
        schema: kind,
        algorithm,
        groups: out,
    })
}

fn sign_test(path: &Path, t: &serde_json::Value) -> Result<SignTest, ExternalError> {
    let case = case_of(path, t)?;
    let id = case.tc_id;
    let x = SignTest {
        msg: maybe_hex(path, t, id, "msg")?,
        ctx: maybe_hex(path, t, id, "ctx")?,
        rnd: maybe_hex(path, t, id, "rnd")?,
        mu: maybe_hex(path, t, id, "mu")?,
        sig: hex_json(path, t, id, "sig")?,
        case,
    };
    if x.msg.is_none() && x.mu.is_none() {
        return Err(malformed(path, format!("tcId {id}: neither `msg` nor `mu`")));
    }
    if let Some(r) = &x.rnd {
        if r.len() != SEED_BYTES {
            return Err(malformed(
                path,
                format!("tcId {id}: `rnd` has {} bytes, not 32 (signing draws 32)", r.len()),
            ));
        }
    }
    context_fits(path, &x.case, x.ctx.as_ref())?;
    Ok(x)
}

fn load_sign(
    path: &Path,
    seeded: bool,
    v: &serde_json::Value,
    groups: &[serde_json::Value],
) -> Result<MldsaSignFile, ExternalError> {
    let (algorithm, n) = mldsa_algorithm(path, v)?;
    let mut out = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let key = if seeded {
            SignKey::Seed(group_hex(path, g, gi, "/privateSeed")?)
        } else {
            SignKey::Expanded(group_hex(path, g, gi, "/privateKey")?)
        };
        let public_key = match g.get("publicKey") {
            None | Some(serde_json::Value::Null) => None,
            Some(_) => Some(group_hex(path, g, gi, "/publicKey")?),
        };
        let mut tests = Vec::new();
        for t in tests_of(path, g, gi)? {
            let x = sign_test(path, t)?;
            let id = x.case.tc_id;
            if x.case.result != Expect::Invalid {
                let (field, got, want) = match &key {
                    SignKey::Seed(s) => ("privateSeed", s.len(), SEED_BYTES),
                    SignKey::Expanded(k) => ("privateKey", k.len(), n.sk),
                };
                sized(path, id, field, got, want, "the group's key")?;
                let pk = public_key.as_ref().ok_or_else(|| {
                    malformed(
                        path,
                        format!("tcId {id}: its group has no `publicKey` (a test that is not invalid)"),
                    )
                })?;
                sized(path, id, "publicKey", pk.len(), n.pk, "the group's public key")?;
                sized(path, id, "sig", x.sig.len(), n.sig, &format!("a {algorithm} signature"))?;
            }
            tests.push(x);
        }
        out.push(SignGroup { key, public_key, tests });
    }
    if out.iter().all(|g| g.tests.is_empty()) {
        return Err(malformed(path, "no tests"));
    }
    Ok(MldsaSignFile { algorithm, groups: out })
}

/// Runs a signature file on `sig`; `None` when the file is not a signature file.
pub fn run_sig(sig: &dyn Sig, file: &External) -> Option<FileOutcome> {
    Some(match file {
        External::SigVerify(f) => run_sig_verify(sig, f),
        External::MldsaSign(f) => run_mldsa_sign(sig, f),
        _ => return None,
    })
}

/// A test's flags and comment, for a failure's detail: ` (InvalidContext; "…")`.
fn about(c: &SigCase) -> String {
    let mut parts = Vec::new();
    if !c.flags.is_empty() {
        parts.push(c.flags.join(", "));
    }
    if !c.comment.is_empty() {
        let short: String = c.comment.chars().take(80).collect();
        parts.push(format!("\"{short}\""));
    }
    if parts.is_empty() {
        return String::new();
    }
    one_line(&format!(" ({})", parts.join("; ")))
}

/// The subject's signature description, when the file is for its algorithm; otherwise the
/// mismatch is counted as a failure and `None` returned.
fn subject_info<'d>(t: &mut Tally, d: &'d Descriptor, algorithm: &str) -> Option<&'d SigInfo> {
    if d.algorithm != algorithm {
        t.fail(
            "-",
            format!("the file is for {algorithm}, the subject is {}", d.algorithm),
        );
        return None;
    }
    if d.sig.is_none() {
        t.fail("-", format!("{} has no signature description", d.id));
    }
    d.sig.as_ref()
}

const NO_CONTEXT: &str = "a non-empty context string, which the subject (a scheme without contexts) does not take";

/// Whether an error is the subject saying it cannot take what it was given.
fn unavailable(e: &str) -> bool {
    e.starts_with("unavailable")
}

/// Runs a Wycheproof verification file: every test's signature verified under its group's
/// public key (a key the library refuses is a rejection). `valid` must verify, `invalid`
/// must not, `acceptable` may do either; a canary overwritten is always a failure.
pub fn run_sig_verify(s: &dyn Sig, f: &SigVerifyFile) -> FileOutcome {
    let mut t = Tally::default();
    let Some(info) = subject_info(&mut t, s.descriptor(), &f.algorithm) else {
        return t.finish();
    };
    for g in &f.groups {
        for x in &g.tests {
            let (id, expect) = (x.case.tc_id, x.case.result);
            let ctx = x.ctx.as_deref().unwrap_or_default();
            match (verify(s, &g.public_key, &x.msg, ctx, &x.sig), expect) {
                (Err(e), _) if e.contains("canary") => t.fail(id, e),
                (Err(e), _) if unavailable(&e) && !ctx.is_empty() && !info.context => t.skip(NO_CONTEXT),
                (Err(e), Expect::Valid) => t.fail(id, format!("verify failed on a valid test{}: {e}", about(&x.case))),
                (Err(_), _) | (Ok(false), Expect::Invalid | Expect::Acceptable) => t.pass(expect, true),
                (Ok(false), Expect::Valid) => t.fail(id, format!("rejected a valid signature{}", about(&x.case))),
                (Ok(true), Expect::Invalid) => t.fail(
                    id,
                    format!(
                        "accepted an invalid signature{} ({} bytes, message of {} bytes)",
                        about(&x.case),
                        x.sig.len(),
                        x.msg.len()
                    ),
                ),
                (Ok(true), _) => t.pass(expect, false),
            }
        }
    }
    t.finish()
}

const MU_ONLY: &str = "only μ is given (flag Internal: FIPS 204 Sign_internal with an external μ), which the \
Signer trait cannot take: it signs a message under a context";

/// Runs `f` with `bytes` handed out as the harness's randomness (zeros after them);
/// returns its result and how many bytes it drew.
fn feeding<T>(bytes: &[u8], f: impl FnOnce() -> T) -> (T, usize) {
    let drawn = Arc::new(AtomicUsize::new(0));
    let r = {
        let _g = install_kat(Box::new(SeedFeed {
            seed: bytes.to_vec(),
            drawn: drawn.clone(),
        }));
        f()
    };
    (r, drawn.load(Ordering::SeqCst))
}

/// Signing must be refused (an invalid test); a canary overwritten is a failure.
fn refuse(t: &mut Tally, s: &dyn Sig, sk: &[u8], msg: &[u8], ctx: &[u8], case: &SigCase) {
    match sign(s, sk, msg, ctx) {
        Ok(sig) => t.fail(
            case.tc_id,
            format!(
                "signed an invalid test{}: a {}-byte private key, a {}-byte context, {} bytes signed",
                about(case),
                sk.len(),
                ctx.len(),
                sig.len()
            ),
        ),
        Err(e) if e.to_string().contains("canary") => t.fail(case.tc_id, e.to_string()),
        Err(_) => t.pass(Expect::Invalid, true),
    }
}

/// One run of an ML-DSA signing file, with what was checked only in part.
struct SignRun<'a> {
    s: &'a dyn Sig,
    info: &'a SigInfo,
    n: MldsaLengths,
    harness: bool,
    /// Valid tests checked by verifying the file's signature: the subject's randomness is
    /// its own, so the seed cannot reach key generation.
    verified_own_randomness: usize,
    /// Valid tests checked by verification: the subject signs deterministically and cannot
    /// take the test's `rnd`.
    verified_deterministic: usize,
    /// Valid tests of expanded keys signed with fresh randomness and verified.
    hedged: usize,
}

impl SignRun<'_> {
    /// Signs with `rnd` (zeros when the test gives none) handed out as the harness's
    /// randomness: the signature must be the file's, byte for byte.
    fn exact(&self, t: &mut Tally, sk: &[u8], msg: &[u8], ctx: &[u8], x: &SignTest) {
        let rnd = x.rnd.clone().unwrap_or_else(|| vec![0; SEED_BYTES]);
        match feeding(&rnd, || sign(self.s, sk, msg, ctx)) {
            (Ok(sig), _) if sig == x.sig => t.pass(x.case.result, false),
            (Ok(sig), drawn) => {
                let at = sig
                    .iter()
                    .zip(&x.sig)
                    .position(|(a, b)| a != b)
                    .unwrap_or(sig.len().min(x.sig.len()));
                t.fail(
                    x.case.tc_id,
                    format!(
                        "signs differently from the file{}: {} bytes against {}, first difference at byte {at} \
                         (signing drew {drawn} bytes of randomness; the rnd handed out is 32)",
                        about(&x.case),
                        sig.len(),
                        x.sig.len()
                    ),
                )
            }
            (Err(e), _) => t.fail(x.case.tc_id, format!("signing failed{}: {e}", about(&x.case))),
        }
    }

    /// The file's signature must verify under the file's public key.
    fn by_verification(&self, t: &mut Tally, pk: &[u8], msg: &[u8], ctx: &[u8], x: &SignTest) -> bool {
        match verify(self.s, pk, msg, ctx, &x.sig) {
            Ok(true) => {
                t.pass(x.case.result, false);
                true
            }
            Ok(false) => {
                t.fail(
                    x.case.tc_id,
                    format!(
                        "rejects the file's signature{} (a sign test checked by verification)",
                        about(&x.case)
                    ),
                );
                false
            }
            Err(e) => {
                t.fail(x.case.tc_id, format!("verify failed: {e}"));
                false
            }
        }
    }

    /// A group whose seed is not 32 bytes (every test of it is invalid): presented as the
    /// secret key to a subject whose secret key is the seed, else skipped.
    fn wrong_seed(&self, t: &mut Tally, g: &SignGroup, seed: &[u8]) {
        let takes_seeds = self.s.descriptor().sizes.secret_key == SEED_BYTES;
        for x in &g.tests {
            let Some(msg) = x.msg.as_deref() else {
                t.skip(MU_ONLY);
                continue;
            };
            if takes_seeds {
                refuse(t, self.s, seed, msg, x.ctx.as_deref().unwrap_or_default(), &x.case);
            } else {
                t.skip(
                    "a seed of another length than 32 bytes: key generation takes its seed as 32 bytes of \
                     injected randomness and the subject's secret key is not the seed, so it cannot be presented",
                );
            }
        }
    }

    /// A group of `mldsa_sign_seed_schema`.
    fn seed_group(&mut self, t: &mut Tally, g: &SignGroup, seed: &[u8]) {
        if seed.len() != SEED_BYTES {
            return self.wrong_seed(t, g, seed);
        }
        // The key to sign with: from the seed (harness), else the subject's own, needed only
        // to present the invalid tests.
        let (key, drawn) = if self.harness {
            feeding(seed, || keypair(self.s))
        } else if g.tests.iter().any(|x| x.case.result == Expect::Invalid) {
            (keypair(self.s), 0)
        } else {
            (Err("no key needed".to_string()), 0)
        };
        for x in &g.tests {
            let id = x.case.tc_id;
            let Some(msg) = x.msg.as_deref() else {
                t.skip(MU_ONLY);
                continue;
            };
            let ctx = x.ctx.as_deref().unwrap_or_default();
            if x.case.result == Expect::Invalid {
                match &key {
                    Ok((_, sk)) => refuse(t, self.s, sk, msg, ctx, &x.case),
                    Err(e) => t.fail(id, format!("no key to present the invalid test with: {e}")),
                }
                continue;
            }
            if !ctx.is_empty() && !self.info.context {
                t.skip(NO_CONTEXT);
                continue;
            }
            let pk = g.public_key.as_deref().unwrap_or_default();
            if !self.harness {
                self.verified_own_randomness += usize::from(self.by_verification(t, pk, msg, ctx, x));
                continue;
            }
            match &key {
                Err(e) => t.fail(id, format!("key generation from the seed failed: {e}")),
                Ok((got, _)) if got != pk => t.fail(
                    id,
                    format!(
                        "from this seed key generation gives another public key than the file's (it drew {drawn} \
                         bytes of randomness; the seed is 32)"
                    ),
                ),
                Ok(_) if x.rnd.is_some() && self.info.signing == Signing::Deterministic => {
                    self.verified_deterministic += usize::from(self.by_verification(t, pk, msg, ctx, x));
                }
                Ok((_, sk)) => self.exact(t, sk, msg, ctx, x),
            }
        }
    }

    /// A group of `mldsa_sign_noseed_schema`.
    fn expanded_group(&mut self, t: &mut Tally, g: &SignGroup, sk: &[u8]) {
        let d = self.s.descriptor();
        for x in &g.tests {
            let id = x.case.tc_id;
            let Some(msg) = x.msg.as_deref() else {
                t.skip(MU_ONLY);
                continue;
            };
            if d.sizes.secret_key != self.n.sk {
                t.skip(&format!(
                    "the file's private keys are FIPS 204 expanded keys of {} bytes; the subject's secret key \
                     is {} bytes, another encoding",
                    self.n.sk, d.sizes.secret_key
                ));
                continue;
            }
            let ctx = x.ctx.as_deref().unwrap_or_default();
            if x.case.result == Expect::Invalid {
                refuse(t, self.s, sk, msg, ctx, &x.case);
                continue;
            }
            if !ctx.is_empty() && !self.info.context {
                t.skip(NO_CONTEXT);
                continue;
            }
            let pk = g.public_key.as_deref().unwrap_or_default();
            // Hedged, with fresh randomness: what was signed must verify.
            let fresh = match sign(self.s, sk, msg, ctx) {
                Ok(sig) => sig,
                Err(e) => {
                    t.fail(
                        id,
                        format!("signing with the file's private key failed{}: {e}", about(&x.case)),
                    );
                    continue;
                }
            };
            match verify(self.s, pk, msg, ctx, &fresh) {
                Ok(true) => self.hedged += 1,
                Ok(false) => {
                    t.fail(
                        id,
                        format!(
                            "its signature with the file's private key does not verify under the file's public key{}",
                            about(&x.case)
                        ),
                    );
                    continue;
                }
                Err(e) => {
                    t.fail(id, format!("verify failed: {e}"));
                    continue;
                }
            }
            let deterministic = self.info.signing == Signing::Deterministic;
            if self.harness && !(x.rnd.is_some() && deterministic) {
                self.exact(t, sk, msg, ctx, x);
            } else {
                t.pass(x.case.result, false);
            }
        }
    }
}

/// Runs a Wycheproof ML-DSA signing file (seeded or with expanded keys): see the module's
/// description for what each kind of subject is put through.
pub fn run_mldsa_sign(s: &dyn Sig, f: &MldsaSignFile) -> FileOutcome {
    let mut t = Tally::default();
    let d = s.descriptor();
    let Some(info) = subject_info(&mut t, d, &f.algorithm) else {
        return t.finish();
    };
    let Some(n) = mldsa_lengths(&f.algorithm) else {
        t.fail("-", format!("{} is not an ML-DSA parameter set", f.algorithm));
        return t.finish();
    };
    let mut run = SignRun {
        s,
        info,
        n,
        harness: d.randomness == Randomness::Harness,
        verified_own_randomness: 0,
        verified_deterministic: 0,
        hedged: 0,
    };
    for g in &f.groups {
        match &g.key {
            SignKey::Seed(seed) => run.seed_group(&mut t, g, seed),
            SignKey::Expanded(sk) => run.expanded_group(&mut t, g, sk),
        }
    }
    if run.verified_own_randomness > 0 {
        t.note(format!(
            "randomness not injectable: the seed cannot reach key generation, so {} valid sign tests were checked \
             by verification (the file's signature verifies under the file's public key)",
            run.verified_own_randomness
        ));
    }
    if run.verified_deterministic > 0 {
        t.note(format!(
            "{} valid sign tests with a given rnd (hedged) were checked by verification: the subject signs \
             deterministically",
            run.verified_deterministic
        ));
    }
    if run.hedged > 0 {
        let exact = if run.harness {
            ", then signed with the test's rnd (zeros when none is given) to exactly the file's signature"
        } else {
            ""
        };
        t.note(format!(
            "{} valid tests signed with the file's expanded private key and fresh randomness, verified under the \
             file's public key{exact}",
            run.hedged
        ));
    }
    t.finish()
}

#[cfg(test)]
mod tests;
