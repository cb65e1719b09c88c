//! RustCrypto as a cryptoscope provider: `ml-kem` (ML-KEM-512/768/1024), `x25519-dalek`
//! (X25519) and `p256` (ECDH P-256), pure Rust; also hashes, block ciphers, AEADs
//! (`aes-gcm`, `chacha20poly1305`) and signatures (`ml-dsa`, `slh-dsa`, `ed25519-dalek`,
//! `p256`'s ECDSA, `rsa`).
//!
//! Randomness is drawn from the harness: ML-KEM key generation takes the 64-byte seed
//! d‖z and encapsulation the 32-byte message m, each in one draw, exactly as the NIST KAT
//! procedure feeds `randombytes`, so this implementation reproduces the published KAT
//! digests. Secret keys use the FIPS 203 expanded encoding, like the C libraries.

#![allow(deprecated)] // ml-kem and ml-dsa mark the expanded key encodings deprecated; KATs use them.

use cryptoscope_catalogue::descriptor::{Descriptor, Family, KatPrngKind, KatRef, Randomness, Sizes};
use cryptoscope_catalogue::rng;
use cryptoscope_catalogue::traits::{check_len, Decapsulator, Exchanger, Kem, Kex, OpError, Subject};
use ml_kem::array::Array;
use ml_kem::{Decapsulate, ExpandedKeyEncoding, KeyExport};

mod aeads;
pub mod ciphers;
mod hashes;
mod sigs;

/// Canonical provider name.
pub const PROVIDER: &str = "rustcrypto";

/// How this provider was compiled.
fn build_line() -> String {
    format!(
        "{} opt-level={} (generic x86_64 target, run-time feature detection)",
        cryptoscope_worker::build_info::RUSTC,
        cryptoscope_worker::build_info::OPT_LEVEL
    )
}

fn descriptor(alg: &str, family: Family, crate_name: &str, sizes: Sizes, kat: Option<KatRef>) -> Descriptor {
    let build = build_line();
    let version = cryptoscope_worker::build_info::crate_version(crate_name);
    let mut d = Descriptor::catalogued(alg, PROVIDER, "default", version, build, sizes, Randomness::Harness);
    if family == Family::Kem {
        d.algorithm_version = "FIPS 203".into();
    }
    d.kat = kat;
    d
}

fn array<N: ml_kem::array::ArraySize>(op: &'static str, what: &str, bytes: &[u8]) -> Result<Array<u8, N>, OpError> {
    Array::try_from(bytes).map_err(|_| OpError::failed(op, format!("{what} has the wrong length")))
}

macro_rules! ml_kem_subject {
    ($ty:ident, $dec:ident, $param:ty) => {
        struct $ty {
            desc: Descriptor,
        }

        impl Kem for $ty {
            fn descriptor(&self) -> &Descriptor {
                &self.desc
            }

            fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
                self.desc.sizes.check_keypair(pk, sk)?;
                let mut seed = [0u8; 64];
                rng::fill(&mut seed);
                let dk = ml_kem::DecapsulationKey::<$param>::from_seed(seed.into());
                pk.copy_from_slice(&dk.encapsulation_key().to_bytes());
                sk.copy_from_slice(&dk.to_expanded_bytes());
                Ok(())
            }

            fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
                self.desc.sizes.check_encaps(ct, ss, pk)?;
                let key = array("encaps", "public key", pk)?;
                let ek = ml_kem::EncapsulationKey::<$param>::new(&key)
                    .map_err(|_| OpError::failed("encaps", "public key rejected"))?;
                let mut m = [0u8; 32];
                rng::fill(&mut m);
                let (c, k) = ek.encapsulate_deterministic(&m.into());
                ct.copy_from_slice(&c);
                ss.copy_from_slice(&k);
                Ok(())
            }

            fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
                let bytes = array("decaps", "secret key", sk)?;
                let dk = ml_kem::DecapsulationKey::<$param>::from_expanded_bytes(&bytes)
                    .map_err(|_| OpError::failed("decaps", "secret key rejected"))?;
                Ok(Box::new($dec {
                    dk,
                    ss_len: self.desc.sizes.shared_secret,
                }))
            }
        }

        struct $dec {
            dk: ml_kem::DecapsulationKey<$param>,
            ss_len: usize,
        }

        impl Decapsulator for $dec {
            fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
                check_len("decaps", "ss", ss.len(), self.ss_len)?;
                let c = array("decaps", "ciphertext", ct)?;
                ss.copy_from_slice(&self.dk.decapsulate(&c));
                Ok(())
            }
        }
    };
}

