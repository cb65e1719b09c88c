//! liboqs's signature schemes through `OQS_SIG`: ML-DSA-44/65/87, Falcon-512/1024 (compressed
//! and padded), the twelve SPHINCS+ "simple" parameter sets, MAYO-1/2/3/5, CROSS
//! (RSDP and RSDP(G), 128-bit, fast) and OV-Is. A scheme our liboqs build does not enable
//! is left out.
//!
//! As for the KEMs, liboqs picks the implementation at run time (`OQS_DIST_BUILD`: AVX2 code
//! where the CPU has it, portable code otherwise): the implementation is "dispatch". Every
//! random byte (keys, ML-DSA's `rnd`, Falcon's nonce and sampler seed, SPHINCS+'s
//! `opt_rand`, MAYO's and OV's salts, CROSS's seeds and salt) goes through
//! `OQS_randombytes`, which this provider routes to the harness, so the gate reproduces
//! liboqs's signature KATs.
//!
//! The SPHINCS+ liboqs 0.13 ships is the round-3.1 submission, not FIPS 205 SLH-DSA: its
//! subjects are named and described as SPHINCS+.
//!
//! Contexts: liboqs's `sign_with_ctx_str` / `verify_with_ctx_str` for the schemes whose
//! `sig_with_ctx_support` is set (ML-DSA, FIPS 204 pure signing); the others refuse a
//! non-empty context. Signatures are length-checked here before liboqs sees them: some
//! implementations ignore the length they are given (CROSS reads a whole signature).

use cryptoscope_catalogue::descriptor::{Descriptor, KatPrngKind, KatRef, Randomness, SigInfo, Signing};
use cryptoscope_catalogue::names;
use cryptoscope_catalogue::traits::{check_len, OpError, Sig, Signer, Subject, Verifier};
use oqs_sys::common::OQS_STATUS;
use oqs_sys::sig::{OQS_SIG_alg_is_enabled, OQS_SIG_free, OQS_SIG_new, OQS_SIG};
use std::ffi::{CStr, CString};

/// The liboqs signature KAT digests (the file the gate reads under `vectors/sig/`).
const KAT_FILE: &str = "liboqs-0.13.0-sig-kats.json";

/// The most bytes a context string may have (FIPS 204).
const MAX_CONTEXT: usize = 255;

struct OqsSig {
    sig: *mut OQS_SIG,
    desc: Descriptor,
    /// liboqs signs with a context string (`sig_with_ctx_support`).
    ctx: bool,
    /// The signature always has `length_signature` bytes.
    fixed_length: bool,
}

// SAFETY: an OQS_SIG is an immutable table of sizes and function pointers; liboqs signature
// functions are reentrant and keep no per-object state.
unsafe impl Send for OqsSig {}
unsafe impl Sync for OqsSig {}

impl Drop for OqsSig {
    fn drop(&mut self) {
        // SAFETY: `sig` came from OQS_SIG_new and is freed once.
        unsafe { OQS_SIG_free(self.sig) };
    }
}

impl OqsSig {
    fn table(&self) -> &OQS_SIG {
        // SAFETY: non-null (checked at construction) and alive until drop.
        unsafe { &*self.sig }
    }

