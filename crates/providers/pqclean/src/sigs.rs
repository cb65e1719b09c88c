//! PQClean's signature schemes through the `pqcrypto-mldsa`, `pqcrypto-falcon` and
//! `pqcrypto-sphincsplus` crates: ML-DSA-44/65/87, Falcon-512/1024 (compressed and padded)
//! and the twelve SPHINCS+ "simple" parameter sets, each as its "clean" and (on x86_64) its
//! "avx2" implementation, called through the crates' `ffi` modules as the KEMs are.
//!
//! Every random byte (keys, ML-DSA's `rnd`, Falcon's nonce and sampler seed, SPHINCS+'s
//! `opt_rand`) comes from PQClean's `randombytes`, which this crate routes to the harness:
//! the gate reproduces liboqs's signature KATs with them.
//!
//! The SPHINCS+ in PQClean is the round-3.1 submission, not FIPS 205 SLH-DSA. ML-DSA signs
//! with contexts (`crypto_sign_signature_ctx` / `crypto_sign_verify_ctx`, FIPS 204 pure);
//! Falcon and SPHINCS+ refuse a non-empty one. Signatures are length-checked here before
//! PQClean reads them.

use cryptoscope_catalogue::descriptor::{Availability, Descriptor, KatPrngKind, KatRef, Randomness, SigInfo, Signing};
use cryptoscope_catalogue::traits::{check_len, OpError, Sig, Signer, Subject, Verifier};
use libc::c_int;

/// The liboqs signature KAT digests (the file the gate reads under `vectors/sig/`).
const KAT_FILE: &str = "liboqs-0.13.0-sig-kats.json";

/// The most bytes a context string may have (FIPS 204).
const MAX_CONTEXT: usize = 255;

type KeypairFn = unsafe extern "C" fn(*mut u8, *mut u8) -> c_int;
type SignFn = unsafe extern "C" fn(*mut u8, *mut usize, *const u8, usize, *const u8) -> c_int;
type VerifyFn = unsafe extern "C" fn(*const u8, usize, *const u8, usize, *const u8) -> c_int;
type SignCtxFn = unsafe extern "C" fn(*mut u8, *mut usize, *const u8, usize, *const u8, usize, *const u8) -> c_int;
type VerifyCtxFn = unsafe extern "C" fn(*const u8, usize, *const u8, usize, *const u8, usize, *const u8) -> c_int;

/// How a scheme signs, what it is and how it encodes (PQClean says none of it).
struct Kind {
    signing: Signing,
    variable_length: bool,
    scheme: &'static str,
    encoding: &'static str,
}

const ML_DSA: Kind = Kind {
    signing: Signing::Hedged,
    variable_length: false,
    scheme: "FIPS 204 ML-DSA, pure, hedged (rnd from randombytes); contexts up to 255 bytes",
    encoding: "FIPS 204 pkEncode; expanded skEncode; FIPS 204 signature",
};
const FALCON: Kind = Kind {
    signing: Signing::Randomized,
    variable_length: true,
    scheme: "Falcon round 3 (PQClean), randomized: 40-byte nonce and sampler seed from randombytes",
    encoding: "Falcon round-3 public key and secret key; signature: header byte, 40-byte nonce, compressed s2 \
               (variable length)",
};
const FALCON_PADDED: Kind = Kind {
    signing: Signing::Randomized,
    variable_length: false,
    scheme: "Falcon round 3 (PQClean), randomized: 40-byte nonce and sampler seed from randombytes",
    encoding: "Falcon round-3 public key and secret key; signature: header byte, 40-byte nonce, compressed s2 \
               zero-padded to a fixed length",
};
const SPHINCS: Kind = Kind {
    signing: Signing::Hedged,
    variable_length: false,
    scheme: "SPHINCS+ round 3.1, simple (not FIPS 205 SLH-DSA); opt_rand from randombytes, \
             R = PRF_msg(SK.prf, opt_rand, M): hedged",
    encoding: "PK.seed || PK.root; SK.seed || SK.prf || PK.seed || PK.root; R || FORS signature || hypertree signature",
};

