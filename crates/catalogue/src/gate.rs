//! The correctness gate: correct before fast.
//!
//! KEMs reproduce the NIST KAT procedure (see `vectors/README.md`) and must match the
//! published SHA-256 digest of its output. Implementations whose randomness cannot be
//! replaced instead decapsulate KAT ciphertexts made by an implementation that already
//! passed, and encapsulate to KAT public keys for that implementation to decapsulate.
//! Every KEM also gets a round trip and a modified-ciphertext check; every key exchange
//! its published vectors and a round trip. Every buffer handed to an implementation has
//! canary bytes on both sides, checked after each call (as liboqs and SUPERCOP do).
//!
//! Expected values come only from vector files, never from the code under test.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::Path;

use crate::descriptor::{Descriptor, KatPrngKind, Randomness};
use crate::rng::{install_kat, kat_prng};
use crate::traits::{Kem, Kex, OpError};
use crate::vectors;

pub use crate::hash_gate::gate_hash;
pub(crate) use crate::hash_gate::hash_of;

pub use cryptoscope_model::events::{Check, GateReport};

/// How much of the KAT to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KatDepth {
    /// The first entry (`count = 0`) only.
    Single,
    /// The whole file (100 entries; 10 for Classic McEliece).
    All,
}

/// One KAT entry, kept so that implementations without injectable randomness can be
/// cross-checked against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KatEntry {
    pub count: usize,
    pub pk: String,
    pub sk: String,
    pub ct: String,
    pub ss: String,
}

/// A ciphertext and secret produced by a subject under cross-check, for a verified
/// implementation to decapsulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Encapsulation {
    pub count: usize,
    pub ct: String,
    pub ss: String,
}

const CANARY: u8 = 0xA5;
const PAD: usize = 32;

/// A buffer with canary bytes on both sides.
pub(crate) struct Guarded {
    data: Vec<u8>,
    len: usize,
}

impl Guarded {
    pub(crate) fn new(len: usize) -> Guarded {
        Guarded {
            data: vec![CANARY; len + 2 * PAD],
            len,
        }
    }
    pub(crate) fn from(bytes: &[u8]) -> Guarded {
        let mut g = Guarded::new(bytes.len());
        g.get_mut().copy_from_slice(bytes);
        g
    }
    pub(crate) fn get(&self) -> &[u8] {
        &self.data[PAD..PAD + self.len]
    }
    pub(crate) fn get_mut(&mut self) -> &mut [u8] {
        &mut self.data[PAD..PAD + self.len]
    }
    fn intact(&self) -> bool {
        self.data[..PAD]
            .iter()
            .chain(&self.data[PAD + self.len..])
            .all(|&b| b == CANARY)
    }
}

pub(crate) fn canaries(op: &str, bufs: &[(&str, &Guarded)]) -> Result<(), String> {
    for (name, b) in bufs {
        if !b.intact() {
            return Err(format!(
                "{op} wrote outside its `{name}` buffer ({} bytes): canary bytes overwritten",
                b.len
            ));
        }
    }
    Ok(())
}

/// Number of KAT entries the published `all` digest covers.
pub fn kat_entries(algorithm: &str, depth: KatDepth) -> usize {
    match depth {
        KatDepth::Single => 1,
        KatDepth::All if algorithm.starts_with("Classic-McEliece") => 10,
        KatDepth::All => 100,
    }
}

pub(crate) struct KemBufs {
    pub(crate) pk: Guarded,
    pub(crate) sk: Guarded,
    pub(crate) ct: Guarded,
    pub(crate) ss: Guarded,
}

impl KemBufs {
    pub(crate) fn new(d: &Descriptor) -> KemBufs {
        KemBufs {
            pk: Guarded::new(d.sizes.public_key),
            sk: Guarded::new(d.sizes.secret_key),
            ct: Guarded::new(d.sizes.ciphertext),
            ss: Guarded::new(d.sizes.shared_secret),
        }
    }
}

pub(crate) fn keypair_encaps(kem: &dyn Kem, b: &mut KemBufs) -> Result<(), String> {
    kem.keypair(b.pk.get_mut(), b.sk.get_mut()).map_err(|e| e.to_string())?;
    canaries("keypair", &[("pk", &b.pk), ("sk", &b.sk)])?;
    kem.encaps(b.ct.get_mut(), b.ss.get_mut(), b.pk.get())
        .map_err(|e| e.to_string())?;
    canaries("encaps", &[("ct", &b.ct), ("ss", &b.ss), ("pk", &b.pk)])
}

pub(crate) fn decaps(kem: &dyn Kem, sk: &[u8], ct: &[u8], ss_len: usize) -> Result<Vec<u8>, String> {
    decaps_steps(kem, sk, ct, ss_len).map_err(|e| e.to_string())
}

