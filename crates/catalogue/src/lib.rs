//! The catalogue: what can be measured and how we know it is correct.
//!
//! - [`descriptor`] and [`names`] (from `cryptoscope_model`, re-exported): a subject
//!   (algorithm × provider × implementation) is a descriptor — canonical name, provider and
//!   version, build, claimed security level, byte length of every buffer — plus operations
//!   (liboqs's `OQS_KEM` shape); canonical names, suites, "did you mean".
//! - [`traits`]: the small traits providers implement (`Kem`, `Kex`), bundled per provider
//!   (rustls's `CryptoProvider` shape); block ciphers and AEADs too.
//! - [`rng`]: the process-global randomness every harness-randomised provider draws from,
//!   switchable to a NIST KAT PRNG.
//! - [`gate`]: the correctness gate. A subject is measured only after it passes; the
//!   signatures' in [`sig_gate`]; the Wycheproof files every gate of their algorithm
//!   runs, in [`wycheproof_gate`].
//! - [`external`]: vector files brought by the user (CAVP, NIST KEM KAT, Wycheproof),
//!   recognised, parsed and run against one implementation.
//!
//! This crate never times anything and never prints.

pub mod aead_gate;
pub mod cipher_gate;
pub mod external;
mod fips205_gate;
pub mod gate;
pub mod hash_gate;
pub mod rng;
pub mod sig_gate;
pub mod traits;
pub mod vectors;
pub mod wycheproof_gate;

pub use cryptoscope_model::{descriptor, names};
pub use descriptor::{
    AeadInfo, Availability, CipherInfo, Descriptor, Family, KatPrngKind, KatRef, Operation, Randomness, SigInfo,
    Signing, Sizes,
};
pub use traits::{
    Aead, AeadKey, BlockCipher, Decapsulator, Exchanger, Hash, HashState, Kem, Kex, KeyedCipher, OpError, Probes, Sig,
    Signer, Subject, Verifier,
};
