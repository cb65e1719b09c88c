//! cryptoscope's own block cipher implementations: GIFT-64, GIFT-128 (and the GIFTb-128
//! bit ordering of GIFT-COFB) and Camellia-128/256, each written several times, once per
//! implementation *strategy* (naive transcription of the specification, table-driven,
//! vector-permute S-box, bitsliced/fixsliced, AES-instruction byte-sliced), so that the
//! strategies can be compared function by function.
//!
//! Every strategy implements [`Strategy`]; [`Keyed`] is a strategy holding expanded round
//! keys. Besides whole encryptions (one block, ECB, CTR), a strategy exposes its inner
//! functions ([`Func`]: SubCells, PermBits, F, FL, ...) on its own internal state, with
//! [`Keyed::load`]/[`Keyed::store`] converting between that state and blocks, so each
//! function can be tested against the designers' per-round traces and measured alone.
//!
//! The crate has no dependencies; it is pure Rust with `std::arch` intrinsics, selected at
//! run time ([`Strategy::available`]).

pub mod camellia;
mod elsewhere;
pub mod gift;

/// What a strategy is, known without running it.
#[derive(Debug, Clone)]
pub struct Info {
    /// Cipher: "GIFT-64", "GIFT-128", "GIFTb-128", "Camellia-128", "Camellia-256".
    pub cipher: &'static str,
    /// Strategy label: "naive", "table", "vperm-ssse3", "vperm-neon", "fixsliced",
    /// "bitsliced-avx2", "bitsliced-avx512", "aesni-avx", "vaes-avx2", ...
    pub strategy: &'static str,
    pub block_bytes: usize,
    pub key_bytes: usize,
    /// Blocks processed together by [`Keyed::encrypt`]'s fast path and by the inner
    /// functions (1 for single-block strategies).
    pub batch: usize,
    /// Whether the strategy indexes memory (tables) with secret data.
    pub secret_indexing: bool,
    /// CPU features it needs ("ssse3", "avx2", "aes", "vaes", "avx512f", "neon").
    pub features: &'static [&'static str],
    /// One line on how it works.
    pub about: &'static str,
}

/// An inner function a strategy exposes separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    /// GIFT: the S-box layer.
    SubCells,
    /// GIFT: the bit permutation.
    PermBits,
    /// GIFT: round key and round constant addition.
    AddRoundKey,
    /// Camellia: one Feistel round (F-function of one half, XORed into the other).
    Feistel,
    /// Camellia: the FL / FL⁻¹ layer between the 6-round groups.
    Fl,
}

impl Func {
    pub const ALL: [Func; 5] = [
        Func::SubCells,
        Func::PermBits,
        Func::AddRoundKey,
        Func::Feistel,
        Func::Fl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Func::SubCells => "subcells",
            Func::PermBits => "permbits",
            Func::AddRoundKey => "addroundkey",
            Func::Feistel => "feistel",
            Func::Fl => "fl",
        }
    }

    pub fn parse(s: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// One implementation strategy of one cipher.
pub trait Strategy: Send + Sync {
    fn info(&self) -> &Info;
    /// Whether this CPU has the features the strategy needs.
    fn available(&self) -> bool;
    /// Expands `key` (`info().key_bytes` long) into round keys.
    ///
    /// # Panics
    /// If the key has the wrong length, or the strategy is not available.
    fn schedule(&self, key: &[u8]) -> Box<dyn Keyed>;
    /// The one architecture whose build has this strategy's code, when it is not this
    /// build's ([`other_architectures`]); `None` for the strategies compiled here.
    fn built_for(&self) -> Option<&'static str> {
        None
    }
}