/// Why a KEM call gave no result. Vector files with invalid inputs count a refusal by the
/// implementation as a pass, so a refusal is kept apart from what is never one: a write
/// outside a buffer, or a subject that cannot run at all.
#[derive(Debug)]
pub(crate) enum KemRefusal {
    /// `encaps` refused the encapsulation key, or `decapsulator` the decapsulation key.
    Key(OpError),
    /// `decaps` refused the ciphertext (the key was taken).
    Ciphertext(OpError),
    /// A call wrote outside its buffers, or the subject is unavailable: never a rejection.
    Broken(String),
}

impl std::fmt::Display for KemRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KemRefusal::Key(e) | KemRefusal::Ciphertext(e) => write!(f, "{e}"),
            KemRefusal::Broken(s) => f.write_str(s),
        }
    }
}

/// An implementation's refusal, unless it only says that the subject cannot run.
fn refusal(e: OpError, kind: fn(OpError) -> KemRefusal) -> KemRefusal {
    match e {
        OpError::Unavailable(_) => KemRefusal::Broken(e.to_string()),
        e => kind(e),
    }
}

/// Decapsulation in its two steps, each of which may refuse: preparing the secret key
/// (`decapsulator`, where FIPS 203 §7.3's input checks on dk may be made) and decapsulating
/// the ciphertext. The canaries are checked whether or not the call succeeded.
pub(crate) fn decaps_steps(kem: &dyn Kem, sk: &[u8], ct: &[u8], ss_len: usize) -> Result<Vec<u8>, KemRefusal> {
    let mut dec = kem.decapsulator(sk).map_err(|e| refusal(e, KemRefusal::Key))?;
    let ct = Guarded::from(ct);
    let mut ss = Guarded::new(ss_len);
    let r = dec.decaps(ss.get_mut(), ct.get());
    canaries("decaps", &[("ss", &ss), ("ct", &ct)]).map_err(KemRefusal::Broken)?;
    r.map_err(|e| refusal(e, KemRefusal::Ciphertext))?;
    Ok(ss.get().to_vec())
}

/// Encapsulation to the bytes `pk` (of any length: a wrong one must be refused) into
/// buffers of the subject's sizes; returns the ciphertext and the shared secret. The
/// canaries are checked whether or not the call succeeded.
pub(crate) fn encaps_to(kem: &dyn Kem, pk: &[u8]) -> Result<(Vec<u8>, Vec<u8>), KemRefusal> {
    let s = &kem.descriptor().sizes;
    let pk = Guarded::from(pk);
    let mut ct = Guarded::new(s.ciphertext);
    let mut ss = Guarded::new(s.shared_secret);
    let r = kem.encaps(ct.get_mut(), ss.get_mut(), pk.get());
    canaries("encaps", &[("ct", &ct), ("ss", &ss), ("pk", &pk)]).map_err(KemRefusal::Broken)?;
    r.map_err(|e| refusal(e, KemRefusal::Key))?;
    Ok((ct.get().to_vec(), ss.get().to_vec()))
}

/// Runs the NIST KAT procedure for `n` entries and returns its text and the first `keep`
/// entries.
pub fn kat_procedure(
    kem: &dyn Kem,
    prng: KatPrngKind,
    n: usize,
    keep: usize,
) -> Result<(String, Vec<KatEntry>), String> {
    let d = kem.descriptor();
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let mut outer = kat_prng(prng, &entropy);
    let mut text = String::new();
    let mut kept = Vec::new();
    for count in 0..n {
        let mut seed = [0u8; 48];
        outer.fill(&mut seed);
        let mut b = KemBufs::new(d);
        {
            let _g = install_kat(kat_prng(prng, &seed));
            keypair_encaps(kem, &mut b).map_err(|e| format!("KAT count {count}: {e}"))?;
        }
        let ss2 = decaps(kem, b.sk.get(), b.ct.get(), d.sizes.shared_secret)
            .map_err(|e| format!("KAT count {count}: {e}"))?;
        if ss2 != b.ss.get() {
            return Err(format!(
                "KAT count {count}: decapsulation does not recover the encapsulated secret"
            ));
        }
        if count > 0 {
            text.push('\n');
        }
        let _ = writeln!(text, "count = {count}");
        let _ = writeln!(text, "seed = {}", hex::encode_upper(seed));
        for (name, v) in [
            ("pk", b.pk.get()),
            ("sk", b.sk.get()),
            ("ct", b.ct.get()),
            ("ss", b.ss.get()),
        ] {
            let _ = writeln!(text, "{name} = {}", hex::encode_upper(v));
        }
        if count < keep {
            kept.push(KatEntry {
                count,
                pk: hex::encode(b.pk.get()),
                sk: hex::encode(b.sk.get()),
                ct: hex::encode(b.ct.get()),
                ss: hex::encode(b.ss.get()),
            });
        }
    }
    Ok((text, kept))
}

