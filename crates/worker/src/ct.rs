//! The worker's side of the constant-time audit (`cryptoscope ct`).
//!
//! Two methods, each on the same operations with the same secret inputs:
//! - **memcheck** (TIMECOP, ctgrind): the parent runs this worker under valgrind memcheck;
//!   the worker marks the secret inputs undefined (a valgrind client request) and runs each
//!   operation once, inside a function named `cryptoscope_ct_op_<operation>` so the parent
//!   can tell which operation a report belongs to. Every branch or address computed from a
//!   secret is then a memcheck error with its stack.
//! - **dudect**: fixed-versus-random secret inputs, interleaved in random order, each call
//!   timed with the TSC; Welch's t over the two classes ([`cryptoscope_measure::ttest`]).
//!
//! What is secret, per family:
//! - KEM `decaps`: the secret key (for ML-KEM only its secret parts, not the copies of the
//!   public key and its hash it carries); `decaps-rejected` the same with a modified
//!   ciphertext (the implicit-rejection path).
//! - key exchange `exchange`: the secret key.
//! - hash `hash`: the message.
//! - block cipher `key-schedule`: the key; `encrypt`: the key and the plaintext blocks.
//! - AEAD `seal`: the key (its expansion included) and the plaintext; `open`: the key, with
//!   a valid ciphertext; `open-forged`: the key, with the tag's last byte flipped. Opening
//!   ends in one branch on the verification result, which is public (the caller learns it
//!   anyway); the parent tells that one decision apart from a leak.
//!
//! - KEM `keypair` and `encaps`, key exchange `keypair`: the randomness the operation draws,
//!   marked as it is handed out (TIMECOP marks `randombytes` output the same way). Only for
//!   subjects whose randomness comes through the harness; libraries with their own
//!   generator (AWS-LC, OpenSSL) cannot be given marked randomness. Key generation may derive
//!   public values from its randomness (ML-KEM's matrix seed ρ), whose expansion legitimately
//!   branches: the parent reports such findings apart (see `cli/src/ct.rs`).

use crate::protocol::{CtAudited, CtStat};
use cryptoscope_catalogue::rng::{install_kat, kat_prng, KatPrng};
use cryptoscope_catalogue::{KatPrngKind, Subject};
use cryptoscope_measure::sampler::Timer;
use cryptoscope_measure::ttest::Leakage;
use std::time::{Duration, Instant};

extern "C" {
    fn cryptoscope_ct_secret(p: *const u8, n: usize);
    fn cryptoscope_ct_public(p: *const u8, n: usize);
    fn cryptoscope_ct_on_valgrind() -> i32;
    fn cryptoscope_ct_available() -> i32;
}

/// Marks bytes secret (undefined to memcheck). A no-op outside valgrind.
pub fn secret(b: &[u8]) {
    // SAFETY: the request only reads the range's address and length.
    unsafe { cryptoscope_ct_secret(b.as_ptr(), b.len()) }
}

/// Marks bytes public (defined) again: outputs, before the harness looks at them.
pub fn public(b: &[u8]) {
    // SAFETY: as above.
    unsafe { cryptoscope_ct_public(b.as_ptr(), b.len()) }
}

/// Whether this process runs under valgrind.
pub fn on_valgrind() -> bool {
    // SAFETY: a client request without arguments.
    unsafe { cryptoscope_ct_on_valgrind() != 0 }
}

/// Whether this build can issue memcheck requests (valgrind's header was present).
pub fn available() -> bool {
    // SAFETY: returns a constant.
    unsafe { cryptoscope_ct_available() != 0 }
}

/// The byte ranges of a secret key that are secret. ML-KEM's decapsulation key (FIPS 203
/// §7.1), like Kyber's, is dk_PKE ‖ ek ‖ H(ek) ‖ z: dk_PKE (384·k bytes) and z (32) are secret; ek and its
/// hash are public, and marking them would report the rejection sampling of the public
/// matrix. Other algorithms: the whole key.
pub fn secret_ranges(algorithm: &str, sk_len: usize) -> (Vec<std::ops::Range<usize>>, String) {
    // Kyber (round 3) lays its key out the same way.
    let k = match algorithm {
        "ML-KEM-512" | "Kyber512" => Some(2),
        "ML-KEM-768" | "Kyber768" => Some(3),
        "ML-KEM-1024" | "Kyber1024" => Some(4),
        _ => None,
    };
    match k {
        Some(k) if sk_len == 768 * k + 96 => (
            vec![0..384 * k, sk_len - 32..sk_len],
            format!(
                "dk_PKE (bytes 0..{}) and z (the last 32 bytes) of the secret key",
                384 * k
            ),
        ),
        _ => (std::iter::once(0..sk_len).collect(), "the whole secret key".into()),
    }
}