/// The signing and verifying functions of an implementation.
#[derive(Clone, Copy)]
enum Fns {
    /// `crypto_sign_signature` and `crypto_sign_verify` (Falcon, SPHINCS+).
    Plain(SignFn, VerifyFn),
    /// `crypto_sign_signature_ctx` and `crypto_sign_verify_ctx` (ML-DSA). PQClean's
    /// `crypto_sign_signature` and `crypto_sign_verify` for ML-DSA are macros calling these
    /// with an empty context (the `ffi` module of `pqcrypto-mldsa` 0.1.2 declares them as
    /// functions, which no object defines).
    Ctx(SignCtxFn, VerifyCtxFn),
}

struct Entry {
    alg: &'static str,
    imp: &'static str,
    crate_name: &'static str,
    kind: &'static Kind,
    pk_bytes: usize,
    sk_bytes: usize,
    sig_bytes: usize,
    keypair: KeypairFn,
    fns: Fns,
}

macro_rules! entry {
    ($v:ident, $alg:literal, $imp:literal, $krate:ident, $prefix:ident, $kind:ident, $fns:expr) => {
        paste::paste! {
            $v.push(Entry {
                alg: $alg,
                imp: $imp,
                crate_name: stringify!($krate),
                kind: &$kind,
                pk_bytes: $krate::ffi::[<$prefix _CRYPTO_PUBLICKEYBYTES>],
                sk_bytes: $krate::ffi::[<$prefix _CRYPTO_SECRETKEYBYTES>],
                sig_bytes: $krate::ffi::[<$prefix _CRYPTO_BYTES>],
                keypair: $krate::ffi::[<$prefix _crypto_sign_keypair>],
                fns: $fns,
            });
        }
    };
}

/// The clean and AVX2 entries of a scheme without contexts.
macro_rules! both {
    ($v:ident, $alg:literal, $krate:ident, $ns:ident, $kind:ident) => {
        paste::paste! {
            entry!($v, $alg, "clean", $krate, [<PQCLEAN_ $ns _CLEAN>], $kind, Fns::Plain(
                $krate::ffi::[<PQCLEAN_ $ns _CLEAN_crypto_sign_signature>],
                $krate::ffi::[<PQCLEAN_ $ns _CLEAN_crypto_sign_verify>],
            ));
            #[cfg(target_arch = "x86_64")]
            entry!($v, $alg, "avx2", $krate, [<PQCLEAN_ $ns _AVX2>], $kind, Fns::Plain(
                $krate::ffi::[<PQCLEAN_ $ns _AVX2_crypto_sign_signature>],
                $krate::ffi::[<PQCLEAN_ $ns _AVX2_crypto_sign_verify>],
            ));
        }
    };
}

/// The clean and AVX2 entries of an ML-DSA parameter set, through its context functions.
macro_rules! both_ctx {
    ($v:ident, $alg:literal, $krate:ident, $ns:ident, $kind:ident) => {
        paste::paste! {
            entry!($v, $alg, "clean", $krate, [<PQCLEAN_ $ns _CLEAN>], $kind, Fns::Ctx(
                $krate::ffi::[<PQCLEAN_ $ns _CLEAN_crypto_sign_signature_ctx>],
                $krate::ffi::[<PQCLEAN_ $ns _CLEAN_crypto_sign_verify_ctx>],
            ));
            #[cfg(target_arch = "x86_64")]
            entry!($v, $alg, "avx2", $krate, [<PQCLEAN_ $ns _AVX2>], $kind, Fns::Ctx(
                $krate::ffi::[<PQCLEAN_ $ns _AVX2_crypto_sign_signature_ctx>],
                $krate::ffi::[<PQCLEAN_ $ns _AVX2_crypto_sign_verify_ctx>],
            ));
        }
    };
}