/// What the KEM gate produced.
#[derive(Debug, Default)]
pub struct KemGate {
    pub report: GateReport,
    /// KAT entries kept (when the KAT digest matched) for cross-checking other subjects.
    pub entries: Vec<KatEntry>,
    /// Encapsulations to reference public keys, for the reference to decapsulate.
    pub encapsulations: Vec<Encapsulation>,
}

/// Three key pairs with OS randomness: each encapsulation decapsulates to its secret, a
/// modified ciphertext does not, the buffers' canaries hold, and no two public keys are
/// the same.
fn round_trips(kem: &dyn Kem, d: &Descriptor) -> Result<(), String> {
    let mut rt = Ok(());
    let mut first_pk = None;
    for i in 0..3 {
        let mut b = KemBufs::new(d);
        let r = keypair_encaps(kem, &mut b).and_then(|_| {
            let ss = decaps(kem, b.sk.get(), b.ct.get(), d.sizes.shared_secret)?;
            if ss != b.ss.get() {
                return Err(format!("round trip {i}: decapsulated secret differs from encapsulated"));
            }
            // Implicit rejection: a modified ciphertext must not give the same secret.
            let mut bad = b.ct.get().to_vec();
            let last = bad.len() - 1;
            bad[last / 2] ^= 0x01;
            match decaps(kem, b.sk.get(), &bad, d.sizes.shared_secret) {
                Ok(s) if s == b.ss.get() => {
                    Err("decapsulating a modified ciphertext returns the original secret".to_string())
                }
                _ => Ok(()),
            }
        });
        if let Err(e) = r {
            rt = Err(e);
            break;
        }
        match &first_pk {
            None => first_pk = Some(b.pk.get().to_vec()),
            Some(p) if p == b.pk.get() => {
                rt = Err("two key pairs are identical: randomness is not random".into());
                break;
            }
            _ => {}
        }
    }
    rt
}

/// Gates a KEM. `keep` KAT entries are returned for cross-checks if the digest matches;
/// `reference` supplies verified KAT entries for subjects with internal randomness.
pub fn gate_kem(
    kem: &dyn Kem,
    vectors_dir: &Path,
    depth: KatDepth,
    keep: usize,
    reference: Option<&[KatEntry]>,
) -> KemGate {
    let d = kem.descriptor();
    let mut out = KemGate::default();
    let checks = &mut out.report.checks;
    match (d.randomness, &d.kat) {
        (Randomness::Harness, Some(kat)) => match vectors::kat_digest(vectors_dir, &kat.file, &kat.name) {
            Err(e) => checks.push(Check::fail("kat", e.to_string())),
            Ok(expected) => {
                let n = kat_entries(&d.algorithm, depth);
                match kat_procedure(kem, kat.prng, n, keep) {
                    Err(e) => checks.push(Check::fail("kat", e)),
                    Ok((text, kept)) => {
                        let got = hex::encode(Sha256::digest(text.as_bytes()));
                        let want = match depth {
                            KatDepth::Single => &expected.single,
                            KatDepth::All => &expected.all,
                        };
                        if got.eq_ignore_ascii_case(want) {
                            checks.push(Check::pass("kat", format!("KAT digest matches {} in {} ({n} {})", kat.name, kat.file, if n == 1 { "entry" } else { "entries" })));
                            out.entries = kept;
                        } else {
                            checks.push(Check::fail(
                                "kat",
                                format!("KAT digest mismatch for {} in {} ({n} entries): got {}…, expected {}…", kat.name, kat.file, &got[..16], &want[..16]),
                            ));
                        }
                    }
                }
            }
        },
        (Randomness::Harness, None) => checks.push(Check::fail("kat", "no published KAT digest is known for this subject")),
        (Randomness::Internal, _) => match reference {
            None => checks.push(Check::fail("kat-crosscheck", "randomness not injectable and no verified implementation of this algorithm is available to cross-check against")),
            Some(entries) => {
                let mut ok = 0;
                let mut fail = None;
                for e in entries {
                    let (sk, ct) = match (hex::decode(&e.sk), hex::decode(&e.ct)) {
                        (Ok(s), Ok(c)) => (s, c),
                        _ => {
                            fail = Some("reference entry is not hex".to_string());
                            break;
                        }
                    };
                    match decaps(kem, &sk, &ct, d.sizes.shared_secret) {
                        Ok(ss) if hex::encode(&ss) == e.ss => ok += 1,
                        Ok(_) => {
                            fail = Some(format!("decapsulating KAT count {} gives a different shared secret", e.count));
                            break;
                        }
                        Err(err) => {
                            fail = Some(format!("KAT count {}: {err}", e.count));
                            break;
                        }
                    }
                    let pk = hex::decode(&e.pk).unwrap_or_default();
                    let mut ct = Guarded::new(d.sizes.ciphertext);
                    let mut ss = Guarded::new(d.sizes.shared_secret);
                    let pk = Guarded::from(&pk);
                    if let Err(err) = kem.encaps(ct.get_mut(), ss.get_mut(), pk.get()).map_err(|x| x.to_string()).and_then(|_| canaries("encaps", &[("ct", &ct), ("ss", &ss), ("pk", &pk)])) {
                        fail = Some(format!("encapsulating to KAT count {}: {err}", e.count));
                        break;
                    }
                    out.encapsulations.push(Encapsulation { count: e.count, ct: hex::encode(ct.get()), ss: hex::encode(ss.get()) });
                }
                match fail {
                    None => checks.push(Check::pass("kat-decaps", format!("decapsulates {ok} verified KAT ciphertexts to the KAT secrets"))),
                    Some(f) => checks.push(Check::fail("kat-decaps", f)),
                }
            }
        },
    }
    // Round trip and distinct keys, with OS randomness.
    let rt = round_trips(kem, d);
    match rt {
        Ok(()) => checks.push(Check::pass(
            "round-trip",
            "round trip, modified-ciphertext rejection and canaries ok",
        )),
        Err(e) => checks.push(Check::fail("round-trip", e)),
    }
    // ML-KEM: every Wycheproof file of the parameter set, whatever the depth; what the
    // subject does with keys that fail FIPS 203's input checks is recorded beside the gate.
    if let Some((checks, verdict)) = crate::wycheproof_gate::kem_checks(kem, vectors_dir) {
        out.report.checks.extend(checks);
        out.report.input_check = verdict;
    }
    out
}

