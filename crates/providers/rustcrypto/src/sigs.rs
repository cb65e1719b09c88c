//! Signature subjects: RustCrypto's `ml-dsa` (FIPS 204), `slh-dsa` (FIPS 205), `p256`'s ECDSA
//! and `rsa` (PKCS #1 v1.5 and PSS), and dalek's `ed25519-dalek`.
//!
//! All randomness comes from the harness ([`rng::fill`]), drawn directly or through
//! [`HarnessRng`] for the crates that take a generator. ML-DSA draws exactly what liboqs's
//! `randombytes` gives its reference code (32 bytes of ξ per key pair, 32 bytes of rnd per
//! signature), so it reproduces liboqs's signature KATs. Keys are read into the crates' own
//! forms by `signer` and `verifier`, untimed; signing and verifying time everything else,
//! decoding the signature included.

use std::marker::PhantomData;

use cryptoscope_catalogue::descriptor::{Descriptor, KatPrngKind, KatRef, Randomness, SigInfo, Signing};
use cryptoscope_catalogue::rng;
use cryptoscope_catalogue::traits::{check_len, OpError, Sig, Signer, Subject, Verifier};
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey, EncodeRsaPrivateKey, EncodeRsaPublicKey};
use rsa::signature::{RandomizedSigner, SignatureEncoding, Signer as _, Verifier as _};
use rsa::traits::PublicKeyParts;
use sha2::Sha256;

/// The harness's randomness as a `rand_core` generator, for the crates that take one.
struct HarnessRng;

impl rand_core::TryRng for HarnessRng {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        rng::fill(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        rng::fill(&mut b);
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        rng::fill(dst);
        Ok(())
    }
}

impl rand_core::TryCryptoRng for HarnessRng {}

fn descriptor(alg: &str, crate_name: &str, standard: &str, [pk, sk]: [usize; 2], info: SigInfo) -> Descriptor {
    let version = cryptoscope_worker::build_info::crate_version(crate_name);
    let mut d = Descriptor::signature(
        alg,
        crate::PROVIDER,
        "default",
        version,
        crate::build_line(),
        [pk, sk],
        Randomness::Harness,
        info,
    );
    d.algorithm_version = standard.into();
    d
}

/// A non-empty context on a scheme that has none is refused, not ignored.
fn no_context(op: &'static str, ctx: &[u8]) -> Result<(), OpError> {
    if ctx.is_empty() {
        Ok(())
    } else {
        Err(OpError::Unavailable(format!(
            "{op}: this scheme takes no context string"
        )))
    }
}

/// Copies a signature into the front of `out`; its length.
fn put(op: &'static str, out: &mut [u8], sig: &[u8]) -> Result<usize, OpError> {
    let room = out.len();
    out.get_mut(..sig.len())
        .ok_or_else(|| OpError::failed(op, format!("a {}-byte signature for a {room}-byte buffer", sig.len())))?
        .copy_from_slice(sig);
    Ok(sig.len())
}

// ---------------------------------------------------------------------------------------
// ML-DSA (FIPS 204)

struct MlDsa<P> {
    desc: Descriptor,
    /// η of FIPS 204 Table 1: the bound on the coefficients of s1 and s2.
    eta: u32,
    /// k and ℓ of FIPS 204 Table 1.
    k: usize,
    l: usize,
    _p: PhantomData<fn() -> P>,
}

/// Whether every coefficient of s1 and s2 in an expanded secret key is in [-η, η]: skDecode
/// (FIPS 204 Algorithm 25) unpacks each as η − b from `bitlen 2η` bits, so b must not exceed
/// 2η. The crate does not check, and may panic on keys that fail this (Wycheproof's
/// `InvalidPrivateKey` tests). The coefficients are secret: every one is looked at and the
/// verdict gathered without a branch on any of them (the constant-time audit checks).
fn ml_dsa_s_in_range(sk: &[u8], eta: u32, polys: usize) -> bool {
    let bits = if eta == 2 { 3 } else { 4 };
    let start = 32 + 32 + 64;
    let Some(s) = sk.get(start..start + polys * 32 * bits) else {
        return false;
    };
    let (mut acc, mut have, mut over) = (0u32, 0, 0u32);
    for &byte in s {
        acc |= u32::from(byte) << have;
        have += 8;
        while have >= bits {
            // 2η − b borrows (its top bit set) exactly when b > 2η.
            over |= (2 * eta).wrapping_sub(acc & ((1 << bits) - 1)) >> 31;
            acc >>= bits;
            have -= bits;
        }
    }
    std::hint::black_box(over) == 0
}