// Pushes come from macros, some behind `cfg(target_arch)`, so a `vec![]` literal does not fit.
#[allow(clippy::vec_init_then_push)]
fn entries() -> Vec<Entry> {
    let mut v = Vec::new();
    both_ctx!(v, "ML-DSA-44", pqcrypto_mldsa, MLDSA44, ML_DSA);
    both_ctx!(v, "ML-DSA-65", pqcrypto_mldsa, MLDSA65, ML_DSA);
    both_ctx!(v, "ML-DSA-87", pqcrypto_mldsa, MLDSA87, ML_DSA);
    both!(v, "Falcon-512", pqcrypto_falcon, FALCON512, FALCON);
    both!(v, "Falcon-1024", pqcrypto_falcon, FALCON1024, FALCON);
    both!(v, "Falcon-padded-512", pqcrypto_falcon, FALCONPADDED512, FALCON_PADDED);
    both!(
        v,
        "Falcon-padded-1024",
        pqcrypto_falcon,
        FALCONPADDED1024,
        FALCON_PADDED
    );
    both!(
        v,
        "SPHINCS+-SHA2-128f-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHA2128FSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHA2-128s-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHA2128SSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHA2-192f-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHA2192FSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHA2-192s-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHA2192SSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHA2-256f-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHA2256FSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHA2-256s-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHA2256SSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHAKE-128f-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHAKE128FSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHAKE-128s-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHAKE128SSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHAKE-192f-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHAKE192FSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHAKE-192s-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHAKE192SSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHAKE-256f-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHAKE256FSIMPLE,
        SPHINCS
    );
    both!(
        v,
        "SPHINCS+-SHAKE-256s-simple",
        pqcrypto_sphincsplus,
        SPHINCSSHAKE256SSIMPLE,
        SPHINCS
    );
    v
}

struct PqSig {
    desc: Descriptor,
    e: Entry,
}

impl PqSig {
    /// Refuses a context the scheme cannot take: any on a scheme without contexts
    /// (unavailable), more than 255 bytes on one with them.
    fn check_context(&self, op: &'static str, ctx: &[u8]) -> Result<(), OpError> {
        if ctx.is_empty() {
            Ok(())
        } else if matches!(self.e.fns, Fns::Plain(..)) {
            Err(OpError::Unavailable(format!(
                "PQClean's {} signs with no context string",
                self.e.alg
            )))
        } else if ctx.len() > MAX_CONTEXT {
            Err(OpError::failed(
                op,
                format!("a context of {} bytes (at most {MAX_CONTEXT})", ctx.len()),
            ))
        } else {
            Ok(())
        }
    }
}

/// A context's pointer: NULL when empty, as PQClean's own context-free macros pass it.
fn ctx_ptr(ctx: &[u8]) -> *const u8 {
    if ctx.is_empty() {
        std::ptr::null()
    } else {
        ctx.as_ptr()
    }
}

fn rc(op: &'static str, r: c_int) -> Result<(), OpError> {
    if r == 0 {
        Ok(())
    } else {
        Err(OpError::failed(op, format!("PQClean returned {r}")))
    }
}

impl Sig for PqSig {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        check_len("keypair", "pk", pk.len(), self.e.pk_bytes)?;
        check_len("keypair", "sk", sk.len(), self.e.sk_bytes)?;
        // SAFETY: lengths match the implementation's CRYPTO_* constants.
        rc("keypair", unsafe { (self.e.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()) })?;
        Ok((pk.len(), sk.len()))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        check_len("sign", "sk", sk.len(), self.e.sk_bytes)?;
        Ok(Box::new(PqSigner {
            s: self,
            sk: sk.to_vec(),
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        check_len("verify", "pk", pk.len(), self.e.pk_bytes)?;
        Ok(Box::new(PqVerifier {
            s: self,
            pk: pk.to_vec(),
        }))
    }
}

/// A secret key held for signing (PQClean reads it from bytes on every call).
struct PqSigner<'a> {
    s: &'a PqSig,
    sk: Vec<u8>,
}

impl Drop for PqSigner<'_> {
    fn drop(&mut self) {
        self.sk.fill(0);
        std::hint::black_box(&self.sk);
    }
}