/// Phase two of a cross-check: a verified implementation decapsulates what the subject
/// under test encapsulated to the KAT public keys.
pub fn verify_encapsulations(kem: &dyn Kem, entries: &[KatEntry], encs: &[Encapsulation]) -> Check {
    let d = kem.descriptor();
    if encs.is_empty() {
        return Check::fail("kat-encaps", "no encapsulations to verify");
    }
    for enc in encs {
        let Some(e) = entries.iter().find(|e| e.count == enc.count) else {
            return Check::fail("kat-encaps", format!("no KAT entry {}", enc.count));
        };
        let (Ok(sk), Ok(ct)) = (hex::decode(&e.sk), hex::decode(&enc.ct)) else {
            return Check::fail("kat-encaps", "entries are not hex");
        };
        match decaps(kem, &sk, &ct, d.sizes.shared_secret) {
            Ok(ss) if hex::encode(&ss) == enc.ss => {}
            Ok(_) => return Check::fail("kat-encaps", format!("the verified implementation ({}) decapsulates the subject's ciphertext for KAT count {} to a different secret", d.id, enc.count)),
            Err(err) => return Check::fail("kat-encaps", format!("{} could not decapsulate: {err}", d.id)),
        }
    }
    Check::pass(
        "kat-encaps",
        format!(
            "{} encapsulations to KAT public keys decapsulate correctly with {}",
            encs.len(),
            d.id
        ),
    )
}

pub(crate) fn exchange(kex: &dyn Kex, sk: &[u8], peer: &[u8]) -> Result<Vec<u8>, String> {
    let d = kex.descriptor();
    let mut ex = kex.exchanger(sk).map_err(|e| e.to_string())?;
    let peer = Guarded::from(peer);
    let mut ss = Guarded::new(d.sizes.shared_secret);
    ex.exchange(ss.get_mut(), peer.get()).map_err(|e| e.to_string())?;
    canaries("exchange", &[("ss", &ss), ("peer_pk", &peer)])?;
    Ok(ss.get().to_vec())
}

/// The shared secret of `sk` and `peer` as `exchange` derives it, checked against the
/// parts: `validate` must accept the key, and `set_peer` then `derive` (twice, the kept
/// peer reused) must give the same secret.
pub(crate) fn agree(kex: &dyn Kex, sk: &[u8], peer: &[u8]) -> Result<Vec<u8>, String> {
    let whole = exchange(kex, sk, peer)?;
    let mut ex = kex.exchanger(sk).map_err(|e| e.to_string())?;
    let peer = Guarded::from(peer);
    ex.validate(peer.get())
        .map_err(|e| format!("validate rejects a key that exchange accepts: {e}"))?;
    ex.set_peer(peer.get()).map_err(|e| e.to_string())?;
    for _ in 0..2 {
        let mut ss = Guarded::new(kex.descriptor().sizes.shared_secret);
        ex.derive(ss.get_mut()).map_err(|e| e.to_string())?;
        canaries("derive", &[("ss", &ss), ("peer_pk", &peer)])?;
        if ss.get() != whole.as_slice() {
            return Err("derive gives another secret than exchange".into());
        }
    }
    Ok(whole)
}

