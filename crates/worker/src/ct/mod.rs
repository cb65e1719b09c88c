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
use cryptoscope_catalogue::{Descriptor, KatPrngKind, Subject};
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

mod dudect;
pub use dudect::{dudect, DudectPlan};
