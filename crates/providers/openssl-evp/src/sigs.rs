//! OpenSSL's signatures: Ed25519, ECDSA P-256 with SHA-256, and RSA (PKCS#1 v1.5 and PSS,
//! SHA-256) at 2048, 3072 and 4096 bits, through the EVP API (`shim/sig.c`). OpenSSL 3.0
//! has no ML-DSA (3.5 added it).
//!
//! A prepared signer or verifier holds the key as an EVP_PKEY, read once from the shared
//! encodings (Ed25519 raw keys; P-256's SEC 1 point and 32-byte scalar; PKCS#1 DER for
//! RSA). Each signature is what OpenSSL's TLS stack does for a CertificateVerify: a new
//! EVP_MD_CTX, EVP_DigestSignInit_ex with SHA-256 by name (none for Ed25519), the PSS
//! parameters on its EVP_PKEY_CTX, one-shot EVP_DigestSign, the context freed; verifying
//! likewise. `openssl speed` times less: EVP_PKEY_sign on a context made once, over a
//! digest computed beforehand (Ed25519: a reused EVP_MD_CTX).
//!
//! Signing randomness: ECDSA's nonce is BN_generate_dsa_nonce's, SHA-512 over fresh random
//! bytes, the private key and the digest (hedged); PSS draws a fresh 32-byte salt
//! (randomized); Ed25519 and PKCS#1 v1.5 are deterministic.

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, SigInfo, Signing};
use cryptoscope_catalogue::traits::{OpError, Sig, Signer, Subject, Verifier};
use libc::c_void;

mod shim {
    use libc::c_void;
    extern "C" {
        #[allow(clippy::too_many_arguments)]
        pub fn cs_sig_keypair(
            scheme: i32,
            bits: u32,
            pk: *mut u8,
            pk_cap: usize,
            pk_len: *mut usize,
            sk: *mut u8,
            sk_cap: usize,
            sk_len: *mut usize,
        ) -> i32;
        pub fn cs_sig_private(scheme: i32, sk: *const u8, len: usize) -> *mut c_void;
        pub fn cs_sig_public(scheme: i32, pk: *const u8, len: usize) -> *mut c_void;
        pub fn cs_sig_sign(
            scheme: i32,
            pkey: *mut c_void,
            msg: *const u8,
            msg_len: usize,
            sig: *mut u8,
            cap: usize,
            len: *mut usize,
        ) -> i32;
        pub fn cs_sig_verify(
            scheme: i32,
            pkey: *mut c_void,
            msg: *const u8,
            msg_len: usize,
            sig: *const u8,
            sig_len: usize,
        ) -> i32;
        pub fn cs_sig_free(pkey: *mut c_void);
    }
}

/// The shim's scheme numbers.
#[derive(Clone, Copy)]
#[repr(i32)]
enum Scheme {
    Ed25519 = 0,
    EcdsaP256 = 1,
    RsaPkcs1 = 2,
    RsaPss = 3,
}

struct Subj {
    desc: Descriptor,
    scheme: Scheme,
    /// RSA modulus bits (0 for the others).
    bits: u32,
}

/// An EVP_PKEY owned here, freed once.
struct Pkey {
    ptr: *mut c_void,
    scheme: Scheme,
}

impl Drop for Pkey {
    fn drop(&mut self) {
        // SAFETY: a non-null EVP_PKEY this value owns.
        unsafe { shim::cs_sig_free(self.ptr) };
    }
}

/// None of OpenSSL 3.0's signatures here takes a context string.
fn no_context(ctx: &[u8]) -> Result<(), OpError> {
    if ctx.is_empty() {
        Ok(())
    } else {
        Err(OpError::Unavailable(
            "these OpenSSL signatures take no context string".into(),
        ))
    }
}