/// How the subject treats a peer key that must not be used, per the standard: for P-256
/// a point off the curve (SP 800-56A §5.6.2.3), for FFDHE the values 1 and p − 1
/// (RFC 7919 §5.1), for X25519 a low-order point, whose all-zero secret TLS 1.3 must refuse
/// (RFC 8446 §7.4.2). `exchange` is presented each; the verdict is not part of the gate.
fn kex_input_check(kex: &dyn Kex, sk: &[u8], pk: &[u8]) -> Option<String> {
    let rejects = |bad: &[u8]| exchange(kex, sk, bad).is_err();
    match kex.descriptor().algorithm.as_str() {
        "P-256" => {
            // y + 1 or y − 1: on the curve only if 2y ± 1 = 0 mod p, one y in 2^256.
            let mut bad = pk.to_vec();
            *bad.last_mut()? ^= 1;
            Some(
                if rejects(&bad) {
                    "off-curve rejected"
                } else {
                    "ACCEPTS off-curve"
                }
                .into(),
            )
        }
        "FFDHE-2048" => {
            let (p, _) = kex.group_parameters()?;
            let mut one = vec![0u8; pk.len()];
            *one.last_mut()? = 1;
            let mut p_minus_1 = p.clone();
            *p_minus_1.last_mut()? ^= 1; // p is odd
            let both = rejects(&one) && rejects(&p_minus_1);
            Some(
                if both {
                    "1, p−1 rejected"
                } else {
                    "ACCEPTS 1 or p−1"
                }
                .into(),
            )
        }
        "X25519" => Some(
            if rejects(&[0u8; 32]) {
                "low-order rejected"
            } else {
                "low-order accepted"
            }
            .into(),
        ),
        _ => None,
    }
}

fn kex_vectors(kex: &dyn Kex, dir: &Path) -> Check {
    let d = kex.descriptor();
    let r: Result<String, String> = (|| match d.algorithm.as_str() {
        "X25519" => {
            let (path, v) = vectors::x25519(dir).map_err(|e| e.to_string())?;
            let h = |f: &str, s: &str| vectors::unhex(&path, f, s).map_err(|e| e.to_string());
            let mut n = 0;
            for t in &v.scalar_mult {
                let got = agree(kex, &h("scalar", &t.scalar)?, &h("u", &t.u)?)?;
                if got != h("output", &t.output)? {
                    return Err(format!("{}: wrong output", t.id));
                }
                n += 1;
            }
            // RFC 7748 §5.2 iterated test: k = u = 9; k, u = X25519(k, u), k.
            let mut k = [0u8; 32];
            k[0] = 9;
            let mut u = k;
            let mut done = 0u64;
            for it in v.iterated.iter().filter(|i| i.iterations <= 1000) {
                while done < it.iterations {
                    let next = agree(kex, &k, &u)?;
                    u = k;
                    k.copy_from_slice(&next);
                    done += 1;
                }
                if k.as_slice() != h("k", &it.k)? {
                    return Err(format!("iterated test after {} iterations: wrong k", it.iterations));
                }
                n += 1;
            }
            for t in &v.dh {
                let shared = h("shared", &t.shared)?;
                if agree(
                    kex,
                    &h("alice_private", &t.alice_private)?,
                    &h("bob_public", &t.bob_public)?,
                )? != shared
                    || agree(
                        kex,
                        &h("bob_private", &t.bob_private)?,
                        &h("alice_public", &t.alice_public)?,
                    )? != shared
                {
                    return Err(format!("{}: wrong shared secret", t.id));
                }
                n += 1;
            }
            Ok(format!("{n} RFC 7748 vectors (iterated to 1,000)"))
        }
        "P-256" => {
            let (path, v) = vectors::p256(dir).map_err(|e| e.to_string())?;
            let h = |f: &str, s: &str| vectors::unhex(&path, f, s).map_err(|e| e.to_string());
            for t in &v.tests {
                let got = agree(kex, &h("private", &t.private)?, &h("peer_public", &t.peer_public)?)
                    .map_err(|e| format!("{}: {e}", t.id))?;
                if got != h("shared", &t.shared)? {
                    return Err(format!("{}: wrong shared secret", t.id));
                }
            }
            Ok(format!("{} NIST CAVP ECC CDH P-256 vectors", v.tests.len()))
        }
        "FFDHE-2048" => {
            let (path, g) = vectors::ffdhe2048(dir).map_err(|e| e.to_string())?;
            let p = vectors::unhex(&path, "p", &g.p).map_err(|e| e.to_string())?;
            let (lp, lg) = kex
                .group_parameters()
                .ok_or("the provider does not expose its group parameters")?;
            let strip = |v: &[u8]| v.iter().skip_while(|&&b| b == 0).copied().collect::<Vec<u8>>();
            if strip(&lp) != strip(&p) {
                return Err("the library's prime is not the RFC 7919 ffdhe2048 prime".into());
            }
            let g_bytes = num_bigint::BigUint::from(g.g).to_bytes_be();
            if strip(&lg) != g_bytes {
                return Err(format!("the library's generator is not {}", g.g));
            }
            Ok("group equals RFC 7919 ffdhe2048 (p, g = 2)".into())
        }
        other => Err(format!("no published vectors known for {other}")),
    })();
    match r {
        Ok(detail) => Check::pass("vectors", detail),
        Err(e) => Check::fail("vectors", e),
    }
}

