//! The fourteen second-round SHA-3 candidates at 256-bit output, as the 2010 Tahoe-LAFS
//! study measured them: each in its round-2 version (several were tweaked for round 3),
//! written here from its round-2 specification and checked against the round-2 KAT files
//! in `vectors/hash/sha3-round2/`.
//!
//! Every candidate is streaming ([`State::update`] any number of times, [`State::copy`],
//! [`State::finish`]); candidates whose design allows it also take a final partial byte
//! ([`State::update_bits`]), as the NIST SHA-3 API's bit lengths require.
//!
//! On x86-64 most candidates also have vector paths (SSE2, AVX2, AVX-512, AES-NI, VAES,
//! GFNI or BMI, detected at run time); each such path is unit-tested against the portable
//! code, which is what other CPUs run (the test command also runs the KATs on AArch64
//! under qemu).
//!
//! Each module exposes `candidate()`.

mod aes_round;
pub mod blake;
pub mod bmw;
pub mod cubehash;
pub mod echo;
pub mod fugue;
pub mod groestl;
pub mod hamsi;
pub mod jh;
pub mod keccak;
pub mod luffa;
mod sbox4;
pub mod shabal;
pub mod shavite3;
pub mod simd;
pub mod skein;
#[cfg(test)]
mod testutil;
#[cfg(target_arch = "x86_64")]
mod v128;

/// A bit-level input the candidate cannot take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitsUnsupported;

/// One candidate.
pub trait Candidate: Send + Sync {
    /// Catalogue name, e.g. "BLAKE-256-r2".
    fn name(&self) -> &'static str;
    /// The exact version implemented, e.g. "BLAKE-256 round 2 (10 rounds)".
    fn label(&self) -> &'static str;
    /// Directory of its KAT files under `vectors/hash/sha3-round2/`.
    fn kat_dir(&self) -> &'static str;
    /// Bytes per compression call (the block or rate), for the catalogue.
    fn block_bytes(&self) -> usize;
    /// The implementation this CPU runs, e.g. "vaes-avx512-gfni", "sse2" or "portable"
    /// (the code the candidate's states choose at run time; recorded with every figure).
    fn path(&self) -> &'static str {
        "portable"
    }
    /// A fresh state (init).
    fn start(&self) -> Box<dyn State>;
}

/// The running state of one hash computation.
pub trait State: Send {
    /// Absorbs whole bytes (any length, any number of calls).
    fn update(&mut self, data: &[u8]);
    /// Absorbs the `bits` (1..=7) most significant bits of `last`, the end of a message
    /// whose length is not whole bytes (the NIST API's convention). Only `finish` may
    /// follow.
    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), BitsUnsupported> {
        let _ = (last, bits);
        Err(BitsUnsupported)
    }
    /// Writes the 32-byte digest and ends the state.
    fn finish(self: Box<Self>, out: &mut [u8; 32]);
    /// An independent copy.
    fn copy(&self) -> Box<dyn State>;
}

/// Every candidate written so far, in the study's order.
pub fn candidates() -> Vec<Box<dyn Candidate>> {
    [
        blake::candidate(),
        bmw::candidate(),
        cubehash::candidate(),
        echo::candidate(),
        fugue::candidate(),
        groestl::candidate(),
        hamsi::candidate(),
        jh::candidate(),
        keccak::candidate(),
        luffa::candidate(),
        shabal::candidate(),
        shavite3::candidate(),
        simd::candidate(),
        skein::candidate(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The KAT directories of all fourteen, for reporting which are still missing.
pub const ALL_KAT_DIRS: [&str; 14] = [
    "blake", "bmw", "cubehash", "echo", "fugue", "groestl", "hamsi", "jh", "keccak", "luffa", "shabal", "shavite3",
    "simd", "skein",
];
