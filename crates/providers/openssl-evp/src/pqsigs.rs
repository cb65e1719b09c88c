//! OpenSSL's post-quantum signatures (OpenSSL 3.5 and later) through the EVP API
//! (`shim/pq.c`): ML-DSA-44/65/87 (FIPS 204) and SLH-DSA-SHA2/SHAKE-128f/s (FIPS 205),
//! pure and hedged, with context strings of up to 255 bytes.
//!
//! The randomness is the harness's, drawn exactly as RustCrypto's `ml-dsa` and `slh-dsa`
//! subjects draw it, so that the gate holds both to the same data (liboqs's ML-DSA KATs,
//! NIST's SLH-DSA key generation vectors, the `fips205` cross-check):
//! - ML-DSA: ξ, 32 bytes in one draw per key pair (OpenSSL's `seed` key generation
//!   parameter); rnd, 32 bytes in one draw per signature (`test-entropy`);
//! - SLH-DSA: SK.seed, SK.prf and PK.seed, n bytes each in three draws, in that order
//!   (FIPS 205 Algorithm 21; OpenSSL's `seed` parameter is their concatenation); opt_rand,
//!   n bytes per signature (`test-entropy`, which OpenSSL's SLH-DSA reads as opt_rand).
//!
//! A context over 255 bytes is refused before anything is drawn (signing) or rejected
//! (verifying), as RustCrypto does. Keys are FIPS 204's pkEncode and skEncode (expanded)
//! and FIPS 205's PK.seed ‖ PK.root and SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root, read into
//! EVP_PKEYs by `signer` and `verifier`, untimed. Each signature is what OpenSSL's TLS code
//! does for a CertificateVerify (ssl/statem/statem_lib.c): a new EVP_MD_CTX,
//! EVP_DigestSignInit_ex without a digest and with the context string (and rnd) as
//! parameters, one-shot EVP_DigestSign, the context freed; verifying likewise.
//!
//! A libcrypto without these algorithms (OpenSSL 3.0) has no subjects here.

use std::ffi::CStr;

use crate::kems::{available, keypair, Kind, PqKey};
use cryptoscope_catalogue::descriptor::{Descriptor, KatPrngKind, KatRef, Randomness, SigInfo, Signing};
use cryptoscope_catalogue::rng;
use cryptoscope_catalogue::traits::{check_len, OpError, Sig, Signer, Subject, Verifier};

mod shim {
    use libc::c_void;
    extern "C" {
        #[allow(clippy::too_many_arguments)]
        pub fn cs_pq_sign(
            pkey: *mut c_void,
            msg: *const u8,
            msg_len: usize,
            ctx: *const u8,
            ctx_len: usize,
            rnd: *const u8,
            rnd_len: usize,
            sig: *mut u8,
            sig_len: usize,
        ) -> i32;
        pub fn cs_pq_verify(
            pkey: *mut c_void,
            msg: *const u8,
            msg_len: usize,
            ctx: *const u8,
            ctx_len: usize,
            sig: *const u8,
            sig_len: usize,
        ) -> i32;
    }
}

/// The longest context string of FIPS 204 and 205.
const CONTEXT_MAX: usize = 255;

/// The most bytes of key generation randomness here: SLH-DSA's 3n at n = 32.
const SEED_MAX: usize = 96;

struct PqSig {
    desc: Descriptor,
    name: &'static CStr,
    /// Key generation's draws, in order: ML-DSA's ξ; SLH-DSA's SK.seed, SK.prf, PK.seed.
    keygen_draws: &'static [usize],
    /// Bytes of signing randomness: ML-DSA's rnd, SLH-DSA's opt_rand.
    rnd_len: usize,
}