    /// Refuses a context the scheme cannot take: any on a scheme without contexts
    /// (unavailable), more than 255 bytes on one with them.
    fn check_context(&self, op: &'static str, ctx: &[u8]) -> Result<(), OpError> {
        if ctx.is_empty() {
            Ok(())
        } else if !self.ctx {
            Err(OpError::Unavailable(format!(
                "{} in liboqs signs with no context string",
                self.desc.algorithm
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

fn status(op: &'static str, s: OQS_STATUS) -> Result<(), OpError> {
    if s == OQS_STATUS::OQS_SUCCESS {
        Ok(())
    } else {
        Err(OpError::failed(op, format!("liboqs returned {s:?}")))
    }
}

impl Sig for OqsSig {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        let t = self.table();
        check_len("keypair", "pk", pk.len(), t.length_public_key)?;
        check_len("keypair", "sk", sk.len(), t.length_secret_key)?;
        let f = t
            .keypair
            .ok_or_else(|| OpError::failed("keypair", "missing in liboqs table"))?;
        // SAFETY: buffers have the lengths liboqs declares for this algorithm.
        status("keypair", unsafe { f(pk.as_mut_ptr(), sk.as_mut_ptr()) })?;
        Ok((pk.len(), sk.len()))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        check_len("sign", "sk", sk.len(), self.table().length_secret_key)?;
        Ok(Box::new(OqsSigner {
            s: self,
            sk: sk.to_vec(),
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        check_len("verify", "pk", pk.len(), self.table().length_public_key)?;
        Ok(Box::new(OqsVerifier {
            s: self,
            pk: pk.to_vec(),
        }))
    }
}

/// A secret key held for signing (liboqs reads it from bytes on every call).
struct OqsSigner<'a> {
    s: &'a OqsSig,
    sk: Vec<u8>,
}

impl Drop for OqsSigner<'_> {
    fn drop(&mut self) {
        self.sk.fill(0);
        std::hint::black_box(&self.sk);
    }
}

impl Signer for OqsSigner<'_> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        const OP: &str = "sign";
        self.s.check_context(OP, ctx)?;
        let t = self.s.table();
        if sig.len() < t.length_signature {
            return Err(OpError::BadLength {
                op: OP,
                buffer: "sig",
                got: sig.len(),
                expected: t.length_signature,
            });
        }
        let mut len = 0usize;
        let r = if ctx.is_empty() {
            let f = t.sign.ok_or_else(|| OpError::failed(OP, "missing in liboqs table"))?;
            // SAFETY: `sig` holds at least length_signature bytes, `sk` length_secret_key.
            unsafe { f(sig.as_mut_ptr(), &mut len, msg.as_ptr(), msg.len(), self.sk.as_ptr()) }
        } else {
            let f = t
                .sign_with_ctx_str
                .ok_or_else(|| OpError::failed(OP, "missing in liboqs table"))?;
            // SAFETY: as above; the context is at most 255 bytes.
            unsafe {
                f(
                    sig.as_mut_ptr(),
                    &mut len,
                    msg.as_ptr(),
                    msg.len(),
                    ctx.as_ptr(),
                    ctx.len(),
                    self.sk.as_ptr(),
                )
            }
        };
        status(OP, r)?;
        if len == 0 || len > t.length_signature {
            return Err(OpError::failed(
                OP,
                format!(
                    "liboqs reported a signature of {len} bytes (at most {})",
                    t.length_signature
                ),
            ));
        }
        Ok(len)
    }
}

/// A public key held for verifying.
struct OqsVerifier<'a> {
    s: &'a OqsSig,
    pk: Vec<u8>,
}

impl Verifier for OqsVerifier<'_> {
    /// liboqs reports a rejected signature and a failure alike (`OQS_ERROR`): both are a
    /// rejection. A signature of the wrong length is rejected before liboqs reads it.
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        const OP: &str = "verify";
        let s = self.s;
        match s.check_context(OP, ctx) {
            Err(OpError::Unavailable(e)) => return Err(OpError::Unavailable(e)),
            Err(_) => return Ok(false),
            Ok(()) => {}
        }
        let t = s.table();
        let max = t.length_signature;
        if sig.is_empty() || sig.len() > max || (s.fixed_length && sig.len() != max) {
            return Ok(false);
        }
        let r = if ctx.is_empty() {
            let f = t.verify.ok_or_else(|| OpError::failed(OP, "missing in liboqs table"))?;
            // SAFETY: lengths as liboqs expects; the key has length_public_key bytes.
            unsafe { f(msg.as_ptr(), msg.len(), sig.as_ptr(), sig.len(), self.pk.as_ptr()) }
        } else {
            let f = t
                .verify_with_ctx_str
                .ok_or_else(|| OpError::failed(OP, "missing in liboqs table"))?;
            // SAFETY: as above.
            unsafe {
                f(
                    msg.as_ptr(),
                    msg.len(),
                    sig.as_ptr(),
                    sig.len(),
                    ctx.as_ptr(),
                    ctx.len(),
                    self.pk.as_ptr(),
                )
            }
        };
        Ok(r == OQS_STATUS::OQS_SUCCESS)
    }
}

/// What liboqs does not say about a scheme: how it signs, what it is and how it encodes.
struct Known {
    name: &'static str,
    signing: Signing,
    variable_length: bool,
    scheme: &'static str,
    encoding: &'static str,
}

const ML_DSA_SCHEME: &str = "FIPS 204 ML-DSA, pure, hedged (rnd from randombytes); contexts up to 255 bytes";
const ML_DSA_ENCODING: &str = "FIPS 204 pkEncode; expanded skEncode; FIPS 204 signature";
const FALCON_SCHEME: &str =
    "Falcon round 3 (20211101 with PQClean patches), randomized: 40-byte nonce and sampler seed from randombytes";
const FALCON_ENCODING: &str = "Falcon round-3 public key and secret key; signature: header byte, 40-byte nonce, \
     compressed s2 (variable length)";
const FALCON_PADDED_ENCODING: &str = "Falcon round-3 public key and secret key; signature: header byte, 40-byte \
     nonce, compressed s2 zero-padded to a fixed length";
const SPHINCS_SCHEME: &str = "SPHINCS+ round 3.1, simple (not FIPS 205 SLH-DSA); opt_rand from randombytes, \
     R = PRF_msg(SK.prf, opt_rand, M): hedged";
const SPHINCS_ENCODING: &str =
    "PK.seed || PK.root; SK.seed || SK.prf || PK.seed || PK.root; R || FORS signature || hypertree signature";
const MAYO_SCHEME: &str = "MAYO round 2; salt = SHAKE256(digest || R || seed_sk) with R from randombytes: hedged";
const MAYO_ENCODING: &str = "compact keys (seed_pk || P3; seed_sk); signature: s || salt";
const CROSS_SCHEME: &str = "CROSS 2.0 (PQClean and OQS patches), fast; root seed and salt from randombytes: randomized";
const CROSS_ENCODING: &str = "seed_pk || packed syndrome; seed_sk; salt || commitments || seed-tree path || \
     responses (fixed length)";
const OV_SCHEME: &str = "UOV round 2, classic (uncompressed keys); salt from randombytes, vinegar = \
     H(M || salt || sk_seed || ctr): hedged";
const OV_ENCODING: &str = "uncompressed public key; uncompressed secret key; signature: w || salt";

fn known() -> Vec<Known> {
    let k = |name, signing, variable_length, scheme, encoding| Known {
        name,
        signing,
        variable_length,
        scheme,
        encoding,
    };
    let mut v = Vec::new();
    for name in ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"] {
        v.push(k(name, Signing::Hedged, false, ML_DSA_SCHEME, ML_DSA_ENCODING));
    }
    for name in ["Falcon-512", "Falcon-1024"] {
        v.push(k(name, Signing::Randomized, true, FALCON_SCHEME, FALCON_ENCODING));
    }
    for name in ["Falcon-padded-512", "Falcon-padded-1024"] {
        v.push(k(
            name,
            Signing::Randomized,
            false,
            FALCON_SCHEME,
            FALCON_PADDED_ENCODING,
        ));
    }
    for name in [
        "SPHINCS+-SHA2-128f-simple",
        "SPHINCS+-SHA2-128s-simple",
        "SPHINCS+-SHA2-192f-simple",
        "SPHINCS+-SHA2-192s-simple",
        "SPHINCS+-SHA2-256f-simple",
        "SPHINCS+-SHA2-256s-simple",
        "SPHINCS+-SHAKE-128f-simple",
        "SPHINCS+-SHAKE-128s-simple",
        "SPHINCS+-SHAKE-192f-simple",
        "SPHINCS+-SHAKE-192s-simple",
        "SPHINCS+-SHAKE-256f-simple",
        "SPHINCS+-SHAKE-256s-simple",
    ] {
        v.push(k(name, Signing::Hedged, false, SPHINCS_SCHEME, SPHINCS_ENCODING));
    }
    for name in ["MAYO-1", "MAYO-2", "MAYO-3", "MAYO-5"] {
        v.push(k(name, Signing::Hedged, false, MAYO_SCHEME, MAYO_ENCODING));
    }
    for name in ["cross-rsdp-128-fast", "cross-rsdpg-128-fast"] {
        v.push(k(name, Signing::Randomized, false, CROSS_SCHEME, CROSS_ENCODING));
    }
    v.push(k("OV-Is", Signing::Hedged, false, OV_SCHEME, OV_ENCODING));
    v
}

