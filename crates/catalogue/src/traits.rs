//! The traits a provider implements. They take and fill caller-owned byte buffers whose
//! lengths come from the descriptor, so drivers allocate everything before timing starts.
//!
//! Own secret keys are *prepared* once, outside timing ([`Kem::decapsulator`],
//! [`Kex::exchanger`]), because a real protocol holds its own key in memory; data from the
//! peer (public key, ciphertext) arrives as bytes and is parsed inside the timed call.

use crate::descriptor::Descriptor;

pub use cryptoscope_model::error::{check_len, OpError};

/// A key encapsulation mechanism.
pub trait Kem: Send + Sync {
    fn descriptor(&self) -> &Descriptor;
    /// Generates a key pair into `pk` and `sk`.
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError>;
    /// Encapsulates to the public key bytes `pk`, writing `ct` and `ss`.
    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError>;
    /// Prepares the secret key `sk` for decapsulation (untimed).
    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError>;
    /// Timing probes compiled around the implementation's internal functions, when it
    /// was built with them (`cryptoscope micro` on our own builds); `None` otherwise.
    fn probes(&self) -> Option<&dyn Probes> {
        None
    }
}

/// Counters kept by wrappers around an implementation's internal functions: calls and
/// time-stamp-counter ticks spent inside, cumulative since the library was loaded.
pub trait Probes {
    /// The functions probed, by their short (unprefixed) names.
    fn names(&self) -> Vec<String>;
    /// (calls, ticks) per function, in the order of [`Probes::names`].
    fn read(&self) -> Vec<(u64, u64)>;
    /// Ticks a probe around nothing measures: the cost of one probe, subtracted per call.
    fn overhead(&self) -> u64;
    /// What a tick is: "TSC" (reference cycles) or "ns".
    fn unit(&self) -> &'static str;
}

/// A prepared secret key that decapsulates.
pub trait Decapsulator {
    /// Decapsulates `ct` into `ss`. Implicit rejection: a bad ciphertext may give a
    /// pseudo-random secret instead of an error.
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError>;
}

/// A key exchange (Diffie–Hellman style).
pub trait Kex: Send + Sync {
    fn descriptor(&self) -> &Descriptor;
    /// Generates a key pair: `sk` is the raw private value, `pk` the encoded public value.
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError>;
    /// Prepares the raw private value `sk` for exchanges (untimed).
    fn exchanger<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Exchanger + 'a>, OpError>;
    /// For finite-field groups: the group's (p, g) as big-endian bytes, as the library
    /// holds them, so the gate can check them against the published group.
    fn group_parameters(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        None
    }
}

/// A prepared own secret that derives shared secrets from peer public keys.
///
/// A key exchange is measured in its parts: [`Exchanger::validate`] (the peer's key read
/// from the wire and checked as the library's own TLS stack checks it),
/// [`Exchanger::derive`] (the shared secret from a peer key already read and checked: what
/// `openssl speed`, eBACS and liboqs publish) and [`Exchanger::exchange`] (all of it, as a
/// TLS server runs it).
pub trait Exchanger {
    /// Parses and validates `peer_pk` and derives the shared secret into `ss`.
    fn exchange(&mut self, ss: &mut [u8], peer_pk: &[u8]) -> Result<(), OpError>;
    /// Reads `peer_pk` into the library's key form and checks it as the library's TLS
    /// stack does before deriving; derives nothing.
    fn validate(&mut self, peer_pk: &[u8]) -> Result<(), OpError>;
    /// Reads and checks `peer_pk` once (untimed) and keeps it for [`Exchanger::derive`],
    /// with whatever per-peer state the library sets up before deriving.
    fn set_peer(&mut self, peer_pk: &[u8]) -> Result<(), OpError>;
    /// Derives the shared secret with the peer key of [`Exchanger::set_peer`] into `ss`.
    fn derive(&mut self, ss: &mut [u8]) -> Result<(), OpError>;
    /// [`Exchanger::exchange`] with the peer key as a DER SubjectPublicKeyInfo, read by
    /// the library's own decoder (Wycheproof's `ecdh_test_schema`). Libraries without one
    /// say so.
    fn exchange_spki(&mut self, _ss: &mut [u8], _der: &[u8]) -> Result<(), OpError> {
        Err(OpError::Unavailable(
            "the library reads no SubjectPublicKeyInfo for this key exchange".into(),
        ))
    }
}