impl<P: ml_dsa::MlDsaParams + Send + Sync + 'static> Sig for MlDsa<P> {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let mut xi = ml_dsa::Seed::default();
        rng::fill(&mut xi);
        let key = ml_dsa::SigningKey::<P>::from_seed(&xi);
        let vk: &ml_dsa::VerifyingKey<P> = key.as_ref();
        pk.copy_from_slice(&vk.encode());
        // The expanded encoding is what liboqs's KATs print; `ExpandedSigningKey::from_seed`
        // would run key generation a second time to reach it.
        sk.copy_from_slice(&key.expanded_key().to_expanded());
        Ok((pk.len(), sk.len()))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        let bytes = ml_dsa::ExpandedSigningKeyBytes::<P>::try_from(sk).map_err(|_| OpError::BadLength {
            op: "signer",
            buffer: "sk",
            got: sk.len(),
            expected: self.desc.sizes.secret_key,
        })?;
        if !ml_dsa_s_in_range(sk, self.eta, self.k + self.l) {
            return Err(OpError::failed("signer", "secret key rejected: s1 or s2 out of range"));
        }
        Ok(Box::new(MlDsaSigner {
            key: ml_dsa::ExpandedSigningKey::<P>::from_expanded(&bytes),
            sig_len: self.desc.sizes.ciphertext,
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let bytes = ml_dsa::EncodedVerifyingKey::<P>::try_from(pk).map_err(|_| OpError::BadLength {
            op: "verifier",
            buffer: "pk",
            got: pk.len(),
            expected: self.desc.sizes.public_key,
        })?;
        Ok(Box::new(MlDsaVerifier {
            key: ml_dsa::VerifyingKey::<P>::decode(&bytes),
        }))
    }
}

struct MlDsaSigner<P: ml_dsa::MlDsaParams> {
    key: ml_dsa::ExpandedSigningKey<P>,
    sig_len: usize,
}

impl<P: ml_dsa::MlDsaParams> Signer for MlDsaSigner<P> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        check_len("sign", "sig", sig.len(), self.sig_len)?;
        // FIPS 204 Algorithm 2 (hedged): one 32-byte draw of rnd; a context over 255 bytes
        // is refused before it.
        let s = self
            .key
            .sign_randomized(msg, ctx, &mut HarnessRng)
            .map_err(|_| OpError::failed("sign", "refused (context over 255 bytes) or no signature found"))?;
        sig.copy_from_slice(&s.encode());
        Ok(self.sig_len)
    }
}

struct MlDsaVerifier<P: ml_dsa::MlDsaParams> {
    key: ml_dsa::VerifyingKey<P>,
}

impl<P: ml_dsa::MlDsaParams> Verifier for MlDsaVerifier<P> {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        // sigDecode refuses a wrong length, malformed hints and z out of range.
        let Ok(s) = ml_dsa::Signature::<P>::try_from(sig) else {
            return Ok(false);
        };
        Ok(self.key.verify_with_context(msg, ctx, &s))
    }
}

// ---------------------------------------------------------------------------------------
// SLH-DSA (FIPS 205)

struct SlhDsa<P> {
    desc: Descriptor,
    /// n of FIPS 205 Table 2: the bytes of each seed and of opt_rand.
    n: usize,
    _p: PhantomData<fn() -> P>,
}