/// For finite-field groups, the length of the private exponents the subject generates,
/// which sets the cost of `derive` (OpenSSL 3 gives ffdhe2048 keys 225 bits, not 2048):
/// the longest over 8 key pairs, as "; private exponent ≤ N bits (8 keys)".
fn exponent_note(kex: &dyn Kex) -> Result<String, String> {
    if kex.group_parameters().is_none() {
        return Ok(String::new());
    }
    let s = &kex.descriptor().sizes;
    let mut bits = 0;
    for _ in 0..8 {
        let (mut pk, mut sk) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
        kex.keypair(&mut pk, &mut sk).map_err(|e| e.to_string())?;
        bits = bits.max(num_bigint::BigUint::from_bytes_be(&sk).bits());
    }
    Ok(format!("; private exponent ≤ {bits} bits (8 keys)"))
}

/// Gates a key exchange: published vectors, round trip, canaries.
pub fn gate_kex(kex: &dyn Kex, vectors_dir: &Path) -> GateReport {
    let d = kex.descriptor();
    let mut report = GateReport::default();
    report.checks.push(kex_vectors(kex, vectors_dir));
    let rt: Result<(), String> = (|| {
        let mut pa = Guarded::new(d.sizes.public_key);
        let mut sa = Guarded::new(d.sizes.secret_key);
        let mut pb = Guarded::new(d.sizes.public_key);
        let mut sb = Guarded::new(d.sizes.secret_key);
        kex.keypair(pa.get_mut(), sa.get_mut()).map_err(|e| e.to_string())?;
        kex.keypair(pb.get_mut(), sb.get_mut()).map_err(|e| e.to_string())?;
        canaries("keypair", &[("pk", &pa), ("sk", &sa), ("pk", &pb), ("sk", &sb)])?;
        if pa.get() == pb.get() {
            return Err("two key pairs are identical: randomness is not random".into());
        }
        let ab = agree(kex, sa.get(), pb.get())?;
        let ba = agree(kex, sb.get(), pa.get())?;
        if ab != ba {
            return Err("the two sides derive different secrets".into());
        }
        if ab.iter().all(|&b| b == 0) {
            return Err("shared secret is all zero".into());
        }
        report.input_check = kex_input_check(kex, sa.get(), pb.get());
        Ok(())
    })();
    report.checks.push(match rt.and_then(|()| exponent_note(kex)) {
        Ok(note) => Check::pass(
            "round-trip",
            format!("both sides agree; exchange, validate and derive agree; canaries ok{note}"),
        ),
        Err(e) => Check::fail("round-trip", e),
    });
    report
}

#[cfg(test)]
mod tests {
    //! The gate must be able to fail: deliberately broken toy subjects (no real
    //! cryptography) must be rejected, each for the right reason.
    use super::*;
    use crate::descriptor::{Availability, Family, KatRef, Sizes};
    use crate::traits::{Decapsulator, Exchanger, OpError};
    use std::path::PathBuf;