ml_kem_subject!(MlKem512, MlKem512Dec, ml_kem::MlKem512);
ml_kem_subject!(MlKem768, MlKem768Dec, ml_kem::MlKem768);
ml_kem_subject!(MlKem1024, MlKem1024Dec, ml_kem::MlKem1024);

struct X25519 {
    desc: Descriptor,
}

impl Kex for X25519 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let mut raw = [0u8; 32];
        rng::fill(&mut raw);
        let secret = x25519_dalek::StaticSecret::from(raw);
        pk.copy_from_slice(x25519_dalek::PublicKey::from(&secret).as_bytes());
        sk.copy_from_slice(&raw);
        Ok(())
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        let raw: [u8; 32] = sk.try_into().map_err(|_| OpError::BadLength {
            op: "exchange",
            buffer: "sk",
            got: sk.len(),
            expected: 32,
        })?;
        Ok(Box::new(X25519Ex {
            secret: x25519_dalek::StaticSecret::from(raw),
            peer: None,
        }))
    }
}

struct X25519Ex {
    secret: x25519_dalek::StaticSecret,
    peer: Option<x25519_dalek::PublicKey>,
}

/// X25519 public keys as x25519-dalek reads them: any 32 bytes (RFC 7748 §5 defines no
/// invalid key; the crate does not reject low-order points).
fn x25519_peer(peer_pk: &[u8]) -> Result<x25519_dalek::PublicKey, OpError> {
    let peer: [u8; 32] = peer_pk.try_into().map_err(|_| OpError::BadLength {
        op: "exchange",
        buffer: "peer_pk",
        got: peer_pk.len(),
        expected: 32,
    })?;
    Ok(x25519_dalek::PublicKey::from(peer))
}

impl Exchanger for X25519Ex {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), 32)?;
        let shared = self.secret.diffie_hellman(&x25519_peer(peer_pk)?);
        ss.copy_from_slice(shared.as_bytes());
        Ok(())
    }

    fn validate(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        std::hint::black_box(x25519_peer(peer_pk)?);
        Ok(())
    }

    fn set_peer(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        self.peer = Some(x25519_peer(peer_pk)?);
        Ok(())
    }

    fn derive(&mut self, ss: &mut [u8]) -> Result<(), OpError> {
        check_len("derive", "ss", ss.len(), 32)?;
        let peer = self
            .peer
            .as_ref()
            .ok_or_else(|| OpError::failed("derive", "no peer key set"))?;
        ss.copy_from_slice(self.secret.diffie_hellman(peer).as_bytes());
        Ok(())
    }
}

struct P256 {
    desc: Descriptor,
}

impl Kex for P256 {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        // Rejection sampling: a uniformly random scalar in [1, n).
        let secret = loop {
            let mut raw = [0u8; 32];
            rng::fill(&mut raw);
            if let Ok(s) = p256::SecretKey::from_slice(&raw) {
                break s;
            }
        };
        pk.copy_from_slice(&secret.public_key().to_sec1_bytes());
        sk.copy_from_slice(&secret.to_bytes());
        Ok(())
    }

    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError> {
        let secret =
            p256::SecretKey::from_slice(sk).map_err(|_| OpError::failed("exchange", "private scalar rejected"))?;
        Ok(Box::new(P256Ex { secret, peer: None }))
    }
}

struct P256Ex {
    secret: p256::SecretKey,
    peer: Option<p256::PublicKey>,
}