impl<P: slh_dsa::ParameterSet + Send + Sync + 'static> Sig for SlhDsa<P> {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        // slh_keygen (FIPS 205 Algorithm 21): SK.seed, SK.prf and PK.seed, n bytes each.
        let key = slh_dsa::SigningKey::<P>::new(&mut HarnessRng);
        let vk: &slh_dsa::VerifyingKey<P> = key.as_ref();
        pk.copy_from_slice(&vk.to_bytes());
        sk.copy_from_slice(&key.to_bytes());
        Ok((pk.len(), sk.len()))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        let key = slh_dsa::SigningKey::<P>::try_from(sk).map_err(|_| OpError::BadLength {
            op: "signer",
            buffer: "sk",
            got: sk.len(),
            expected: self.desc.sizes.secret_key,
        })?;
        Ok(Box::new(SlhDsaSigner {
            key,
            n: self.n,
            sig_len: self.desc.sizes.ciphertext,
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let key = slh_dsa::VerifyingKey::<P>::try_from(pk).map_err(|_| OpError::BadLength {
            op: "verifier",
            buffer: "pk",
            got: pk.len(),
            expected: self.desc.sizes.public_key,
        })?;
        Ok(Box::new(SlhDsaVerifier { key }))
    }
}

struct SlhDsaSigner<P: slh_dsa::ParameterSet> {
    key: slh_dsa::SigningKey<P>,
    n: usize,
    sig_len: usize,
}

impl<P: slh_dsa::ParameterSet> Signer for SlhDsaSigner<P> {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        check_len("sign", "sig", sig.len(), self.sig_len)?;
        if ctx.len() > 255 {
            return Err(OpError::failed("sign", "a context over 255 bytes"));
        }
        // slh_sign (FIPS 205 Algorithm 22), hedged: n bytes of opt_rand.
        let mut opt_rand = [0u8; 32];
        let opt_rand = &mut opt_rand[..self.n];
        rng::fill(opt_rand);
        let s = self
            .key
            .try_sign_with_context(msg, ctx, Some(opt_rand))
            .map_err(|_| OpError::failed("sign", "refused"))?;
        sig.copy_from_slice(&s.to_bytes());
        Ok(self.sig_len)
    }
}

struct SlhDsaVerifier<P: slh_dsa::ParameterSet> {
    key: slh_dsa::VerifyingKey<P>,
}

impl<P: slh_dsa::ParameterSet> Verifier for SlhDsaVerifier<P> {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        let Ok(s) = slh_dsa::Signature::<P>::try_from(sig) else {
            return Ok(false);
        };
        Ok(self.key.try_verify_with_context(msg, ctx, &s).is_ok())
    }
}

// ---------------------------------------------------------------------------------------
// Ed25519 (RFC 8032)

struct Ed25519 {
    desc: Descriptor,
}

impl Sig for Ed25519 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let mut seed = [0u8; 32];
        rng::fill(&mut seed);
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        pk.copy_from_slice(key.verifying_key().as_bytes());
        sk.copy_from_slice(&seed);
        Ok((32, 32))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        let seed: [u8; 32] = sk.try_into().map_err(|_| OpError::BadLength {
            op: "signer",
            buffer: "sk",
            got: sk.len(),
            expected: 32,
        })?;
        Ok(Box::new(Ed25519Signer {
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let bytes: [u8; 32] = pk.try_into().map_err(|_| OpError::BadLength {
            op: "verifier",
            buffer: "pk",
            got: pk.len(),
            expected: 32,
        })?;
        let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map_err(|_| OpError::failed("verifier", "public key rejected (not a point)"))?;
        Ok(Box::new(Ed25519Verifier { key }))
    }
}

struct Ed25519Signer {
    key: ed25519_dalek::SigningKey,
}

impl Signer for Ed25519Signer {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        no_context("sign", ctx)?;
        check_len("sign", "sig", sig.len(), 64)?;
        sig.copy_from_slice(&self.key.sign(msg).to_bytes());
        Ok(64)
    }
}

struct Ed25519Verifier {
    key: ed25519_dalek::VerifyingKey,
}

impl Verifier for Ed25519Verifier {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        no_context("verify", ctx)?;
        let Ok(s) = ed25519_dalek::Signature::from_slice(sig) else {
            return Ok(false);
        };
        // Strict: S < L, R decodes, and neither R nor the key has small order.
        Ok(self.key.verify_strict(msg, &s).is_ok())
    }
}

// ---------------------------------------------------------------------------------------
// ECDSA P-256 with SHA-256 (FIPS 186-5)

/// The longest DER ECDSA signature over P-256: SEQUENCE of two INTEGERs of up to 33 bytes.
const ECDSA_P256_DER_MAX: usize = 72;

struct EcdsaP256 {
    desc: Descriptor,
}