/// A signature scheme. Keys are prepared once, untimed ([`Sig::signer`],
/// [`Sig::verifier`]): a server holds its key, a client parses a certificate's key once;
/// what is timed is signing and verifying. Its descriptor's
/// [`crate::descriptor::SigInfo`] says what is signed and how.
pub trait Sig: Send + Sync {
    fn descriptor(&self) -> &Descriptor;
    /// Generates a key pair into `pk` and `sk` (the descriptor's sizes, the largest an
    /// encoding takes) and returns the bytes of each it wrote (RSA's DER keys vary).
    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(usize, usize), OpError>;
    /// Reads the secret key `sk` into the library's form, ready to sign (untimed).
    fn signer<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Signer + 'a>, OpError>;
    /// Reads the public key `pk` into the library's form, ready to verify (untimed). A key
    /// the library refuses is an error.
    fn verifier<'a>(&'a self, pk: &[u8]) -> Result<Box<dyn Verifier + 'a>, OpError>;
}

/// A prepared secret key that signs.
pub trait Signer {
    /// Signs `msg` under the context string `ctx` into `sig` (the descriptor's largest
    /// signature) and returns the signature's length. A non-empty `ctx` on a scheme
    /// without contexts is [`OpError::Unavailable`].
    fn sign(&mut self, sig: &mut [u8], msg: &[u8], ctx: &[u8]) -> Result<usize, OpError>;
}

