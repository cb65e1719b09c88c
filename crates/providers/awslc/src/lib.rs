//! AWS-LC as a cryptoscope provider, through `aws-lc-rs`: ML-KEM-512/768/1024, X25519 and
//! ECDH P-256; its digests and its AEADs (AES-GCM, ChaCha20-Poly1305); its signatures
//! (ML-DSA-44/65/87, Ed25519, ECDSA P-256, RSA PKCS#1 v1.5 and PSS: `sigs`).
//!
//! AWS-LC draws randomness from its own generator, which cannot be replaced: its ML-KEM is
//! gated by decapsulating KAT ciphertexts made by an implementation that already passed
//! its KAT digest, and by having that implementation decapsulate what AWS-LC encapsulates
//! to the KAT public keys (see `cryptoscope_catalogue::gate`).
//!
//! The Rust API returns owned objects, so each operation copies its result into the
//! caller's buffers; that copy is part of the measured operation (tens of nanoseconds).

use aws_lc_rs::agreement::{self, ParsedPublicKey, PrivateKey, UnparsedPublicKey};
use aws_lc_rs::encoding::{AsBigEndian, Curve25519SeedBin, EcPrivateKeyBin};
use aws_lc_rs::kem::{self, Ciphertext, DecapsulationKey, EncapsulationKey};
use cryptoscope_catalogue::descriptor::{Descriptor, Family, Randomness, Sizes};
use cryptoscope_catalogue::traits::{check_len, Decapsulator, Exchanger, Kem, Kex, OpError, Subject};

mod aeads;
mod hashes;
mod sigs;

/// Canonical provider name.
pub const PROVIDER: &str = "aws-lc";

fn version() -> String {
    format!(
        "{} ({})",
        cryptoscope_worker::build_info::crate_version("aws-lc-rs"),
        cryptoscope_worker::build_info::crate_version("aws-lc-sys")
    )
}

fn build() -> String {
    format!(
        "aws-lc-sys build script: {} (AWS-LC's own flags)",
        cryptoscope_worker::build_info::C_COMPILER
    )
}

fn descriptor(alg: &str, family: Family, sizes: Sizes, randomness: Randomness) -> Descriptor {
    let mut d = Descriptor::catalogued(alg, PROVIDER, "default", version(), build(), sizes, randomness);
    if family == Family::Kem {
        d.algorithm_version = "FIPS 203".into();
    }
    d
}

struct MlKem {
    desc: Descriptor,
    alg: &'static kem::Algorithm<kem::AlgorithmId>,
}

fn unspecified(op: &'static str) -> impl Fn(aws_lc_rs::error::Unspecified) -> OpError {
    move |_| OpError::failed(op, "aws-lc returned an error")
}

impl Kem for MlKem {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let dk = DecapsulationKey::generate(self.alg).map_err(unspecified("keypair"))?;
        let ek = dk.encapsulation_key().map_err(unspecified("keypair"))?;
        pk.copy_from_slice(ek.key_bytes().map_err(unspecified("keypair"))?.as_ref());
        sk.copy_from_slice(dk.key_bytes().map_err(unspecified("keypair"))?.as_ref());
        Ok(())
    }

    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
        self.desc.sizes.check_encaps(ct, ss, pk)?;
        let ek = EncapsulationKey::new(self.alg, pk)
            .map_err(|e| OpError::failed("encaps", format!("public key rejected: {e}")))?;
        let (c, k) = ek.encapsulate().map_err(unspecified("encaps"))?;
        ct.copy_from_slice(c.as_ref());
        ss.copy_from_slice(k.as_ref());
        Ok(())
    }

    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
        let dk = DecapsulationKey::new(self.alg, sk)
            .map_err(|e| OpError::failed("decaps", format!("secret key rejected: {e}")))?;
        Ok(Box::new(MlKemDecaps {
            dk,
            ss_len: self.desc.sizes.shared_secret,
        }))
    }
}

struct MlKemDecaps {
    dk: DecapsulationKey<kem::AlgorithmId>,
    ss_len: usize,
}

impl Decapsulator for MlKemDecaps {
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
        check_len("decaps", "ss", ss.len(), self.ss_len)?;
        let k = self
            .dk
            .decapsulate(Ciphertext::from(ct))
            .map_err(unspecified("decaps"))?;
        ss.copy_from_slice(k.as_ref());
        Ok(())
    }
}

struct Ecdh {
    desc: Descriptor,
    alg: &'static agreement::Algorithm,
}

impl Kex for Ecdh {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let key = PrivateKey::generate(self.alg).map_err(unspecified("keypair"))?;
        pk.copy_from_slice(key.compute_public_key().map_err(unspecified("keypair"))?.as_ref());
        if self.desc.algorithm == "X25519" {
            let b: Curve25519SeedBin = key.as_be_bytes().map_err(unspecified("keypair"))?;
            sk.copy_from_slice(b.as_ref());
        } else {
            let b: EcPrivateKeyBin = key.as_be_bytes().map_err(unspecified("keypair"))?;
            sk.copy_from_slice(b.as_ref());
        }
        Ok(())
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        let key = PrivateKey::from_private_key(self.alg, sk)
            .map_err(|e| OpError::failed("exchange", format!("private key rejected: {e}")))?;
        Ok(Box::new(EcdhExchanger {
            key,
            alg: self.alg,
            ss_len: self.desc.sizes.shared_secret,
            peer: None,
        }))
    }
}