impl Sig for EcdsaP256 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        // Rejection sampling: a uniformly random scalar in [1, n).
        let key = loop {
            let mut raw = [0u8; 32];
            rng::fill(&mut raw);
            if let Ok(k) = p256::ecdsa::SigningKey::from_slice(&raw) {
                break k;
            }
        };
        pk.copy_from_slice(&key.verifying_key().to_sec1_point(false).to_bytes());
        sk.copy_from_slice(&key.to_bytes());
        Ok((65, 32))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        check_len("signer", "sk", sk.len(), 32)?;
        let key = p256::ecdsa::SigningKey::from_slice(sk)
            .map_err(|_| OpError::failed("signer", "private scalar rejected"))?;
        Ok(Box::new(EcdsaP256Signer { key }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(pk)
            .map_err(|_| OpError::failed("verifier", "public key rejected"))?;
        Ok(Box::new(EcdsaP256Verifier { key }))
    }
}

struct EcdsaP256Signer {
    key: p256::ecdsa::SigningKey,
}

impl Signer for EcdsaP256Signer {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        no_context("sign", ctx)?;
        check_len("sign", "sig", sig.len(), ECDSA_P256_DER_MAX)?;
        // The crate's `Signer`: the nonce from RFC 6979 (HMAC-SHA-256 over key and digest).
        let s: p256::ecdsa::DerSignature = self.key.try_sign(msg).map_err(|_| OpError::failed("sign", "refused"))?;
        put("sign", sig, s.as_bytes())
    }
}

struct EcdsaP256Verifier {
    key: p256::ecdsa::VerifyingKey,
}

impl Verifier for EcdsaP256Verifier {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        no_context("verify", ctx)?;
        // Strict DER (minimal lengths and integers, nothing after the SEQUENCE), then r and s
        // in [1, n).
        let Ok(s) = p256::ecdsa::Signature::from_der(sig) else {
            return Ok(false);
        };
        Ok(self.key.verify(msg, &s).is_ok())
    }
}

// ---------------------------------------------------------------------------------------
// RSA (RFC 8017) with SHA-256

#[derive(Clone, Copy, PartialEq)]
enum Padding {
    Pkcs1v15,
    /// MGF1-SHA-256 and a 32-byte salt, required as such when verifying.
    Pss,
}

/// The PSS salt: the digest's length (RFC 8017 §9.1 and TLS 1.3's `rsa_pss_rsae_sha256`).
const PSS_SALT: usize = 32;

/// Bytes of the longest DER encoding of an element with `content` bytes of content.
const fn der_len(content: usize) -> usize {
    let header = if content < 0x80 {
        2
    } else if content < 0x100 {
        3
    } else {
        4
    };
    header + content
}

/// The longest DER INTEGER of a non-negative value of `bytes` bytes (a leading 0 included).
const fn der_uint(bytes: usize) -> usize {
    der_len(bytes + 1)
}

/// The longest PKCS #1 RSAPublicKey and RSAPrivateKey (two primes) for a `bits` modulus and
/// e = 65537, the crate's exponent.
const fn rsa_key_sizes(bits: usize) -> [usize; 2] {
    let (n, half) = (bits / 8, bits / 16);
    // e = 65537 is 01 00 01: no leading zero.
    let e = der_len(3);
    let public = der_len(der_uint(n) + e);
    // version, n, e, d, p, q, dP, dQ, qInv
    let private = der_len(3 + 2 * der_uint(n) + e + 5 * der_uint(half));
    [public, private]
}

struct Rsa {
    desc: Descriptor,
    bits: usize,
    padding: Padding,
}