    fn vectors() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        WrongDecaps,
        Overflow,
        ConstantKeys,
        AcceptsModified,
        /// Makes FIPS 203 §7.2's modulus check on keys of ML-KEM-768's length.
        ChecksEk,
    }

    /// A toy KEM: sk = pk = random; ct = ss XOR pk. Correct round trip, no security.
    struct Toy {
        desc: Descriptor,
        fault: Fault,
    }

    fn toy(fault: Fault) -> Toy {
        Toy {
            desc: Descriptor {
                id: "ML-KEM-768/toy/broken".into(),
                algorithm: "ML-KEM-768".into(),
                family: Family::Kem,
                provider: "toy".into(),
                provider_version: "0".into(),
                implementation: "broken".into(),
                algorithm_version: "-".into(),
                build: "-".into(),
                nist_level: None,
                classical_bits: None,
                sizes: Sizes {
                    public_key: 32,
                    secret_key: 32,
                    ciphertext: 32,
                    shared_secret: 32,
                },
                availability: Availability::Available,
                randomness: Randomness::Harness,
                kat: Some(KatRef {
                    file: "liboqs-kats.json".into(),
                    name: "ML-KEM-768".into(),
                    prng: KatPrngKind::AesCtrDrbg,
                }),
                cipher: None,
                aead: None,
                sig: None,
            },
            fault,
        }
    }

    impl Kem for Toy {
        fn descriptor(&self) -> &Descriptor {
            &self.desc
        }
        fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
            if self.fault == Fault::ConstantKeys {
                pk.fill(7);
            } else {
                crate::rng::fill(pk);
            }
            sk.copy_from_slice(pk);
            if self.fault == Fault::Overflow {
                // Write one byte past the end of `sk`, as a buggy C implementation might.
                // SAFETY (test only): the gate's buffers carry 32 canary bytes after each
                // slice inside the same allocation, so this stays within it.
                unsafe { *sk.as_mut_ptr().add(sk.len()) = 0 };
            }
            Ok(())
        }
        fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
            if pk.len() < 32 {
                return Err(OpError::failed("encaps", "key too short"));
            }
            // FIPS 203 §7.2 on a key of ML-KEM-768's length: ByteDecode12 of t̂ (its first
            // 1,152 bytes, two 12-bit coefficients in every three, little-endian) must
            // give values below q = 3329.
            let unreduced = pk.len() == 1184
                && pk[..1152].chunks(3).any(|b| {
                    let lo = u16::from(b[0]) | u16::from(b[1] & 0x0f) << 8;
                    let hi = u16::from(b[1] >> 4) | u16::from(b[2]) << 4;
                    lo >= 3329 || hi >= 3329
                });
            if self.fault == Fault::ChecksEk && unreduced {
                return Err(OpError::failed("encaps", "modulus check failed"));
            }
            crate::rng::fill(ss);
            if self.fault == Fault::AcceptsModified {
                ss[15] = 0;
            }
            for i in 0..32 {
                ct[i] = ss[i] ^ pk[i];
            }
            Ok(())
        }
        fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
            Ok(Box::new(ToyDec {
                sk: sk.to_vec(),
                fault: self.fault,
            }))
        }
    }

    struct ToyDec {
        sk: Vec<u8>,
        fault: Fault,
    }

    impl Decapsulator for ToyDec {
        fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
            if ct.len() < 32 || self.sk.len() < 32 {
                return Err(OpError::failed("decaps", "too short"));
            }
            for i in 0..32 {
                ss[i] = ct[i] ^ self.sk[i];
            }
            match self.fault {
                Fault::WrongDecaps => ss[0] ^= 1,
                // Ignore the ciphertext's middle byte: a modified ciphertext decapsulates
                // to the same secret.
                Fault::AcceptsModified => ss[15] = 0,
                _ => {}
            }
            Ok(())
        }
    }

    fn failed_check(r: &GateReport, name: &str) -> String {
        let c = r
            .checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no check {name}: {r:?}"));
        assert!(!c.ok, "{name} should fail: {r:?}");
        assert!(!r.passed());
        c.detail.clone()
    }

    #[test]
    fn wrong_kat_output_fails_the_digest() {
        let _serial = crate::rng::serial();
        let g = gate_kem(&toy(Fault::None), &vectors(), KatDepth::Single, 0, None);
        assert!(failed_check(&g.report, "kat").contains("KAT digest mismatch"));
        assert!(
            g.report.checks.iter().any(|c| c.name == "round-trip" && c.ok),
            "the toy round-trips"
        );
        assert!(g.entries.is_empty(), "no entries are kept from a failed KAT");
    }

    #[test]
    fn wrong_decapsulation_fails() {
        let _serial = crate::rng::serial();
        let g = gate_kem(&toy(Fault::WrongDecaps), &vectors(), KatDepth::Single, 0, None);
        assert!(failed_check(&g.report, "kat").contains("decapsulation does not recover"));
        failed_check(&g.report, "round-trip");
    }

    #[test]
    fn buffer_overflow_is_caught_by_canaries() {
        let _serial = crate::rng::serial();
        let g = gate_kem(&toy(Fault::Overflow), &vectors(), KatDepth::Single, 0, None);
        assert!(failed_check(&g.report, "round-trip").contains("canary"));
    }

    #[test]
    fn constant_keys_are_caught() {
        let _serial = crate::rng::serial();
        let g = gate_kem(&toy(Fault::ConstantKeys), &vectors(), KatDepth::Single, 0, None);
        assert!(failed_check(&g.report, "round-trip").contains("identical"));
    }

    #[test]
    fn modified_ciphertext_must_change_the_secret() {
        let _serial = crate::rng::serial();
        let g = gate_kem(&toy(Fault::AcceptsModified), &vectors(), KatDepth::Single, 0, None);
        assert!(failed_check(&g.report, "round-trip").contains("modified ciphertext"));
    }

    #[test]
    fn internal_randomness_without_reference_fails() {
        let _serial = crate::rng::serial();
        let mut t = toy(Fault::None);
        t.desc.randomness = Randomness::Internal;
        let g = gate_kem(&t, &vectors(), KatDepth::Single, 0, None);
        failed_check(&g.report, "kat-crosscheck");
    }

    /// A "key exchange" that returns the peer's key: agrees with itself, fails vectors.
    /// The flag makes `derive` disagree with `exchange`.
    struct EchoKex(Descriptor, bool);

    impl Kex for EchoKex {
        fn descriptor(&self) -> &Descriptor {
            &self.0
        }
        fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
            crate::rng::fill(sk);
            pk.fill(1);
            crate::rng::fill(&mut pk[..4]);
            Ok(())
        }
        fn exchanger<'a>(&'a self, _sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
            Ok(Box::new(Echo {
                peer: Vec::new(),
                wrong_derive: self.1,
            }))
        }
    }

    /// Echoes the peer's key; `derive` flips a bit when `wrong_derive`.
    struct Echo {
        peer: Vec<u8>,
        wrong_derive: bool,
    }

    impl Exchanger for Echo {
        fn exchange(&mut self, ss: &mut [u8], peer: &[u8]) -> Result<(), OpError> {
            ss.copy_from_slice(peer);
            Ok(())
        }
        fn validate(&mut self, _peer: &[u8]) -> Result<(), OpError> {
            Ok(())
        }
        fn set_peer(&mut self, peer: &[u8]) -> Result<(), OpError> {
            self.peer = peer.to_vec();
            Ok(())
        }
        fn derive(&mut self, ss: &mut [u8]) -> Result<(), OpError> {
            ss.copy_from_slice(&self.peer);
            ss[0] ^= u8::from(self.wrong_derive);
            Ok(())
        }
    }

    #[test]
    fn wrong_x25519_fails_rfc7748() {
        let _serial = crate::rng::serial();
        let mut d = toy(Fault::None).desc;
        d.algorithm = "X25519".into();
        d.family = Family::Kex;
        d.sizes = Sizes {
            public_key: 32,
            secret_key: 32,
            ciphertext: 0,
            shared_secret: 32,
        };
        let r = gate_kex(&EchoKex(d.clone(), false), &vectors());
        assert!(failed_check(&r, "vectors").contains("wrong output"));
        // A derive that disagrees with exchange fails on the first vector and the round trip.
        let r = gate_kex(&EchoKex(d, true), &vectors());
        assert!(failed_check(&r, "vectors").contains("derive gives another secret"));
        assert!(failed_check(&r, "round-trip").contains("derive gives another secret"));
    }

    #[test]
    fn the_input_checks_are_read_from_the_wycheproof_files_beside_the_gate() {
        let _serial = crate::rng::serial();
        // The encapsulation file's invalid keys of ML-KEM-768's length fail only FIPS 203
        // §7.2's modulus check; its decapsulation file flags the keys that fail §7.3's hash
        // check InvalidDecapsulationKey. A toy that makes the modulus check and no hash
        // check is "does not validate dk"; one that makes neither, both.
        let g = gate_kem(&toy(Fault::ChecksEk), &vectors(), KatDepth::Single, 0, None);
        assert_eq!(g.report.input_check.as_deref(), Some("does not validate dk"));
        let g = gate_kem(&toy(Fault::None), &vectors(), KatDepth::Single, 0, None);
        assert_eq!(g.report.input_check.as_deref(), Some("does not validate ek or dk"));
        // Every file ran, and the toy, no ML-KEM, fails each file it can be given.
        let files: Vec<&Check> = g
            .report
            .checks
            .iter()
            .filter(|c| c.name.starts_with("wycheproof "))
            .collect();
        assert_eq!(files.len(), 4, "{:?}", g.report.checks);
        assert!(
            files.iter().all(|c| !c.ok && c.detail.contains(" tests failed (tcId ")),
            "{files:?}"
        );
        // Not part of the gate: the same checks pass or fail either way.
        let names = |g: &KemGate| {
            g.report
                .checks
                .iter()
                .map(|c| (c.name.clone(), c.ok))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&gate_kem(&toy(Fault::None), &vectors(), KatDepth::Single, 0, None)),
            names(&gate_kem(&toy(Fault::ChecksEk), &vectors(), KatDepth::Single, 0, None))
        );
    }

    #[test]
    fn kat_entry_counts_follow_the_published_files() {
        let _serial = crate::rng::serial();
        assert_eq!(kat_entries("Classic-McEliece-8192128f", KatDepth::All), 10);
        assert_eq!(kat_entries("ML-KEM-768", KatDepth::All), 100);
        assert_eq!(kat_entries("ML-KEM-768", KatDepth::Single), 1);
    }
}