impl Signer for PqSigner<'_> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        const OP: &str = "sign";
        self.s.check_context(OP, ctx)?;
        let e = &self.s.e;
        if sig.len() < e.sig_bytes {
            return Err(OpError::BadLength {
                op: OP,
                buffer: "sig",
                got: sig.len(),
                expected: e.sig_bytes,
            });
        }
        let mut len = 0usize;
        let r = match e.fns {
            // SAFETY: `sig` holds at least CRYPTO_BYTES, `sk` CRYPTO_SECRETKEYBYTES; the
            // context is at most 255 bytes (NULL and 0 when empty, as PQClean's macros pass).
            Fns::Ctx(sign, _) => unsafe {
                sign(
                    sig.as_mut_ptr(),
                    &mut len,
                    msg.as_ptr(),
                    msg.len(),
                    ctx_ptr(ctx),
                    ctx.len(),
                    self.sk.as_ptr(),
                )
            },
            // SAFETY: as above (no context: refused earlier unless empty).
            Fns::Plain(sign, _) => unsafe {
                sign(sig.as_mut_ptr(), &mut len, msg.as_ptr(), msg.len(), self.sk.as_ptr())
            },
        };
        rc(OP, r)?;
        if len == 0 || len > e.sig_bytes {
            return Err(OpError::failed(
                OP,
                format!("PQClean reported a signature of {len} bytes (at most {})", e.sig_bytes),
            ));
        }
        Ok(len)
    }
}

/// A public key held for verifying.
struct PqVerifier<'a> {
    s: &'a PqSig,
    pk: Vec<u8>,
}

impl Verifier for PqVerifier<'_> {
    /// PQClean returns -1 for every rejection: each is `Ok(false)`. A signature of the
    /// wrong length is rejected before PQClean reads it.
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        let s = self.s;
        match s.check_context("verify", ctx) {
            Err(OpError::Unavailable(e)) => return Err(OpError::Unavailable(e)),
            Err(_) => return Ok(false),
            Ok(()) => {}
        }
        let e = &s.e;
        let max = e.sig_bytes;
        if sig.is_empty() || sig.len() > max || (!e.kind.variable_length && sig.len() != max) {
            return Ok(false);
        }
        let r = match e.fns {
            // SAFETY: lengths as PQClean expects; the key has CRYPTO_PUBLICKEYBYTES.
            Fns::Ctx(_, verify) => unsafe {
                verify(
                    sig.as_ptr(),
                    sig.len(),
                    msg.as_ptr(),
                    msg.len(),
                    ctx_ptr(ctx),
                    ctx.len(),
                    self.pk.as_ptr(),
                )
            },
            // SAFETY: as above.
            Fns::Plain(_, verify) => unsafe {
                verify(sig.as_ptr(), sig.len(), msg.as_ptr(), msg.len(), self.pk.as_ptr())
            },
        };
        Ok(r == 0)
    }
}

/// Every PQClean signature subject.
pub fn subjects() -> Vec<Subject> {
    entries()
        .into_iter()
        .map(|e| {
            let (availability, build, version): (Availability, String, String) =
                crate::implementation(e.imp, e.crate_name);
            let mut desc = Descriptor::signature(
                e.alg,
                crate::PROVIDER,
                e.imp,
                version.clone(),
                build,
                [e.pk_bytes, e.sk_bytes],
                Randomness::Harness,
                SigInfo {
                    signature_bytes: e.sig_bytes,
                    variable_length: e.kind.variable_length,
                    signing: e.kind.signing,
                    context: matches!(e.fns, Fns::Ctx(..)),
                    scheme: e.kind.scheme.into(),
                    encoding: e.kind.encoding.into(),
                },
            );
            desc.availability = availability;
            desc.algorithm_version = format!("PQClean as vendored in {version}");
            desc.kat = Some(KatRef {
                file: KAT_FILE.into(),
                name: e.alg.into(),
                prng: KatPrngKind::AesCtrDrbg,
            });
            Subject::Sig(Box::new(PqSig { desc, e }))
        })
        .collect()
}