struct EcdhExchanger {
    key: PrivateKey,
    alg: &'static agreement::Algorithm,
    ss_len: usize,
    peer: Option<ParsedPublicKey>,
}

impl EcdhExchanger {
    /// The peer's key as aws-lc-rs reads it: X25519's 32 bytes; for P-256 a SEC 1 point
    /// (uncompressed or compressed) or a DER SubjectPublicKeyInfo, on the curve (AWS-LC's
    /// EC_POINT_oct2point and EC_KEY_check_key).
    fn parse(&self, op: &'static str, peer_pk: &[u8]) -> Result<ParsedPublicKey, OpError> {
        ParsedPublicKey::try_from(&UnparsedPublicKey::new(self.alg, peer_pk))
            .map_err(|e| OpError::failed(op, format!("aws-lc rejected the peer public key: {e}")))
    }

    fn agree(&self, op: &'static str, ss: &mut [u8], peer: impl TryInto<ParsedPublicKey>) -> Result<(), OpError> {
        check_len(op, "ss", ss.len(), self.ss_len)?;
        agreement::agree(
            &self.key,
            peer,
            OpError::failed(op, "aws-lc rejected the peer public key or derivation failed"),
            |k| {
                ss.copy_from_slice(k);
                Ok(())
            },
        )
    }
}

impl Exchanger for EcdhExchanger {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        self.agree("exchange", ss, UnparsedPublicKey::new(self.alg, peer_pk))
    }

    fn validate(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        std::hint::black_box(self.parse("validate", peer_pk)?);
        Ok(())
    }

    fn set_peer(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        self.peer = Some(self.parse("set_peer", peer_pk)?);
        Ok(())
    }

    /// aws-lc-rs's `agree` with a parsed key: a new EVP_PKEY_CTX per call, as the crate
    /// makes one (the key itself is shared, not copied).
    fn derive(&mut self, ss: &mut [u8]) -> Result<(), OpError> {
        let peer = self
            .peer
            .clone()
            .ok_or_else(|| OpError::failed("derive", "no peer key set"))?;
        self.agree("derive", ss, peer)
    }

    fn exchange_spki(&mut self, ss: &mut [u8], der: &[u8]) -> Result<(), OpError> {
        // aws-lc-rs reads a DER SubjectPublicKeyInfo where the bytes are one.
        self.agree("exchange", ss, UnparsedPublicKey::new(self.alg, der))
    }
}

/// Buffer sizes as this AWS-LC build produces them (aws-lc-rs keeps its size table
/// private): one key pair and one encapsulation, made when the catalogue is listed.
fn probe_sizes(alg: &'static kem::Algorithm<kem::AlgorithmId>) -> Option<Sizes> {
    let dk = DecapsulationKey::generate(alg).ok()?;
    let ek = dk.encapsulation_key().ok()?;
    let (ct, ss) = ek.encapsulate().ok()?;
    Some(Sizes {
        public_key: ek.key_bytes().ok()?.as_ref().len(),
        secret_key: dk.key_bytes().ok()?.as_ref().len(),
        ciphertext: ct.as_ref().len(),
        shared_secret: ss.as_ref().len(),
    })
}

/// AWS-LC's subjects.
pub fn subjects() -> Vec<Subject> {
    let mut v: Vec<Subject> = Vec::new();
    for (name, alg) in [
        ("ML-KEM-512", &kem::ML_KEM_512),
        ("ML-KEM-768", &kem::ML_KEM_768),
        ("ML-KEM-1024", &kem::ML_KEM_1024),
    ] {
        let Some(sizes) = probe_sizes(alg) else { continue };
        v.push(Subject::Kem(Box::new(MlKem {
            desc: descriptor(name, Family::Kem, sizes, Randomness::Internal),
            alg,
        })));
    }
    let x = Sizes {
        public_key: 32,
        secret_key: 32,
        ciphertext: 0,
        shared_secret: 32,
    };
    v.push(Subject::Kex(Box::new(Ecdh {
        desc: descriptor("X25519", Family::Kex, x, Randomness::Internal),
        alg: &agreement::X25519,
    })));
    let p = Sizes {
        public_key: 65,
        secret_key: 32,
        ciphertext: 0,
        shared_secret: 32,
    };
    v.push(Subject::Kex(Box::new(Ecdh {
        desc: descriptor("P-256", Family::Kex, p, Randomness::Internal),
        alg: &agreement::ECDH_P256,
    })));
    v.extend(hashes::subjects());
    v.extend(aeads::subjects());
    v.extend(sigs::subjects());
    v
}
