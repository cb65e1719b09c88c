//! AWS-LC's signatures through `aws_lc_rs::signature`: ML-DSA-44/65/87, Ed25519, ECDSA
//! P-256 with SHA-256, and RSA (PKCS#1 v1.5 and PSS, SHA-256) at 2048, 3072 and 4096 bits.
//!
//! Keys travel in the encodings every provider shares, so that keys and signatures can be
//! exchanged between implementations:
//! - ML-DSA: FIPS 204 pkEncode and the expanded skEncode. aws-lc-rs exports and imports the
//!   expanded key (`PqdsaPrivateKey::as_raw_bytes`, `PqdsaKeyPair::from_raw_private_key`);
//!   it imports a 32-byte seed (`from_seed`) but exports none. Its API signs with an empty
//!   context only (AWS-LC's C API has `EVP_PKEY_CTX_set1_signature_context_string`, which
//!   aws-lc-rs does not expose), so a non-empty context is refused. Signing is FIPS 204's
//!   default, hedged.
//! - Ed25519: the 32-byte public key and the 32-byte seed.
//! - ECDSA P-256: the 65-byte uncompressed SEC 1 point, the 32-byte big-endian scalar, DER
//!   signatures. AWS-LC draws each nonce from its DRBG with a SHA-512 hash of the private
//!   key and the digest as additional input (`ecdsa_sign_impl`): hedged.
//! - RSA: PKCS#1 `RSAPublicKey` and `RSAPrivateKey` DER. aws-lc-rs writes the private key
//!   only as PKCS#8, whose `privateKey` OCTET STRING is the PKCS#1 key: it is taken from
//!   there. PSS: SHA-256, MGF1 with SHA-256, a 32-byte salt (`RSA_PSS_SALTLEN_DIGEST`).
//!
//! What is measured is what aws-lc-rs does per call: a new `EVP_MD_CTX` and
//! `EVP_DigestSign`/`EVP_DigestVerify` on the prepared key, then the copy of the owned
//! signature into the caller's buffer. Prepared signers hold the key pair, verifiers a
//! `ParsedPublicKey` (the key read once).

use aws_lc_rs::agreement;
use aws_lc_rs::encoding::{AsBigEndian, AsDer, AsRawBytes, Curve25519SeedBin, EcPrivateKeyBin};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{
    self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, ParsedPublicKey, PqdsaKeyPair, PqdsaSigningAlgorithm,
    PqdsaVerificationAlgorithm, RsaKeyPair, RsaParameters, RsaSignatureEncoding, VerificationAlgorithm,
};
use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, SigInfo, Signing};
use cryptoscope_catalogue::traits::{OpError, Sig, Signer, Subject, Verifier};

/// What a subject signs with.
#[derive(Clone, Copy)]
enum Scheme {
    MlDsa(&'static PqdsaSigningAlgorithm, &'static PqdsaVerificationAlgorithm),
    Ed25519,
    EcdsaP256,
    Rsa {
        size: KeySize,
        signing: &'static RsaSignatureEncoding,
        verifying: &'static RsaParameters,
    },
}

struct Subj {
    desc: Descriptor,
    scheme: Scheme,
}

fn unspecified(op: &'static str) -> impl Fn(aws_lc_rs::error::Unspecified) -> OpError {
    move |_| OpError::failed(op, "aws-lc returned an error")
}

fn rejected(op: &'static str, what: &'static str) -> impl Fn(aws_lc_rs::error::KeyRejected) -> OpError {
    move |e| OpError::failed(op, format!("aws-lc rejected the {what}: {e}"))
}

/// Copies `src` into the front of `dst` and returns its length.
fn put(op: &'static str, what: &str, dst: &mut [u8], src: &[u8]) -> Result<usize, OpError> {
    let Some(d) = dst.get_mut(..src.len()) else {
        return Err(OpError::failed(
            op,
            format!("{} bytes of {what} for a buffer of {}", src.len(), dst.len()),
        ));
    };
    d.copy_from_slice(src);
    Ok(src.len())
}

/// None of these schemes takes a context string.
fn no_context(ctx: &[u8]) -> Result<(), OpError> {
    if ctx.is_empty() {
        Ok(())
    } else {
        Err(OpError::Unavailable("aws-lc-rs signs with no context string".into()))
    }
}