/// A strategy with expanded round keys.
pub trait Keyed: Send + Sync {
    /// Re-expands a new key into the existing round-key storage (no allocation): the
    /// key schedule as measured.
    fn rekey(&mut self, key: &[u8]);
    /// Encrypts whole blocks in place, in ECB mode: any number of blocks, `info().batch`
    /// at a time where possible, the rest singly.
    fn encrypt(&self, blocks: &mut [u8]);
    /// Counter mode: XORs `data` (any length) with the encryptions of the counter blocks
    /// `iv`, `iv + 1`, ... (the whole block as one big-endian integer, wrapping).
    fn ctr(&self, iv: &[u8], data: &mut [u8]) {
        ctr_generic(self, iv, data)
    }
    /// The inner functions [`Keyed::call`] accepts.
    fn functions(&self) -> &'static [Func];
    /// Size in bytes of the internal state the inner functions work on (`batch` blocks).
    fn state_bytes(&self) -> usize;
    /// Converts `batch` blocks (the cipher's byte convention) to the internal state.
    fn load(&self, blocks: &[u8], state: &mut [u8]);
    /// Converts the internal state back to `batch` blocks.
    fn store(&self, state: &[u8], blocks: &mut [u8]);
    /// Applies inner function `f` of round `round` (0-based; it selects round keys and
    /// constants where the function uses them) to the internal state.
    ///
    /// # Panics
    /// If `f` is not in [`Keyed::functions`].
    fn call(&self, f: Func, state: &mut [u8], round: usize);
}

/// CTR mode through [`Keyed::encrypt`]: counter blocks are made 64 at a time (a multiple
/// of every batch), encrypted together and XORed into the data.
pub fn ctr_generic<K: Keyed + ?Sized>(k: &K, iv: &[u8], data: &mut [u8]) {
    const BLOCKS: usize = 64;
    let bs = iv.len();
    assert!(bs == 8 || bs == 16, "iv must be one block");
    let mut counter = [0u8; 16];
    counter[..bs].copy_from_slice(iv);
    let mut ks = [0u8; BLOCKS * 16];
    for chunk in data.chunks_mut(BLOCKS * bs) {
        let n = chunk.len().div_ceil(bs);
        for b in 0..n {
            ks[b * bs..(b + 1) * bs].copy_from_slice(&counter[..bs]);
            increment_be(&mut counter[..bs]);
        }
        k.encrypt(&mut ks[..n * bs]);
        for (d, s) in chunk.iter_mut().zip(&ks) {
            *d ^= s;
        }
    }
}

/// Adds one to a big-endian integer, wrapping.
pub fn increment_be(x: &mut [u8]) {
    for b in x.iter_mut().rev() {
        *b = b.wrapping_add(1);
        if *b != 0 {
            break;
        }
    }
}

/// The strategies whose code is for another architecture (x86-64's vector code on AArch64,
/// NEON on x86-64): never available here, listed with what they would need.
pub fn other_architectures() -> Vec<Box<dyn Strategy>> {
    elsewhere::strategies()
}

/// Every strategy of every cipher, available on this CPU or not.
pub fn strategies() -> Vec<Box<dyn Strategy>> {
    let mut v = gift::strategies();
    v.extend(camellia::strategies());
    v
}

/// Whether this CPU has `feature` (names as in [`Info::features`]).
pub fn cpu_has(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "ssse3" => std::arch::is_x86_feature_detected!("ssse3"),
            "sse4.1" => std::arch::is_x86_feature_detected!("sse4.1"),
            "avx" => std::arch::is_x86_feature_detected!("avx"),
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "aes" => std::arch::is_x86_feature_detected!("aes"),
            "vaes" => std::arch::is_x86_feature_detected!("vaes"),
            "gfni" => std::arch::is_x86_feature_detected!("gfni"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
            "avx512vbmi" => std::arch::is_x86_feature_detected!("avx512vbmi"),
            "bmi2" => std::arch::is_x86_feature_detected!("bmi2"),
            _ => false,
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        match feature {
            "neon" => std::arch::is_aarch64_feature_detected!("neon"),
            "aes" => std::arch::is_aarch64_feature_detected!("aes"),
            _ => false,
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = feature;
        false
    }
}

/// Whether this CPU has every feature in `features`.
pub fn cpu_has_all(features: &[&str]) -> bool {
    features.iter().all(|f| cpu_has(f))
}
