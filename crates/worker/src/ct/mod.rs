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
//! What is secret, per family (each family's module in `crate::family` marks it):
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
//!   branches: the parent reports such findings apart (see `engine/src/ct.rs`).

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

pub(crate) fn err(e: impl std::fmt::Display) -> String {
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
pub(crate) fn with_secret_randomness<R>(f: impl FnOnce() -> R) -> (R, usize) {
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
pub(crate) fn cryptoscope_ct_op_keypair(
    f: &mut dyn FnMut() -> Result<(), cryptoscope_catalogue::OpError>,
) -> Result<(), String> {
    f().map_err(err)
}

/// How a dudect refusal for a slow operation begins (the parent reports it as not run).
pub const TOO_SLOW: &str = "too slow for dudect";

/// `n` random bytes.
pub(crate) fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    cryptoscope_catalogue::rng::fill(&mut v);
    v
}

/// A KEM's or key exchange's `keypair(pk, sk)`.
pub(crate) type KeypairFn<'a> = dyn FnMut(&mut [u8], &mut [u8]) -> Result<(), cryptoscope_catalogue::OpError> + 'a;

/// Key generation (KEM or key exchange) once, with the randomness it draws marked secret;
/// the keys it writes are made defined again. Returns what was marked.
pub(crate) fn keypair_with_secret_randomness(
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

/// Memcheck mode: runs each operation once with its secrets marked (as its family marks
/// them, `crate::family`). The parent reads valgrind's XML; this returns what was marked,
/// per operation. KEMs take their key pair and ciphertext from `material` when given.
pub fn memcheck(s: &Subject, ops: &[String], material: Option<&std::path::Path>) -> Result<Vec<CtAudited>, String> {
    if !available() {
        return Err("this worker was built without valgrind's memcheck.h: install valgrind and rebuild".into());
    }
    let family = crate::family::of(s);
    let mut done = Vec::new();
    for op in ops {
        done.push(CtAudited {
            subject: s.descriptor().id.clone(),
            operation: op.clone(),
            secret: family.memcheck(op, material)?,
            under_valgrind: on_valgrind(),
        });
    }
    Ok(done)
}

pub mod dudect;
pub(crate) use dudect::seeded;
pub use dudect::{dudect, DudectPlan};