/// One DER element at the start of `der`: its tag, its contents and what follows it.
fn der_element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| (a << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The PKCS#1 `RSAPrivateKey` inside a PKCS#8 `PrivateKeyInfo` (RFC 5208): the contents of
/// its third element, the `privateKey` OCTET STRING.
fn pkcs1_from_pkcs8(pkcs8: &[u8]) -> Option<&[u8]> {
    let (0x30, info, _) = der_element(pkcs8)? else {
        return None;
    };
    let (0x02, _, rest) = der_element(info)? else {
        return None;
    };
    let (0x30, _, rest) = der_element(rest)? else {
        return None;
    };
    let (0x04, key, _) = der_element(rest)? else {
        return None;
    };
    Some(key)
}

impl Sig for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError> {
        const OP: &str = "keypair";
        let e = unspecified(OP);
        match self.scheme {
            Scheme::MlDsa(alg, _) => {
                let kp = PqdsaKeyPair::generate(alg).map_err(&e)?;
                let raw = kp.private_key().as_raw_bytes().map_err(&e)?;
                Ok((
                    put(OP, "public key", pk, kp.public_key().as_ref())?,
                    put(OP, "secret key", sk, raw.as_ref())?,
                ))
            }
            Scheme::Ed25519 => {
                let kp = Ed25519KeyPair::generate().map_err(&e)?;
                let seed: Curve25519SeedBin = kp.seed().map_err(&e)?.as_be_bytes().map_err(&e)?;
                Ok((
                    put(OP, "public key", pk, kp.public_key().as_ref())?,
                    put(OP, "secret key", sk, seed.as_ref())?,
                ))
            }
            Scheme::EcdsaP256 => {
                let kp = EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_ASN1_SIGNING).map_err(&e)?;
                let d: EcPrivateKeyBin = kp.private_key().as_be_bytes().map_err(&e)?;
                Ok((
                    put(OP, "public key", pk, kp.public_key().as_ref())?,
                    put(OP, "secret key", sk, d.as_ref())?,
                ))
            }
            Scheme::Rsa { size, .. } => {
                let kp = RsaKeyPair::generate(size).map_err(&e)?;
                let pkcs8 = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der>::as_der(&kp).map_err(&e)?;
                let der = pkcs1_from_pkcs8(pkcs8.as_ref())
                    .ok_or_else(|| OpError::failed(OP, "aws-lc wrote a PKCS#8 key without an RSAPrivateKey"))?;
                Ok((
                    put(OP, "public key", pk, kp.public_key().as_ref())?,
                    put(OP, "secret key", sk, der)?,
                ))
            }
        }
    }

    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError> {
        const OP: &str = "sign";
        let key = match self.scheme {
            Scheme::MlDsa(alg, _) => {
                Key::MlDsa(PqdsaKeyPair::from_raw_private_key(alg, sk).map_err(rejected(OP, "ML-DSA secret key"))?)
            }
            Scheme::Ed25519 => {
                if sk.len() != 32 {
                    return Err(OpError::failed(
                        OP,
                        format!("an Ed25519 seed of {} bytes (32)", sk.len()),
                    ));
                }
                Key::Ed25519(Ed25519KeyPair::from_seed_unchecked(sk).map_err(rejected(OP, "Ed25519 seed"))?)
            }
            Scheme::EcdsaP256 => {
                // aws-lc-rs builds an ECDSA key pair from the scalar and its point only: the
                // point comes from the same scalar as an ECDH key.
                let d = agreement::PrivateKey::from_private_key(&agreement::ECDH_P256, sk)
                    .map_err(|_| OpError::failed(OP, "aws-lc rejected the P-256 scalar"))?;
                let q = d.compute_public_key().map_err(unspecified(OP))?;
                let kp = EcdsaKeyPair::from_private_key_and_public_key(
                    &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                    sk,
                    q.as_ref(),
                )
                .map_err(rejected(OP, "P-256 key pair"))?;
                Key::Ecdsa(kp, SystemRandom::new())
            }
            Scheme::Rsa { signing, .. } => {
                let kp = RsaKeyPair::from_der(sk).map_err(rejected(OP, "RSAPrivateKey"))?;
                Key::Rsa(kp, signing, SystemRandom::new())
            }
        };
        Ok(Box::new(key))
    }

    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError> {
        let alg: &'static dyn VerificationAlgorithm = match self.scheme {
            Scheme::MlDsa(_, alg) => alg,
            Scheme::Ed25519 => &signature::ED25519,
            Scheme::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1,
            Scheme::Rsa { verifying, .. } => verifying,
        };
        let key = ParsedPublicKey::new(alg, pk).map_err(rejected("verify", "public key"))?;
        Ok(Box::new(Parsed(key)))
    }
}