fn mark_ranges(sk: &[u8], ranges: &[std::ops::Range<usize>]) {
    for r in ranges {
        secret(&sk[r.clone()]);
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The harness's randomness with every byte marked secret as it is handed out: a CTR_DRBG
/// seeded from the operating system (so the bytes are fresh), counting what was drawn.
struct SecretRandomness {
    drbg: Box<dyn KatPrng>,
    drawn: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl KatPrng for SecretRandomness {
    fn fill(&mut self, out: &mut [u8]) {
        self.drbg.fill(out);
        secret(out);
        self.drawn.fetch_add(out.len(), std::sync::atomic::Ordering::SeqCst);
    }
}

/// Runs `f` with marked randomness; returns its result and the bytes it drew.
fn with_secret_randomness<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let mut seed = [0u8; 48];
    cryptoscope_catalogue::rng::fill(&mut seed);
    let drawn = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let r = {
        let _g = install_kat(Box::new(SecretRandomness {
            drbg: kat_prng(KatPrngKind::AesCtrDrbg, &seed),
            drawn: drawn.clone(),
        }));
        f()
    };
    (r, drawn.load(std::sync::atomic::Ordering::SeqCst))
}

// One function per audited operation, never inlined, so that memcheck's stacks name the
// operation a report belongs to.

/// Key generation (a KEM's or a key exchange's, given as a closure).
#[inline(never)]
fn cryptoscope_ct_op_keypair(f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>) -> Result<(), String> {
    f().map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_encaps(
    k: &dyn cryptoscope_catalogue::Kem,
    ct: &mut [u8],
    ss: &mut [u8],
    pk: &[u8],
) -> Result<(), String> {
    k.encaps(ct, ss, pk).map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_decaps(
    k: &dyn cryptoscope_catalogue::Kem,
    sk: &[u8],
    ct: &[u8],
    ss: &mut [u8],
) -> Result<(), String> {
    let mut d = k.decapsulator(sk).map_err(err)?;
    d.decaps(ss, ct).map_err(err)
}

/// Decapsulation of a valid ciphertext with its first bit flipped (different code from
/// [`cryptoscope_ct_op_decaps`], so the two are never merged into one symbol).
#[inline(never)]
fn cryptoscope_ct_op_decaps_rejected(
    k: &dyn cryptoscope_catalogue::Kem,
    sk: &[u8],
    valid_ct: &[u8],
    ss: &mut [u8],
) -> Result<(), String> {
    let mut ct = valid_ct.to_vec();
    ct[0] ^= 1;
    let mut d = k.decapsulator(sk).map_err(err)?;
    // Some implementations (HQC) return an error for a rejected ciphertext while still
    // computing the implicit-rejection secret: that is the path audited, not a failure.
    let _ = d.decaps(ss, &ct);
    Ok(())
}

#[inline(never)]
fn cryptoscope_ct_op_exchange(
    k: &dyn cryptoscope_catalogue::Kex,
    sk: &[u8],
    peer: &[u8],
    ss: &mut [u8],
) -> Result<(), String> {
    let mut e = k.exchanger(sk).map_err(err)?;
    e.exchange(ss, peer).map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_hash(h: &dyn cryptoscope_catalogue::Hash, msg: &[u8], out: &mut [u8]) {
    let mut s = h.start();
    // Two updates, so that buffering of a partial block is covered too.
    let cut = msg.len() / 3;
    s.update(&msg[..cut]);
    s.update(&msg[cut..]);
    s.finish(out);
}

#[inline(never)]
fn cryptoscope_ct_op_key_schedule(k: &mut dyn cryptoscope_catalogue::KeyedCipher, key: &[u8]) -> Result<(), String> {
    k.rekey(key).map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_encrypt(k: &mut dyn cryptoscope_catalogue::KeyedCipher, blocks: &mut [u8]) -> Result<(), String> {
    k.encrypt(blocks).map_err(err)
}

#[inline(never)]
fn cryptoscope_ct_op_seal(
    a: &dyn cryptoscope_catalogue::Aead,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    data: &mut [u8],
    tag: &mut [u8],
) -> Result<(), String> {
    let mut k = a.keyed(key).map_err(err)?;
    k.seal(nonce, aad, data, tag).map_err(err)
}

/// Opening (the key's expansion included, so that all of it is inside the operation).
#[inline(never)]
fn cryptoscope_ct_op_open(
    a: &dyn cryptoscope_catalogue::Aead,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    ct: &[u8],
    tag: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let mut k = a.keyed(key).map_err(err)?;
    k.open(nonce, aad, ct, tag, out).map_err(err)
}

/// Opening with the valid tag's last byte flipped (different code from
/// [`cryptoscope_ct_op_open`], so the two are never merged into one symbol). A refusal is
/// the expected outcome; opening is an error.
#[inline(never)]
fn cryptoscope_ct_op_open_forged(
    a: &dyn cryptoscope_catalogue::Aead,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    ct: &[u8],
    valid_tag: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let mut tag = valid_tag.to_vec();
    let last = tag.len() - 1;
    tag[last] ^= 0x80;
    let mut k = a.keyed(key).map_err(err)?;
    match k.open(nonce, aad, ct, &tag, out) {
        Ok(()) => Err("opened a ciphertext with a forged tag".into()),
        Err(_) => Ok(()),
    }
}

/// How a dudect refusal for a slow operation begins (the parent reports it as not run).
pub const TOO_SLOW: &str = "too slow for dudect";

/// Bytes of plaintext the AEAD audit seals and opens.
const AEAD_AUDIT_BYTES: usize = 1000;

fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    cryptoscope_catalogue::rng::fill(&mut v);
    v
}

/// Bytes of plaintext an `encrypt` call gets: 8 batches of blocks (at least 8 blocks).
fn encrypt_bytes(info: &cryptoscope_catalogue::CipherInfo) -> usize {
    info.block_bytes * info.batch.max(1) * 8
}

/// A public key, its secret key and a ciphertext to it.
type KemMaterial = (Vec<u8>, Vec<u8>, Vec<u8>);

/// A KEM key pair and one of its ciphertexts, made without any marking.
fn kem_material(k: &dyn cryptoscope_catalogue::Kem) -> Result<KemMaterial, String> {
    let s = &k.descriptor().sizes;
    let (mut pk, mut sk) = (vec![0u8; s.public_key], vec![0u8; s.secret_key]);
    k.keypair(&mut pk, &mut sk).map_err(err)?;
    let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
    k.encaps(&mut ct, &mut ss, &pk).map_err(err)?;
    Ok((pk, sk, ct))
}

/// A KEM key pair and ciphertext made outside valgrind (key generation under memcheck is
/// 50–100 times slower: minutes for Classic McEliece), as hex JSON.
pub fn write_material(s: &Subject, path: &std::path::Path) -> Result<(), String> {
    let Subject::Kem(k) = s else {
        return Err("material is for KEMs only".into());
    };
    let (pk, sk, ct) = kem_material(k.as_ref())?;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let v = serde_json::json!({ "pk": hex(&pk), "sk": hex(&sk), "ct": hex(&ct) });
    std::fs::write(path, v.to_string()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn read_material(path: &std::path::Path, d: &cryptoscope_catalogue::Descriptor) -> Result<KemMaterial, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("malformed {}: {e}", path.display()))?;
    let unhex = |f: &str, len: usize| -> Result<Vec<u8>, String> {
        let s = v[f].as_str().ok_or(format!("{}: no `{f}`", path.display()))?;
        let b: Result<Vec<u8>, _> = (0..s.len() / 2)
            .map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2).unwrap_or("x"), 16))
            .collect();
        let b = b.map_err(|_| format!("{}: `{f}` is not hex", path.display()))?;
        if b.len() != len || s.len() != 2 * len {
            return Err(format!(
                "{}: `{f}` has {} bytes, expected {len}",
                path.display(),
                b.len()
            ));
        }
        Ok(b)
    };
    Ok((
        unhex("pk", d.sizes.public_key)?,
        unhex("sk", d.sizes.secret_key)?,
        unhex("ct", d.sizes.ciphertext)?,
    ))
}

/// A KEM's or key exchange's `keypair(pk, sk)`.
type KeypairFn<'a> = dyn FnMut(&mut [u8], &mut [u8]) -> Result<(), cryptoscope_catalogue::OpError> + 'a;

/// Key generation (KEM or key exchange) once, with the randomness it draws marked secret;
/// the keys it writes are made defined again. Returns what was marked.
fn keypair_with_secret_randomness(
    d: &cryptoscope_catalogue::Descriptor,
    keypair: &mut KeypairFn,
) -> Result<String, String> {
    let (mut pk, mut sk) = (vec![0u8; d.sizes.public_key], vec![0u8; d.sizes.secret_key]);
    let (r, drawn) = with_secret_randomness(|| cryptoscope_ct_op_keypair(&mut || keypair(&mut pk, &mut sk)));
    public(&pk);
    public(&sk);
    r?;
    Ok(format!("the randomness key generation drew ({drawn} bytes)"))
}

/// Memcheck mode: runs each operation once with its secrets marked. The parent reads
/// valgrind's XML; this returns what was marked, per operation. KEMs take their key pair
/// and ciphertext from `material` when given.
pub fn memcheck(s: &Subject, ops: &[String], material: Option<&std::path::Path>) -> Result<Vec<CtAudited>, String> {
    if !available() {
        return Err("this worker was built without valgrind's memcheck.h: install valgrind and rebuild".into());
    }
    let d = s.descriptor();
    let mut done = Vec::new();
    for op in ops {
        let secret_what: String = match (s, op.as_str()) {
            (Subject::Kem(k), "keypair") => keypair_with_secret_randomness(d, &mut |pk, sk| k.keypair(pk, sk))?,
            (Subject::Kem(k), "encaps") => {
                let pk = match material {
                    Some(p) => read_material(p, d)?.0,
                    None => kem_material(k.as_ref())?.0,
                };
                let s = &d.sizes;
                let (mut ct, mut ss) = (vec![0u8; s.ciphertext], vec![0u8; s.shared_secret]);
                let (r, drawn) = with_secret_randomness(|| cryptoscope_ct_op_encaps(k.as_ref(), &mut ct, &mut ss, &pk));
                public(&ct);
                public(&ss);
                r?;
                format!("the randomness encapsulation drew ({drawn} bytes)")
            }
            (Subject::Kex(k), "keypair") => keypair_with_secret_randomness(d, &mut |pk, sk| k.keypair(pk, sk))?,
            (Subject::Kem(k), "decaps" | "decaps-rejected") => {
                let (_pk, sk, ct) = match material {
                    Some(p) => read_material(p, d)?,
                    None => kem_material(k.as_ref())?,
                };
                let (ranges, what) = secret_ranges(&d.algorithm, sk.len());
                let mut ss = vec![0u8; d.sizes.shared_secret];
                mark_ranges(&sk, &ranges);
                let r = if op == "decaps" {
                    cryptoscope_ct_op_decaps(k.as_ref(), &sk, &ct, &mut ss)
                } else {
                    cryptoscope_ct_op_decaps_rejected(k.as_ref(), &sk, &ct, &mut ss)
                };
                public(&ss);
                public(&sk);
                r?;
                what
            }
            (Subject::Kex(k), "exchange") => {
                let sz = &d.sizes;
                let (mut pk, mut sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
                k.keypair(&mut pk, &mut sk).map_err(err)?;
                let (mut peer, mut peer_sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
                k.keypair(&mut peer, &mut peer_sk).map_err(err)?;
                let mut ss = vec![0u8; sz.shared_secret];
                secret(&sk);
                let r = cryptoscope_ct_op_exchange(k.as_ref(), &sk, &peer, &mut ss);
                public(&ss);
                public(&sk);
                r?;
                "the secret key".into()
            }
            (Subject::Hash(h), "hash") => {
                let msg = random(1000);
                let mut out = vec![0u8; d.sizes.shared_secret];
                secret(&msg);
                cryptoscope_ct_op_hash(h.as_ref(), &msg, &mut out);
                public(&out);
                "a 1000-byte message (two updates)".into()
            }
            (Subject::Cipher(c), "key-schedule" | "encrypt") => {
                let info = d.cipher.clone().ok_or("block cipher without cipher information")?;
                let mut k = c.keyed(&random(info.key_bytes)).map_err(err)?;
                let key = random(info.key_bytes);
                secret(&key);
                if op == "key-schedule" {
                    let r = cryptoscope_ct_op_key_schedule(k.as_mut(), &key);
                    public(&key);
                    r?;
                    "the key".into()
                } else {
                    // Expanding the key is the key schedule's report, not this one's.
                    k.rekey(&key).map_err(err)?;
                    let mut blocks = random(encrypt_bytes(&info));
                    secret(&blocks);
                    let r = cryptoscope_ct_op_encrypt(k.as_mut(), &mut blocks);
                    public(&blocks);
                    public(&key);
                    r?;
                    format!("the key and {} plaintext bytes", blocks.len())
                }
            }
            (Subject::Aead(a), "seal" | "open" | "open-forged") => {
                let info = d.aead.ok_or("AEAD without AEAD information")?;
                let key = random(info.key_bytes);
                let nonce = random(info.nonce_bytes);
                let aad = random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES);
                let mut data = random(AEAD_AUDIT_BYTES);
                let mut tag = vec![0u8; info.tag_bytes];
                if op == "seal" {
                    secret(&key);
                    secret(&data);
                    let r = cryptoscope_ct_op_seal(a.as_ref(), &key, &nonce, &aad, &mut data, &mut tag);
                    public(&data);
                    public(&tag);
                    public(&key);
                    r?;
                    format!("the key (its expansion included) and {AEAD_AUDIT_BYTES} plaintext bytes")
                } else {
                    // The ciphertext is made unmarked; the expanded key then comes from the
                    // marked key, so everything derived from it inside `open` is secret.
                    a.keyed(&key)
                        .map_err(err)?
                        .seal(&nonce, &aad, &mut data, &mut tag)
                        .map_err(err)?;
                    secret(&key);
                    let mut out = vec![0u8; data.len()];
                    let r = if op == "open" {
                        cryptoscope_ct_op_open(a.as_ref(), &key, &nonce, &aad, &data, &tag, &mut out)
                    } else {
                        cryptoscope_ct_op_open_forged(a.as_ref(), &key, &nonce, &aad, &data, &tag, &mut out)
                    };
                    public(&out);
                    public(&key);
                    r?;
                    if op == "open" {
                        format!("the key, opening a valid {AEAD_AUDIT_BYTES}-byte ciphertext")
                    } else {
                        format!(
                            "the key, opening a {AEAD_AUDIT_BYTES}-byte ciphertext whose tag's last byte is flipped"
                        )
                    }
                }
            }
            _ => return Err(format!("operation `{op}` is not audited for {}", d.id)),
        };
        done.push(CtAudited {
            subject: d.id.clone(),
            operation: op.clone(),
            secret: secret_what,
            under_valgrind: on_valgrind(),
        });
    }
    Ok(done)
}

/// Settings of a dudect measurement.
pub struct DudectPlan {
    pub samples: u64,
    pub budget: Duration,
    /// Evict the caches (write an 8 MiB buffer) before every call, so that the number of
    /// distinct table lines an input touches shows in its time.
    pub cold: bool,
    /// Write every call's class and time here (`CLASS TIME` lines): a test fixture.
    pub record: Option<std::path::PathBuf>,
}

/// A small xorshift generator for the class sequence (its statistics are all that matter).
struct ClassRng(u64);

impl ClassRng {
    fn bit(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as usize & 1
    }
}

/// The inputs of one call: class 0 gets the fixed input, class 1 one drawn from a pool of
/// random inputs (prepared before timing, so that preparing them is never timed). The fixed
/// input is kept in as many copies as the pool has entries, at their own addresses, so that
/// fetching an input moves the same amount of memory through the caches for both classes
/// (a 64 KiB pool against one hot buffer was itself a class difference).
struct Classes {
    fixed: Vec<Vec<u8>>,
    pool: Vec<Vec<u8>>,
}

impl Classes {
    fn new(fixed: Vec<u8>, pool: Vec<Vec<u8>>) -> Classes {
        Classes {
            fixed: vec![fixed; pool.len()],
            pool,
        }
    }
    fn input(&self, class: usize, i: u64) -> &[u8] {
        let list = if class == 0 { &self.fixed } else { &self.pool };
        &list[i as usize % list.len()]
    }
}

/// The timed call on one input, which the harness has copied into the same working buffer
/// for both classes (so that where an input lives in memory is never a class difference).
type Call<'a> = Box<dyn FnMut(&mut [u8]) -> Result<(), String> + 'a>;

/// dudect mode: Welch's t between fixed and random secret inputs of one operation.
pub fn dudect(s: &Subject, op: &str, plan: &DudectPlan, clock: &cryptoscope_measure::Clock) -> Result<CtStat, String> {
    let d = s.descriptor();
    const POOL: usize = 64;
    let pool = |n: usize| -> Vec<Vec<u8>> { (0..POOL).map(|_| random(n)).collect() };
    // Per family: the two classes, what they are, and the call.
    // Key generation and encapsulation: the input is the 48-byte seed of the randomness the
    // call draws (NIST's CTR_DRBG, installed inside the call: the same work for both
    // classes), one fixed seed against 64 random ones.
    let seeded = |seed: &[u8]| -> Result<cryptoscope_catalogue::rng::KatGuard, String> {
        let seed: [u8; 48] = seed.try_into().map_err(|_| "a 48-byte seed".to_string())?;
        Ok(install_kat(kat_prng(KatPrngKind::AesCtrDrbg, &seed)))
    };
    let (classes, what, mut call): (Classes, String, Call) = match (s, op) {
        (Subject::Kem(_) | Subject::Kex(_), "keypair") => {
            let sz = &d.sizes;
            let (mut pk, mut sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
            (
                Classes::new(vec![0u8; 48], pool(48)),
                "one fixed randomness (a 48-byte DRBG seed) against 64 random ones".into(),
                Box::new(move |seed: &mut [u8]| {
                    let _g = seeded(seed)?;
                    match s {
                        Subject::Kem(k) => k.keypair(&mut pk, &mut sk),
                        Subject::Kex(k) => k.keypair(&mut pk, &mut sk),
                        _ => unreachable!("matched above"),
                    }
                    .map_err(err)
                }),
            )
        }
        (Subject::Kem(k), "encaps") => {
            let k = k.as_ref();
            let pk = kem_material(k)?.0;
            let sz = &d.sizes;
            let (mut ct, mut ss) = (vec![0u8; sz.ciphertext], vec![0u8; sz.shared_secret]);
            (
                Classes::new(vec![0u8; 48], pool(48)),
                "one fixed randomness (a 48-byte DRBG seed) against 64 random ones (same public key)".into(),
                Box::new(move |seed: &mut [u8]| {
                    let _g = seeded(seed)?;
                    k.encaps(&mut ct, &mut ss, &pk).map_err(err)
                }),
            )
        }
        (Subject::Kem(k), "decaps" | "decaps-rejected") => {
            let k = k.as_ref();
            let (pk, sk, ct) = kem_material(k)?;
            let mut others = Vec::with_capacity(POOL);
            for _ in 0..POOL {
                let (mut c, mut ss) = (vec![0u8; d.sizes.ciphertext], vec![0u8; d.sizes.shared_secret]);
                k.encaps(&mut c, &mut ss, &pk).map_err(err)?;
                if op == "decaps-rejected" {
                    // A modified ciphertext: the implicit-rejection path.
                    let i = others.len() % c.len();
                    c[i] ^= 1 << (others.len() % 8);
                }
                others.push(c);
            }
            let what = if op == "decaps" {
                "one valid ciphertext against 64 other valid ones (same key)".to_string()
            } else {
                "one valid ciphertext against 64 modified ones (implicit rejection)".to_string()
            };
            let mut dec = k.decapsulator(&sk).map_err(err)?;
            let mut ss = vec![0u8; d.sizes.shared_secret];
            let rejected = op == "decaps-rejected";
            (
                Classes::new(ct, others),
                what,
                Box::new(move |c: &mut [u8]| match dec.decaps(&mut ss, c) {
                    // HQC reports a rejected ciphertext as an error (after computing the
                    // implicit-rejection secret): part of the path being timed.
                    Err(_) if rejected => Ok(()),
                    r => r.map_err(err),
                }),
            )
        }
        (Subject::Kex(k), "exchange") => {
            let k = k.as_ref();
            let sz = &d.sizes;
            let mut keys = Vec::with_capacity(POOL + 2);
            for _ in 0..POOL + 2 {
                let (mut pk, mut sk) = (vec![0u8; sz.public_key], vec![0u8; sz.secret_key]);
                k.keypair(&mut pk, &mut sk).map_err(err)?;
                keys.push((pk, sk));
            }
            let peer = keys.pop().expect("keys").0;
            let fixed = keys.pop().expect("keys").1;
            let mut ss = vec![0u8; sz.shared_secret];
            (
                Classes::new(fixed, keys.into_iter().map(|k| k.1).collect()),
                "one secret key against 64 others (same peer)".into(),
                Box::new(move |sk: &mut [u8]| {
                    let mut e = k.exchanger(sk).map_err(err)?;
                    e.exchange(&mut ss, &peer).map_err(err)
                }),
            )
        }
        (Subject::Hash(h), "hash") => {
            let h = h.as_ref();
            let mut out = vec![0u8; d.sizes.shared_secret];
            (
                Classes::new(vec![0u8; 1024], pool(1024)),
                "a 1024-byte all-zero message against random ones".into(),
                Box::new(move |m: &mut [u8]| {
                    let mut s = h.start();
                    s.update(m);
                    s.finish(&mut out);
                    Ok(())
                }),
            )
        }
        (Subject::Cipher(c), "key-schedule") => {
            let info = d.cipher.clone().ok_or("block cipher without cipher information")?;
            let mut k = c.keyed(&random(info.key_bytes)).map_err(err)?;
            (
                Classes::new(vec![0u8; info.key_bytes], pool(info.key_bytes)),
                "the all-zero key against random keys".into(),
                Box::new(move |key: &mut [u8]| k.rekey(key).map_err(err)),
            )
        }
        (Subject::Cipher(c), "encrypt") => {
            let info = d.cipher.clone().ok_or("block cipher without cipher information")?;
            let mut k = c.keyed(&random(info.key_bytes)).map_err(err)?;
            let n = encrypt_bytes(&info);
            (
                Classes::new(vec![0u8; n], pool(n)),
                format!("{n} all-zero plaintext bytes against random ones (one random key)"),
                Box::new(move |p: &mut [u8]| k.encrypt(p).map_err(err)),
            )
        }
        (Subject::Aead(a), "seal") => {
            let info = d.aead.ok_or("AEAD without AEAD information")?;
            let mut k = a.keyed(&random(info.key_bytes)).map_err(err)?;
            let (nonce, aad) = (
                random(info.nonce_bytes),
                random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES),
            );
            let mut tag = vec![0u8; info.tag_bytes];
            (
                Classes::new(vec![0u8; AEAD_AUDIT_BYTES], pool(AEAD_AUDIT_BYTES)),
                format!("{AEAD_AUDIT_BYTES} all-zero plaintext bytes against random ones (one random key)"),
                Box::new(move |m: &mut [u8]| k.seal(&nonce, &aad, m, &mut tag).map_err(err)),
            )
        }
        (Subject::Aead(a), "open") => {
            // Each input is a ciphertext and its tag: of the all-zero message, or of one of
            // 64 random messages (same key and nonce).
            let info = d.aead.ok_or("AEAD without AEAD information")?;
            let mut k = a.keyed(&random(info.key_bytes)).map_err(err)?;
            let (nonce, aad) = (
                random(info.nonce_bytes),
                random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES),
            );
            let mut sealed = |m: Vec<u8>| -> Result<Vec<u8>, String> {
                let mut data = m;
                let mut tag = vec![0u8; info.tag_bytes];
                k.seal(&nonce, &aad, &mut data, &mut tag).map_err(err)?;
                data.extend(tag);
                Ok(data)
            };
            let fixed = sealed(vec![0u8; AEAD_AUDIT_BYTES])?;
            let others = pool(AEAD_AUDIT_BYTES)
                .into_iter()
                .map(&mut sealed)
                .collect::<Result<Vec<_>, _>>()?;
            let mut out = vec![0u8; AEAD_AUDIT_BYTES];
            (
                Classes::new(fixed, others),
                format!("the ciphertext of {AEAD_AUDIT_BYTES} zero bytes against those of random messages (one key)"),
                Box::new(move |w: &mut [u8]| {
                    let (ct, tag) = w.split_at(AEAD_AUDIT_BYTES);
                    k.open(&nonce, &aad, ct, tag, &mut out).map_err(err)
                }),
            )
        }
        (Subject::Aead(a), "open-forged") => {
            // dudect's comparison test: one ciphertext, and tags that differ from its valid
            // tag only in the last byte (fixed) or anywhere (random): a compare that stops
            // at the first difference takes longer on the fixed class.
            let info = d.aead.ok_or("AEAD without AEAD information")?;
            let mut k = a.keyed(&random(info.key_bytes)).map_err(err)?;
            let (nonce, aad) = (
                random(info.nonce_bytes),
                random(cryptoscope_catalogue::descriptor::AEAD_AAD_BYTES),
            );
            let mut ct = random(16);
            let mut tag = vec![0u8; info.tag_bytes];
            k.seal(&nonce, &aad, &mut ct, &mut tag).map_err(err)?;
            let mut fixed = tag.clone();
            let last = fixed.len() - 1;
            fixed[last] ^= 0x80;
            let mut out = vec![0u8; ct.len()];
            (
                Classes::new(fixed, pool(info.tag_bytes)),
                "a 16-byte ciphertext with its tag's last byte flipped against random tags".into(),
                Box::new(move |t: &mut [u8]| match k.open(&nonce, &aad, &ct, t, &mut out) {
                    Ok(()) => Err("opened a ciphertext with a forged tag".into()),
                    Err(_) => Ok(()),
                }),
            )
        }
        _ => return Err(format!("operation `{op}` is not audited for {}", d.id)),
    };
    let mut seed = [0u8; 8];
    cryptoscope_catalogue::rng::fill(&mut seed);
    let (result, seconds) = measure_classes(&classes, &mut call, plan, clock, u64::from_le_bytes(seed))?;
    Ok(CtStat {
        subject: d.id.clone(),
        operation: op.to_string(),
        classes: what,
        cold: plan.cold,
        unit: if clock.tsc_hz().is_some() {
            "TSC ticks".into()
        } else {
            "ns".into()
        },
        seconds,
        result,
    })
}

/// The measured part of a dudect test: each call's class drawn at random (from `seed`),
/// its input copied into the working buffer, the call timed with `timer`, and every
/// (class, time) given to the analysis. Generic over the timer so that the calibration
/// cases are tested on timings the test controls (tests below); the time budget and the
/// "too slow" rule read the real clock. Returns the result and the seconds spent.
fn measure_classes<T: Timer>(
    classes: &Classes,
    call: &mut Call,
    plan: &DudectPlan,
    timer: &T,
    seed: u64,
) -> Result<(cryptoscope_measure::ttest::TResult, f64), String> {
    let mut rng = ClassRng(seed | 1);
    let mut evict = if plan.cold { vec![0u8; 8 << 20] } else { Vec::new() };
    let mut leak = Leakage::new();
    let mut work = classes.fixed[0].clone();
    // Room for the recording, made before timing starts (the loop must not allocate).
    let mut recorded: Vec<(u8, u64)> = Vec::with_capacity(if plan.record.is_some() {
        plan.samples.min(10_000_000) as usize
    } else {
        0
    });
    // Warm-up: one call of each class (first-call effects are not a class difference).
    // The faster of the two is the call's cost: one call stalled by a neighbour on a
    // shared machine does not make a fast operation too slow to test.
    let mut per_call = Duration::MAX;
    for class in [0, 1] {
        work.copy_from_slice(classes.input(class, 0));
        let t = Instant::now();
        call(&mut work)?;
        per_call = per_call.min(t.elapsed());
    }
    // The test needs at least 200 calls; an operation whose call takes more than a twentieth
    // of the budget (Classic McEliece's key generation) would take over ten times as long
    // as asked.
    if per_call > plan.budget / 20 {
        return Err(format!(
            "{TOO_SLOW}: one call takes {:.3} s, and the test needs at least 200 calls (budget {:.0} s)",
            per_call.as_secs_f64(),
            plan.budget.as_secs_f64()
        ));
    }
    let started = Instant::now();
    let mut i = 0u64;
    // At least 200 calls (100 per class on average), however slow the operation.
    while i < plan.samples && (i < 200 || started.elapsed() < plan.budget) {
        let class = rng.bit();
        work.copy_from_slice(classes.input(class, i));
        if plan.cold {
            for b in evict.iter_mut().step_by(64) {
                *b = b.wrapping_add(1);
            }
            std::hint::black_box(&evict);
        }
        let a = timer.start();
        let r = call(&mut work);
        let b = timer.stop();
        r?;
        let (_, ticks) = timer.elapsed(a, b);
        leak.push(class, ticks as f64);
        if plan.record.is_some() && recorded.len() < recorded.capacity() {
            recorded.push((class as u8, ticks));
        }
        i += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(path) = &plan.record {
        let text: String = recorded.iter().map(|(c, t)| format!("{c} {t}\n")).collect();
        std::fs::write(path, text).map_err(|e| format!("--record {}: {e}", path.display()))?;
    }
    Ok((leak.result(), seconds))
}

#[cfg(test)]
mod tests {
    //! dudect's calibration cases on timings the test controls. A model of each case
    //! (what the code does with its input, from how it is written) sets the cost of every
    //! call; a scripted timer hands that cost, with seeded noise and a preempted call's
    //! heavy tail, to the worker's real measuring loop and analysis. The verdicts below
    //! are the calibration the live audit (crates/cli/tests/ct.rs) used to assert on a
    //! shared machine's timing: now they hold on any machine under any load.
    use super::*;
    use cryptoscope_measure::ScriptedTimer;
    use cryptoscope_testkit::Samples;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    const PLAN: DudectPlan = DudectPlan {
        samples: 20_000,
        budget: Duration::from_secs(3600),
        cold: false,
        record: None,
    };

    /// Runs the worker's loop over `classes` with a call whose cost is `model(input)` plus
    /// noise (sd 40 ticks) and, one call in fifty, a preemption of 3,000 ticks on average.
    fn run(
        classes: Classes,
        seed: u64,
        model: impl Fn(&[u8], u64) -> f64 + 'static,
    ) -> cryptoscope_measure::ttest::TResult {
        // The call sets its cost; the timer reads it as the region ends.
        let cost = Rc::new(Cell::new(0.0));
        let noise = Rc::new(RefCell::new(Samples::new(seed)));
        let (c, calls) = (cost.clone(), Rc::new(Cell::new(0u64)));
        let mut call: Call = Box::new(move |input: &mut [u8]| {
            let k = calls.get();
            calls.set(k + 1);
            let extra = noise.borrow_mut().timing(0.0, 40.0, 0.02, 3000.0);
            c.set(model(input, k) + extra);
            Ok(())
        });
        let timer = ScriptedTimer::new(move || cost.get());
        let (r, _) = measure_classes(&classes, &mut call, &PLAN, &timer, seed).unwrap();
        assert_eq!(r.samples, PLAN.samples, "every planned call measured");
        r
    }

    /// Pseudo-random 16-byte inputs for the random class.
    fn pool(seed: u64) -> Vec<Vec<u8>> {
        let mut g = Samples::new(seed);
        (0..64)
            .map(|_| (0..16).map(|_| (g.uniform() * 256.0) as u8).collect())
            .collect()
    }

    /// The testbed's tag compare (crates/providers/testbed): bytes compared until the
    /// first difference against the valid tag, about 2 ticks each, on a 5,500-tick open.
    fn early_exit(valid: &[u8], input: &[u8]) -> f64 {
        let same = valid.iter().zip(input).take_while(|(a, b)| a == b).count();
        5500.0 + 2.0 * (same + 1).min(valid.len()) as f64
    }

    #[test]
    fn an_early_exit_compare_is_flagged_and_the_constant_one_is_not() {
        for seed in 1..=5 {
            let valid: Vec<u8> = (0..16).collect();
            // dudect's forged-tag classes: the last byte flipped (all 16 compared) against
            // random tags (one compare, mostly).
            let mut fixed = valid.clone();
            fixed[15] ^= 0x80;
            let v = valid.clone();
            let leaky = run(Classes::new(fixed.clone(), pool(seed)), seed, move |t, _| {
                early_exit(&v, t)
            });
            assert!(leaky.leak, "seed {seed}: the early exit missed: {leaky:?}");
            assert!(leaky.mean_fixed > leaky.mean_random, "seed {seed}: {leaky:?}");
            let constant = run(Classes::new(fixed, pool(seed)), seed, |_, _| 5500.0 + 32.0);
            assert!(
                !constant.leak,
                "seed {seed}: a constant-time compare flagged: {constant:?}"
            );
        }
    }

    #[test]
    fn a_secret_indexed_table_is_flagged_and_a_bitsliced_cipher_is_not() {
        // A table strategy's time grows with the distinct cache lines its input touches
        // (16 entries per line, cold): one fixed all-zero block (one line) against random
        // blocks (up to 16 lines).
        for seed in 1..=5 {
            let table = |b: &[u8], _: u64| {
                let mut lines: Vec<u8> = b.iter().map(|x| x >> 4).collect();
                lines.sort_unstable();
                lines.dedup();
                900.0 + 60.0 * lines.len() as f64
            };
            let t = run(Classes::new(vec![0u8; 16], pool(seed)), seed, table);
            assert!(t.leak, "seed {seed}: {t:?}");
            let b = run(Classes::new(vec![0u8; 16], pool(seed)), seed, |_, _| 1400.0);
            assert!(!b.leak, "seed {seed}: {b:?}");
        }
    }

    /// A recording of `ct-dudect --record` (fixtures/dudect/README.md): (class, time).
    fn recording(name: &str) -> Vec<(usize, f64)> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/dudect")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .map(|l| {
                let (c, t) = l.split_once(' ').expect("CLASS TIME");
                (c.parse().unwrap(), t.parse().unwrap())
            })
            .collect()
    }

    /// The calibration pairs as timed once on a real machine: the analysis flags the
    /// early-exit compare and the table strategy, and not their constant-time fixes. (What
    /// each must give comes from how the code is written; the recording only fixes the
    /// samples, so the verdict no longer depends on the machine the test runs on.)
    #[test]
    fn recorded_timings_of_the_calibration_pairs() {
        for (file, leak) in [
            ("early-exit-hash.txt", true),
            ("constant-compare-hash.txt", false),
            ("gift64-table-encrypt-cold.txt", true),
            ("gift64-fixsliced-encrypt-cold.txt", false),
        ] {
            let samples = recording(file);
            assert_eq!(samples.len(), 10_000, "{file}");
            let mut l = Leakage::new();
            for (class, t) in samples {
                l.push(class, t);
            }
            let r = l.result();
            assert_eq!(r.leak, leak, "{file}: {r:?}");
        }
    }

    #[test]
    fn a_neighbour_slowing_the_machine_is_not_a_leak() {
        // The classes are interleaved at random, so a stretch of slow calls (a neighbour,
        // frequency scaling) lands on both: a constant-time operation stays clean.
        for seed in 1..=5 {
            let r = run(Classes::new(vec![0u8; 16], pool(seed)), seed, |_, k| {
                if (5_000..9_000).contains(&k) {
                    3000.0
                } else {
                    2000.0 + (k as f64) * 0.01 // and a slow drift
                }
            });
            assert!(!r.leak, "seed {seed}: {r:?}");
        }
    }

    #[test]
    fn a_difference_in_spread_alone_is_found() {
        // Same mean, but the fixed input's time varies ten times as much (a data-dependent
        // number of rounds around the same average): the second-order test sees it.
        for seed in 1..=5 {
            let g = RefCell::new(Samples::new(seed ^ 0xabc));
            let r = run(Classes::new(vec![0u8; 16], pool(seed)), seed, move |x, _| {
                let sd = if x == [0u8; 16] { 400.0 } else { 40.0 };
                3000.0 + sd * g.borrow_mut().normal()
            });
            assert!(r.leak, "seed {seed}: {r:?}");
        }
    }
}