/// A P-256 public key as the `p256` crate reads a SEC 1 encoding: a compressed or
/// uncompressed point on the curve, not the identity (the curve's cofactor is 1, so no
/// subgroup check is needed).
fn p256_peer(op: &'static str, peer_pk: &[u8]) -> Result<p256::PublicKey, OpError> {
    p256::PublicKey::from_sec1_bytes(peer_pk).map_err(|_| OpError::failed(op, "peer public key rejected"))
}

impl P256Ex {
    fn agree(&self, ss: &mut [u8], peer: &p256::PublicKey) {
        let shared = p256::ecdh::diffie_hellman(self.secret.to_nonzero_scalar(), peer.as_affine());
        ss.copy_from_slice(shared.raw_secret_bytes());
    }
}

impl Exchanger for P256Ex {
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError> {
        check_len("exchange", "ss", ss.len(), 32)?;
        let peer = p256_peer("exchange", peer_pk)?;
        self.agree(ss, &peer);
        Ok(())
    }

    fn validate(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        std::hint::black_box(p256_peer("validate", peer_pk)?);
        Ok(())
    }

    fn set_peer(&mut self, peer_pk: &[u8]) -> Result<(), OpError> {
        self.peer = Some(p256_peer("set_peer", peer_pk)?);
        Ok(())
    }

    fn derive(&mut self, ss: &mut [u8]) -> Result<(), OpError> {
        check_len("derive", "ss", ss.len(), 32)?;
        let peer = self
            .peer
            .as_ref()
            .ok_or_else(|| OpError::failed("derive", "no peer key set"))?;
        self.agree(ss, peer);
        Ok(())
    }

    fn exchange_spki(&mut self, ss: &mut [u8], der: &[u8]) -> Result<(), OpError> {
        use p256::pkcs8::DecodePublicKey;
        check_len("exchange", "ss", ss.len(), 32)?;
        let peer = p256::PublicKey::from_public_key_der(der)
            .map_err(|e| OpError::failed("exchange", format!("SubjectPublicKeyInfo rejected: {e}")))?;
        self.agree(ss, &peer);
        Ok(())
    }
}

/// RustCrypto's subjects.
pub fn subjects() -> Vec<Subject> {
    let mut all = kems_and_kexes();
    all.extend(hashes::subjects());
    all.extend(ciphers::subjects());
    all.extend(aeads::subjects());
    all.extend(sigs::subjects());
    all
}

fn kems_and_kexes() -> Vec<Subject> {
    let kat = |name: &str| {
        Some(KatRef {
            file: "liboqs-kats.json".into(),
            name: name.into(),
            prng: KatPrngKind::AesCtrDrbg,
        })
    };
    // FIPS 203 Table 3 sizes; the gate's canaries and length checks hold the crate to them.
    let s = |pk, sk, ct| Sizes {
        public_key: pk,
        secret_key: sk,
        ciphertext: ct,
        shared_secret: 32,
    };
    vec![
        Subject::Kem(Box::new(MlKem512 {
            desc: descriptor(
                "ML-KEM-512",
                Family::Kem,
                "ml-kem",
                s(800, 1632, 768),
                kat("ML-KEM-512"),
            ),
        })),
        Subject::Kem(Box::new(MlKem768 {
            desc: descriptor(
                "ML-KEM-768",
                Family::Kem,
                "ml-kem",
                s(1184, 2400, 1088),
                kat("ML-KEM-768"),
            ),
        })),
        Subject::Kem(Box::new(MlKem1024 {
            desc: descriptor(
                "ML-KEM-1024",
                Family::Kem,
                "ml-kem",
                s(1568, 3168, 1568),
                kat("ML-KEM-1024"),
            ),
        })),
        Subject::Kex(Box::new(X25519 {
            desc: descriptor(
                "X25519",
                Family::Kex,
                "x25519-dalek",
                Sizes {
                    public_key: 32,
                    secret_key: 32,
                    ciphertext: 0,
                    shared_secret: 32,
                },
                None,
            ),
        })),
        Subject::Kex(Box::new(P256 {
            desc: descriptor(
                "P-256",
                Family::Kex,
                "p256",
                Sizes {
                    public_key: 65,
                    secret_key: 32,
                    ciphertext: 0,
                    shared_secret: 32,
                },
                None,
            ),
        })),
    ]
}