/// A prepared secret key.
enum Key {
    MlDsa(PqdsaKeyPair),
    Ed25519(Ed25519KeyPair),
    /// aws-lc-rs takes a generator for ring's sake and ignores it.
    Ecdsa(EcdsaKeyPair, SystemRandom),
    Rsa(RsaKeyPair, &'static RsaSignatureEncoding, SystemRandom),
}

impl Signer for Key {
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError> {
        const OP: &str = "sign";
        no_context(ctx)?;
        let e = unspecified(OP);
        match self {
            Key::MlDsa(kp) => kp.sign(msg, sig).map_err(e),
            Key::Ed25519(kp) => put(OP, "signature", sig, kp.try_sign(msg).map_err(e)?.as_ref()),
            Key::Ecdsa(kp, rng) => put(OP, "signature", sig, kp.sign(rng, msg).map_err(e)?.as_ref()),
            Key::Rsa(kp, encoding, rng) => {
                let n = kp.public_modulus_len();
                let len = sig.len();
                let out = sig
                    .get_mut(..n)
                    .ok_or_else(|| OpError::failed(OP, format!("a {n}-byte signature for a buffer of {len}")))?;
                kp.sign(*encoding, rng, msg, out).map_err(e)?;
                Ok(n)
            }
        }
    }
}

/// A prepared public key.
struct Parsed(ParsedPublicKey);

impl Verifier for Parsed {
    /// aws-lc-rs reports every failure alike (`Unspecified`): each is a rejection.
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError> {
        no_context(ctx)?;
        Ok(self.0.verify_sig(msg, sig).is_ok())
    }
}

/// PKCS#1 DER sizes allowed for a modulus of `n` bytes: `RSAPublicKey` is n + 14 bytes
/// with e = 65537 (n + 32 leaves room for a larger exponent); `RSAPrivateKey` about
/// 4.5·n + 45 (5·n for any n past 90 bytes).
fn rsa_key_sizes(n: usize) -> [usize; 2] {
    [n + 32, 5 * n]
}

/// The signature subjects.
/// One AWS-LC signature subject (AWS-LC draws its own randomness).
fn mk(alg: &str, keys: [usize; 2], info: SigInfo, scheme: Scheme) -> Subject {
    let desc = Descriptor::signature(
        alg,
        crate::PROVIDER,
        "default",
        crate::version(),
        crate::build(),
        keys,
        Randomness::Internal,
        info,
    );
    Subject::Sig(Box::new(Subj { desc, scheme }))
}

/// What a signature scheme is, as the catalogue lists it (no context string here).
fn info(signature_bytes: usize, variable_length: bool, signing: Signing, scheme: &str, encoding: &str) -> SigInfo {
    SigInfo {
        signature_bytes,
        variable_length,
        signing,
        context: false,
        scheme: scheme.into(),
        encoding: encoding.into(),
    }
}

pub fn subjects() -> Vec<Subject> {
    let mut v = Vec::new();
    for (name, sign, verify, pk, sk, sig) in [
        (
            "ML-DSA-44",
            &signature::ML_DSA_44_SIGNING,
            &signature::ML_DSA_44,
            1312,
            2560,
            2420,
        ),
        (
            "ML-DSA-65",
            &signature::ML_DSA_65_SIGNING,
            &signature::ML_DSA_65,
            1952,
            4032,
            3309,
        ),
        (
            "ML-DSA-87",
            &signature::ML_DSA_87_SIGNING,
            &signature::ML_DSA_87,
            2592,
            4896,
            4627,
        ),
    ] {
        let d = info(
            sig,
            false,
            Signing::Hedged,
            "FIPS 204 ML-DSA, pure, hedged; empty context only (aws-lc-rs exposes none)",
            "FIPS 204 pkEncode; expanded skEncode; FIPS 204 signature",
        );
        v.push(mk(name, [pk, sk], d, Scheme::MlDsa(sign, verify)));
    }
    v.push(mk(
        "Ed25519",
        [32, 32],
        info(
            64,
            false,
            Signing::Deterministic,
            "Ed25519 (RFC 8032, pure)",
            "32-byte public key; 32-byte seed; 64-byte signature",
        ),
        Scheme::Ed25519,
    ));
    v.push(mk(
        "ECDSA-P256-SHA256",
        [65, 32],
        info(
            72,
            true,
            Signing::Hedged,
            "ECDSA over P-256 with SHA-256; nonce from AWS-LC's DRBG with SHA-512(key, digest) as additional input",
            "SEC 1 uncompressed point (65 bytes); 32-byte big-endian scalar; DER signature (at most 72 bytes)",
        ),
        Scheme::EcdsaP256,
    ));
    for (bits, size) in [
        (2048, KeySize::Rsa2048),
        (3072, KeySize::Rsa3072),
        (4096, KeySize::Rsa4096),
    ] {
        let n = size.len();
        v.push(mk(
            &format!("RSA-{bits}-PKCS1-SHA256"),
            rsa_key_sizes(n),
            info(
                n,
                false,
                Signing::Deterministic,
                "RSASSA-PKCS1-v1_5 with SHA-256, e = 65537",
                RSA_ENCODING,
            ),
            Scheme::Rsa {
                size,
                signing: &signature::RSA_PKCS1_SHA256,
                verifying: &signature::RSA_PKCS1_2048_8192_SHA256,
            },
        ));
        v.push(mk(
            &format!("RSA-{bits}-PSS-SHA256"),
            rsa_key_sizes(n),
            info(
                n,
                false,
                Signing::Randomized,
                "RSASSA-PSS with SHA-256, MGF1-SHA-256, 32-byte salt, e = 65537",
                RSA_ENCODING,
            ),
            Scheme::Rsa {
                size,
                signing: &signature::RSA_PSS_SHA256,
                verifying: &signature::RSA_PSS_2048_8192_SHA256,
            },
        ));
    }
    v
}

const RSA_ENCODING: &str = "PKCS#1 RSAPublicKey DER; PKCS#1 RSAPrivateKey DER; signature as long as the modulus";