impl Sig for Rsa {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let key = rsa::RsaPrivateKey::new(&mut HarnessRng, self.bits)
            .map_err(|e| OpError::failed("keypair", e.to_string()))?;
        let private = key
            .to_pkcs1_der()
            .map_err(|e| OpError::failed("keypair", e.to_string()))?;
        let public = key
            .to_public_key()
            .to_pkcs1_der()
            .map_err(|e| OpError::failed("keypair", e.to_string()))?;
        let (p, s) = (public.as_bytes(), private.as_bytes());
        pk.get_mut(..p.len())
            .ok_or_else(|| OpError::failed("keypair", format!("a {}-byte public key", p.len())))?
            .copy_from_slice(p);
        sk.get_mut(..s.len())
            .ok_or_else(|| OpError::failed("keypair", format!("a {}-byte private key", s.len())))?
            .copy_from_slice(s);
        Ok((p.len(), s.len()))
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        let key = rsa::RsaPrivateKey::from_pkcs1_der(sk)
            .map_err(|e| OpError::failed("signer", format!("private key rejected: {e}")))?;
        if key.size() * 8 != self.bits {
            return Err(OpError::failed("signer", format!("a {}-bit key", key.size() * 8)));
        }
        Ok(Box::new(match self.padding {
            Padding::Pkcs1v15 => RsaSigner::Pkcs1v15(rsa::pkcs1v15::SigningKey::new(key)),
            Padding::Pss => RsaSigner::Pss(rsa::pss::SigningKey::new_with_salt_len(key, PSS_SALT)),
        }))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let key = rsa::RsaPublicKey::from_pkcs1_der(pk)
            .map_err(|e| OpError::failed("verifier", format!("public key rejected: {e}")))?;
        if key.size() * 8 != self.bits {
            return Err(OpError::failed("verifier", format!("a {}-bit key", key.size() * 8)));
        }
        Ok(Box::new(match self.padding {
            Padding::Pkcs1v15 => RsaVerifier::Pkcs1v15(rsa::pkcs1v15::VerifyingKey::new(key)),
            Padding::Pss => RsaVerifier::Pss(rsa::pss::VerifyingKey::new_with_salt_len(key, PSS_SALT)),
        }))
    }
}

enum RsaSigner {
    Pkcs1v15(rsa::pkcs1v15::SigningKey<Sha256>),
    Pss(rsa::pss::SigningKey<Sha256>),
}

impl Signer for RsaSigner {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        no_context("sign", ctx)?;
        // Through the generator in both cases: the private operation is blinded with it,
        // and PSS draws its salt from it.
        let s = match self {
            RsaSigner::Pkcs1v15(k) => k.try_sign_with_rng(&mut HarnessRng, msg).map(|s| s.to_bytes()),
            RsaSigner::Pss(k) => k.try_sign_with_rng(&mut HarnessRng, msg).map(|s| s.to_bytes()),
        }
        .map_err(|e| OpError::failed("sign", e.to_string()))?;
        put("sign", sig, &s)
    }
}

enum RsaVerifier {
    Pkcs1v15(rsa::pkcs1v15::VerifyingKey<Sha256>),
    Pss(rsa::pss::VerifyingKey<Sha256>),
}