/// Every liboqs signature scheme our catalogue knows and this build enables. liboqs's
/// method names are the catalogue's names.
pub fn subjects(version: &str, build: &str) -> Vec<Subject> {
    let mut out = Vec::new();
    for k in known() {
        let Some(info) = names::algorithm(k.name) else { continue };
        let Ok(method) = CString::new(k.name) else { continue };
        // SAFETY: a NUL-terminated method name; OQS_SIG_new returns NULL for a scheme the
        // build leaves out.
        if unsafe { OQS_SIG_alg_is_enabled(method.as_ptr()) } == 0 {
            continue;
        }
        let sig = unsafe { OQS_SIG_new(method.as_ptr()) };
        if sig.is_null() {
            continue;
        }
        // SAFETY: non-null table returned by liboqs.
        let t = unsafe { &*sig };
        let mut desc = Descriptor::signature(
            info.name,
            crate::PROVIDER,
            "dispatch",
            version.to_string(),
            build.to_string(),
            [t.length_public_key, t.length_secret_key],
            Randomness::Harness,
            SigInfo {
                signature_bytes: t.length_signature,
                variable_length: k.variable_length,
                signing: k.signing,
                context: t.sig_with_ctx_support,
                scheme: k.scheme.into(),
                encoding: k.encoding.into(),
            },
        );
        desc.nist_level = Some(t.claimed_nist_level);
        // SAFETY: alg_version is a static NUL-terminated string.
        desc.algorithm_version = unsafe { CStr::from_ptr(t.alg_version) }.to_string_lossy().into_owned();
        desc.kat = Some(KatRef {
            file: KAT_FILE.into(),
            name: k.name.into(),
            prng: KatPrngKind::AesCtrDrbg,
        });
        out.push(Subject::Sig(Box::new(OqsSig {
            sig,
            desc,
            ctx: t.sig_with_ctx_support,
            fixed_length: !k.variable_length,
        })));
    }
    out
}