impl Sig for PqSig {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let mut seed = [0u8; SEED_MAX];
        let mut at = 0;
        for &n in self.keygen_draws {
            rng::fill(&mut seed[at..at + n]);
            at += n;
        }
        keypair(self.name, &seed[..at], pk, sk)?;
        Ok((pk.len(), sk.len()))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        check_len("signer", "sk", sk.len(), self.desc.sizes.secret_key)?;
        let key = PqKey::private(self.name, sk).ok_or_else(|| OpError::failed("signer", "secret key rejected"))?;
        Ok(Box::new(PqSigner {
            key,
            rnd_len: self.rnd_len,
            sig_len: self.desc.sizes.ciphertext,
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        check_len("verifier", "pk", pk.len(), self.desc.sizes.public_key)?;
        let key = PqKey::public(self.name, pk).ok_or_else(|| OpError::failed("verifier", "public key rejected"))?;
        Ok(Box::new(PqVerifier { key }))
    }
}

struct PqSigner {
    key: PqKey,
    rnd_len: usize,
    sig_len: usize,
}

impl Signer for PqSigner {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        check_len("sign", "sig", sig.len(), self.sig_len)?;
        if ctx.len() > CONTEXT_MAX {
            return Err(OpError::failed("sign", "a context over 255 bytes"));
        }
        let mut rnd = [0u8; 32];
        let rnd = &mut rnd[..self.rnd_len];
        rng::fill(rnd);
        // SAFETY: a live EVP_PKEY; every buffer is valid for the length passed with it, and
        // the shim writes `sig` only when its length is exactly the signature's.
        let ok = unsafe {
            shim::cs_pq_sign(
                self.key.ptr(),
                msg.as_ptr(),
                msg.len(),
                ctx.as_ptr(),
                ctx.len(),
                rnd.as_ptr(),
                rnd.len(),
                sig.as_mut_ptr(),
                sig.len(),
            )
        };
        if ok == 1 {
            Ok(self.sig_len)
        } else {
            Err(OpError::failed("sign", "OpenSSL could not sign"))
        }
    }
}

struct PqVerifier {
    key: PqKey,
}

impl Verifier for PqVerifier {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        // No signature verifies under a context FIPS 204 and 205 cannot take.
        if ctx.len() > CONTEXT_MAX {
            return Ok(false);
        }
        // SAFETY: a live EVP_PKEY; every buffer is valid for the length passed with it.
        match unsafe {
            shim::cs_pq_verify(
                self.key.ptr(),
                msg.as_ptr(),
                msg.len(),
                ctx.as_ptr(),
                ctx.len(),
                sig.as_ptr(),
                sig.len(),
            )
        } {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(OpError::failed("verify", "OpenSSL could not set up the verification")),
        }
    }
}

/// One subject's descriptor, harness randomness.
fn descriptor(alg: &str, standard: &str, keys: [usize; 2], info: SigInfo) -> Descriptor {
    let mut d = Descriptor::signature(
        alg,
        crate::provider(),
        "default",
        crate::version(),
        crate::build(),
        keys,
        Randomness::Harness,
        info,
    );
    d.algorithm_version = standard.into();
    d
}

const HOW: &str = "EVP_DigestSign per call with a new EVP_MD_CTX";

/// OpenSSL's ML-DSA and SLH-DSA subjects, those this libcrypto has.
pub fn subjects() -> Vec<Subject> {
    let mut v = Vec::new();
    // FIPS 204 Table 2: public key, expanded secret key, signature.
    let ml_dsa: [(&'static CStr, [usize; 3]); 3] = [
        (c"ML-DSA-44", [1312, 2560, 2420]),
        (c"ML-DSA-65", [1952, 4032, 3309]),
        (c"ML-DSA-87", [2592, 4896, 4627]),
    ];
    for (name, [pk, sk, sig]) in ml_dsa {
        let Ok(alg) = name.to_str() else { continue };
        if !available(name, Kind::Sig) {
            continue;
        }
        let info = SigInfo {
            signature_bytes: sig,
            variable_length: false,
            signing: Signing::Hedged,
            context: true,
            scheme: format!("FIPS 204 ML-DSA, pure, hedged; {HOW}"),
            encoding: "pk: pkEncode; sk: skEncode (expanded); sig: sigEncode".into(),
        };
        let mut desc = descriptor(alg, "FIPS 204", [pk, sk], info);
        desc.kat = Some(KatRef {
            file: "liboqs-0.13.0-sig-kats.json".into(),
            name: alg.into(),
            prng: KatPrngKind::AesCtrDrbg,
        });
        v.push(Subject::Sig(Box::new(PqSig {
            desc,
            name,
            keygen_draws: &[32],
            rnd_len: 32,
        })));
    }
    // FIPS 205 Table 2: n = 16 at category 1; pk 2n, sk 4n.
    let slh_dsa: [(&'static CStr, usize); 4] = [
        (c"SLH-DSA-SHA2-128f", 17088),
        (c"SLH-DSA-SHA2-128s", 7856),
        (c"SLH-DSA-SHAKE-128f", 17088),
        (c"SLH-DSA-SHAKE-128s", 7856),
    ];
    for (name, sig) in slh_dsa {
        let Ok(alg) = name.to_str() else { continue };
        if !available(name, Kind::Sig) {
            continue;
        }
        let info = SigInfo {
            signature_bytes: sig,
            variable_length: false,
            signing: Signing::Hedged,
            context: true,
            scheme: format!("FIPS 205 SLH-DSA, pure, hedged; {HOW}"),
            encoding: "pk: PK.seed ‖ PK.root; sk: SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root; sig: R ‖ SIG_FORS ‖ SIG_HT"
                .into(),
        };
        v.push(Subject::Sig(Box::new(PqSig {
            desc: descriptor(alg, "FIPS 205", [32, 64], info),
            name,
            keygen_draws: &[16, 16, 16],
            rnd_len: 16,
        })));
    }
    v
}