impl Sig for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        let (mut np, mut ns) = (0usize, 0usize);
        // SAFETY: both buffers are valid for the capacities passed; the lengths are written
        // only within them.
        let ok = unsafe {
            shim::cs_sig_keypair(
                self.scheme as i32,
                self.bits,
                pk.as_mut_ptr(),
                pk.len(),
                &mut np,
                sk.as_mut_ptr(),
                sk.len(),
                &mut ns,
            )
        };
        if ok == 1 && np <= pk.len() && ns <= sk.len() {
            Ok((np, ns))
        } else {
            Err(OpError::failed(
                "keypair",
                "OpenSSL could not generate or encode a key pair",
            ))
        }
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        // SAFETY: `sk` is valid for its length.
        let ptr = unsafe { shim::cs_sig_private(self.scheme as i32, sk.as_ptr(), sk.len()) };
        if ptr.is_null() {
            return Err(OpError::failed("sign", "OpenSSL rejected the secret key"));
        }
        Ok(Box::new(Pkey {
            ptr,
            scheme: self.scheme,
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        // SAFETY: `pk` is valid for its length.
        let ptr = unsafe { shim::cs_sig_public(self.scheme as i32, pk.as_ptr(), pk.len()) };
        if ptr.is_null() {
            return Err(OpError::failed("verify", "OpenSSL rejected the public key"));
        }
        Ok(Box::new(Pkey {
            ptr,
            scheme: self.scheme,
        }))
    }
}

impl Signer for Pkey {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        no_context(ctx)?;
        let mut len = 0usize;
        // SAFETY: a live EVP_PKEY; `msg` and `sig` are valid for their lengths.
        let ok = unsafe {
            shim::cs_sig_sign(
                self.scheme as i32,
                self.ptr,
                msg.as_ptr(),
                msg.len(),
                sig.as_mut_ptr(),
                sig.len(),
                &mut len,
            )
        };
        if ok == 1 && len <= sig.len() {
            Ok(len)
        } else {
            Err(OpError::failed("sign", "OpenSSL could not sign"))
        }
    }
}

impl Verifier for Pkey {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        no_context(ctx)?;
        // SAFETY: a live EVP_PKEY; `msg` and `sig` are valid for their lengths.
        match unsafe {
            shim::cs_sig_verify(
                self.scheme as i32,
                self.ptr,
                msg.as_ptr(),
                msg.len(),
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

/// PKCS#1 DER sizes allowed for a modulus of `n` bytes: `RSAPublicKey` is n + 14 bytes
/// with e = 65537 (n + 32 leaves room for a larger exponent); `RSAPrivateKey` about
/// 4.5·n + 45 (5·n for any n past 90 bytes).
fn rsa_key_sizes(n: usize) -> [usize; 2] {
    [n + 32, 5 * n]
}

const RSA_ENCODING: &str = "PKCS#1 RSAPublicKey DER; PKCS#1 RSAPrivateKey DER; signature as long as the modulus";

/// OpenSSL's signatures.
pub fn subjects() -> Vec<Subject> {
    let (version, build) = (crate::version(), crate::build());
    let mk = |alg: &str, keys: [usize; 2], info: SigInfo, scheme: Scheme, bits: u32| {
        let desc = Descriptor::signature(
            alg,
            crate::provider(),
            "default",
            version.clone(),
            build.clone(),
            keys,
            Randomness::Internal,
            info,
        );
        Subject::Sig(Box::new(Subj { desc, scheme, bits }))
    };
    let info = |signature_bytes, variable_length, signing, scheme: &str, encoding: &str| SigInfo {
        signature_bytes,
        variable_length,
        signing,
        context: false,
        scheme: scheme.into(),
        encoding: encoding.into(),
    };
    let mut v = vec![
        mk(
            "Ed25519",
            [32, 32],
            info(
                64,
                false,
                Signing::Deterministic,
                "Ed25519 (RFC 8032, pure); EVP_DigestSign per call with a new EVP_MD_CTX",
                "32-byte public key; 32-byte seed; 64-byte signature",
            ),
            Scheme::Ed25519,
            0,
        ),
        mk(
            "ECDSA-P256-SHA256",
            [65, 32],
            info(
                72,
                true,
                Signing::Hedged,
                "ECDSA over P-256 with SHA-256; nonce from SHA-512(random, key, digest) (BN_generate_dsa_nonce); \
                 EVP_DigestSign per call with a new EVP_MD_CTX",
                "SEC 1 uncompressed point (65 bytes); 32-byte big-endian scalar; DER signature (at most 72 bytes)",
            ),
            Scheme::EcdsaP256,
            0,
        ),
    ];
    for bits in [2048u32, 3072, 4096] {
        let n = bits as usize / 8;
        v.push(mk(
            &format!("RSA-{bits}-PKCS1-SHA256"),
            rsa_key_sizes(n),
            info(
                n,
                false,
                Signing::Deterministic,
                "RSASSA-PKCS1-v1_5 with SHA-256, e = 65537; EVP_DigestSign per call with a new EVP_MD_CTX",
                RSA_ENCODING,
            ),
            Scheme::RsaPkcs1,
            bits,
        ));
        v.push(mk(
            &format!("RSA-{bits}-PSS-SHA256"),
            rsa_key_sizes(n),
            info(
                n,
                false,
                Signing::Randomized,
                "RSASSA-PSS with SHA-256, MGF1-SHA-256, 32-byte salt, e = 65537; EVP_DigestSign per call with a new \
                 EVP_MD_CTX",
                RSA_ENCODING,
            ),
            Scheme::RsaPss,
            bits,
        ));
    }
    v
}