impl Verifier for RsaVerifier {
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        no_context("verify", ctx)?;
        // The crate checks the length (the modulus's) and s < n when verifying.
        Ok(match self {
            RsaVerifier::Pkcs1v15(k) => {
                rsa::pkcs1v15::Signature::try_from(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
            RsaVerifier::Pss(k) => rsa::pss::Signature::try_from(sig).is_ok_and(|s| k.verify(msg, &s).is_ok()),
        })
    }
}

// ---------------------------------------------------------------------------------------

/// ML-DSA (FIPS 204) at its three levels and SLH-DSA (FIPS 205) at category 1.
fn post_quantum() -> Vec<Subject> {
    let mut all = Vec::new();

    let kat = |name: &str| KatRef {
        file: "liboqs-0.13.0-sig-kats.json".into(),
        name: name.into(),
        prng: KatPrngKind::AesCtrDrbg,
    };
    // FIPS 204 Table 1 (η, k, ℓ) and Table 2 (sizes).
    macro_rules! ml_dsa {
        ($alg:literal, $param:ty, $eta:literal, $k:literal, $l:literal, $pk:literal, $sk:literal, $sig:literal) => {{
            let info = SigInfo {
                signature_bytes: $sig,
                variable_length: false,
                signing: Signing::Hedged,
                context: true,
                scheme: "FIPS 204 ML-DSA, pure, hedged".into(),
                encoding: "pk: pkEncode; sk: skEncode (expanded); sig: sigEncode".into(),
            };
            let mut desc = descriptor($alg, "ml-dsa", "FIPS 204", [$pk, $sk], info);
            desc.kat = Some(kat($alg));
            all.push(Subject::Sig(Box::new(MlDsa::<$param> {
                desc,
                eta: $eta,
                k: $k,
                l: $l,
                _p: PhantomData,
            })));
        }};
    }
    ml_dsa!("ML-DSA-44", ml_dsa::MlDsa44, 2, 4, 4, 1312, 2560, 2420);
    ml_dsa!("ML-DSA-65", ml_dsa::MlDsa65, 4, 6, 5, 1952, 4032, 3309);
    ml_dsa!("ML-DSA-87", ml_dsa::MlDsa87, 2, 8, 7, 2592, 4896, 4627);

    // FIPS 205 Table 2: n = 16 at category 1; pk 2n, sk 4n.
    macro_rules! slh_dsa {
        ($alg:literal, $param:ty, $sig:literal) => {{
            let info = SigInfo {
                signature_bytes: $sig,
                variable_length: false,
                signing: Signing::Hedged,
                context: true,
                scheme: "FIPS 205 SLH-DSA, pure, hedged".into(),
                encoding: "pk: PK.seed ‖ PK.root; sk: SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root; sig: R ‖ SIG_FORS ‖ SIG_HT"
                    .into(),
            };
            all.push(Subject::Sig(Box::new(SlhDsa::<$param> {
                desc: descriptor($alg, "slh-dsa", "FIPS 205", [32, 64], info),
                n: 16,
                _p: PhantomData,
            })));
        }};
    }
    slh_dsa!("SLH-DSA-SHA2-128f", slh_dsa::Sha2_128f, 17088);
    slh_dsa!("SLH-DSA-SHA2-128s", slh_dsa::Sha2_128s, 7856);
    slh_dsa!("SLH-DSA-SHAKE-128f", slh_dsa::Shake128f, 17088);
    slh_dsa!("SLH-DSA-SHAKE-128s", slh_dsa::Shake128s, 7856);
    all
}

/// The signature subjects.
pub fn subjects() -> Vec<Subject> {
    let mut all = post_quantum();

    all.push(Subject::Sig(Box::new(Ed25519 {
        desc: descriptor(
            "Ed25519",
            "ed25519-dalek",
            "RFC 8032",
            [32, 32],
            SigInfo {
                signature_bytes: 64,
                variable_length: false,
                signing: Signing::Deterministic,
                context: false,
                scheme: "RFC 8032 Ed25519 (pure, no context); verify_strict: S < L, small-order R and keys rejected"
                    .into(),
                encoding: "pk: 32-byte encoded point; sk: 32-byte seed; sig: R ‖ S".into(),
            },
        ),
    })));

    all.push(Subject::Sig(Box::new(EcdsaP256 {
        desc: descriptor(
            "ECDSA-P256-SHA256",
            "p256",
            "FIPS 186-5",
            [65, 32],
            SigInfo {
                signature_bytes: ECDSA_P256_DER_MAX,
                variable_length: true,
                signing: Signing::Deterministic,
                context: false,
                scheme: "ECDSA over P-256 with SHA-256, RFC 6979 deterministic nonces".into(),
                encoding:
                    "pk: SEC 1 uncompressed point; sk: 32-byte big-endian scalar; sig: DER Ecdsa-Sig-Value (strict DER)"
                        .into(),
            },
        ),
    })));

    for padding in [Padding::Pkcs1v15, Padding::Pss] {
        for bits in [2048, 3072, 4096] {
            let (name, signing, scheme) = match padding {
                Padding::Pkcs1v15 => (
                    format!("RSA-{bits}-PKCS1-SHA256"),
                    Signing::Deterministic,
                    "RSASSA-PKCS1-v1_5 with SHA-256 (private operation blinded, CRT)",
                ),
                Padding::Pss => (
                    format!("RSA-{bits}-PSS-SHA256"),
                    Signing::Randomized,
                    "RSASSA-PSS with SHA-256, MGF1-SHA-256, 32-byte salt (private operation blinded, CRT)",
                ),
            };
            let info = SigInfo {
                signature_bytes: bits / 8,
                variable_length: false,
                signing,
                context: false,
                scheme: scheme.into(),
                encoding: "pk: PKCS #1 RSAPublicKey DER; sk: PKCS #1 RSAPrivateKey DER (two primes); sig: I2OSP to the modulus length; e = 65537"
                    .into(),
            };
            all.push(Subject::Sig(Box::new(Rsa {
                desc: descriptor(&name, "rsa", "RFC 8017", rsa_key_sizes(bits), info),
                bits,
                padding,
            })));
        }
    }
    all
}