/// A prepared public key that verifies.
pub trait Verifier {
    /// Whether `sig` is a valid signature of `msg` under `ctx`: `Ok(false)` for any
    /// signature the scheme rejects (malformed ones included), an error only when the
    /// library could not run.
    fn verify(&mut self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<bool, OpError>;
}

/// A hash function: a factory of streaming states.
pub trait Hash: Send + Sync {
    fn descriptor(&self) -> &Descriptor;
    /// A fresh state (init).
    fn start(&self) -> Box<dyn HashState>;
}

/// The running state of one hash computation.
pub trait HashState: Send {
    /// Absorbs `data` (any length, any number of calls).
    fn update(&mut self, data: &[u8]);
    /// Writes the digest into `out` (the descriptor's digest size) and ends the state.
    fn finish(self: Box<Self>, out: &mut [u8]);
    /// An independent copy: updating one never changes the other.
    fn copy(&self) -> Box<dyn HashState>;
}

/// A block cipher implementation (one strategy): a factory of keyed instances. Its
/// descriptor's [`crate::descriptor::CipherInfo`] says what it exposes.
pub trait BlockCipher: Send + Sync {
    fn descriptor(&self) -> &Descriptor;
    /// Expands `key` (untimed; [`KeyedCipher::rekey`] is the timed key schedule).
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn KeyedCipher>, OpError>;
    /// Independent implementations of the same cipher and convention the gate checks this
    /// one against on random keys and blocks (name, implementation).
    fn references(&self) -> Vec<(String, Box<dyn BlockCipher>)> {
        Vec::new()
    }
}

/// A block cipher with expanded round keys.
pub trait KeyedCipher: Send {
    /// Expands a new key into the existing storage: the key schedule.
    fn rekey(&mut self, key: &[u8]) -> Result<(), OpError>;
    /// Encrypts whole blocks in place (ECB), any number of them.
    fn encrypt(&mut self, blocks: &mut [u8]) -> Result<(), OpError>;
    /// XORs `data` with the encryption of the counter blocks `iv`, `iv + 1`, ... (the whole
    /// block one big-endian integer).
    fn ctr(&mut self, iv: &[u8], data: &mut [u8]) -> Result<(), OpError>;
    /// Bytes of the internal state the inner functions work on (0 when none are exposed).
    fn state_bytes(&self) -> usize {
        0
    }
    /// Converts `batch` blocks to the internal state.
    fn load(&self, _blocks: &[u8], _state: &mut [u8]) {}
    /// Converts the internal state back to blocks.
    fn store(&self, _state: &[u8], _blocks: &mut [u8]) {}
    /// Runs inner function `func` ([`crate::descriptor::CIPHER_FUNCTIONS`]) of round
    /// `round` on the internal state.
    fn call(&self, func: &str, _state: &mut [u8], _round: usize) -> Result<(), OpError> {
        Err(OpError::Unavailable(format!("no inner function {func}")))
    }
}

/// An authenticated cipher (AEAD): a factory of keyed instances. Its descriptor's
/// [`crate::descriptor::AeadInfo`] gives the key, nonce and tag sizes.
pub trait Aead: Send + Sync {
    fn descriptor(&self) -> &Descriptor;
    /// Expands `key` (untimed: a protocol keys once per connection, then seals and opens
    /// many records).
    fn keyed(&self, key: &[u8]) -> Result<Box<dyn AeadKey>, OpError>;
}

/// An AEAD with its key expanded.
pub trait AeadKey: Send {
    /// Encrypts `data` in place under `nonce`, authenticating it and `aad`, and writes the
    /// tag into `tag`.
    fn seal(&mut self, nonce: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), OpError>;
    /// Checks `tag` over `ciphertext` and `aad` and, if it is right, writes the plaintext
    /// into `out` (as long as `ciphertext`). A wrong tag, nonce or length is an error; `out`
    /// is then unspecified. Out of place, so that the same ciphertext can be opened again
    /// and again when measured.
    fn open(&mut self, nonce: &[u8], aad: &[u8], ciphertext: &[u8], tag: &[u8], out: &mut [u8]) -> Result<(), OpError>;
}

/// Counter mode from an ECB `encrypt` of whole blocks, for implementations without their
/// own: 64 counter blocks at a time (the counter is the whole `iv` block, one big-endian
/// integer, wrapping), encrypted together and XORed into `data`.
pub fn ctr_from_ecb(
    encrypt: &mut dyn FnMut(&mut [u8]) -> Result<(), OpError>,
    iv: &[u8],
    data: &mut [u8],
) -> Result<(), OpError> {
    const BLOCKS: usize = 64;
    let bs = iv.len();
    let mut counter = iv.to_vec();
    let mut ks = vec![0u8; BLOCKS * bs];
    for chunk in data.chunks_mut(BLOCKS * bs) {
        let n = chunk.len().div_ceil(bs);
        for b in 0..n {
            ks[b * bs..(b + 1) * bs].copy_from_slice(&counter);
            for x in counter.iter_mut().rev() {
                *x = x.wrapping_add(1);
                if *x != 0 {
                    break;
                }
            }
        }
        encrypt(&mut ks[..n * bs])?;
        for (d, k) in chunk.iter_mut().zip(&ks) {
            *d ^= k;
        }
    }
    Ok(())
}

/// One entry of a provider's catalogue.
pub enum Subject {
    Kem(Box<dyn Kem>),
    Kex(Box<dyn Kex>),
    Hash(Box<dyn Hash>),
    Cipher(Box<dyn BlockCipher>),
    Aead(Box<dyn Aead>),
    Sig(Box<dyn Sig>),
}

impl Subject {
    pub fn descriptor(&self) -> &Descriptor {
        match self {
            Subject::Kem(k) => k.descriptor(),
            Subject::Kex(k) => k.descriptor(),
            Subject::Hash(h) => h.descriptor(),
            Subject::Cipher(c) => c.descriptor(),
            Subject::Aead(a) => a.descriptor(),
            Subject::Sig(s) => s.descriptor(),
        }
    }
}
