//! GIFT-64 and GIFT-128 (Banik, Pandey, Peyrin, Sasaki, Sim, Todo: "GIFT: A Small
//! Present", CHES 2017), and GIFTb-128, the same GIFT-128 with the bit ordering of
//! GIFT-COFB, each written once per strategy.
//!
//! Strategies (one file each; `slices` and `vperm` hold code two strategies share):
//! `naive` (the specification transcribed), `table` (fused S-box/permutation tables),
//! `vperm-ssse3`/`vperm-neon` (S-box by byte shuffle), `fixsliced` (one block, constant
//! time, general-purpose registers), `bitsliced-avx2`/`bitsliced-avx512` (many blocks,
//! one per vector lane).
//!
//! Every strategy implements [`Core`]: one cipher in the *original* convention (the state
//! is one big-endian integer, nibble `i` = bits `4i+3..4i`; the key is `k7..k0` as
//! big-endian 16-bit words). `Wrapped`, the [`Keyed`] of every strategy, adds what is
//! common: partial batches (padded), CTR, and for GIFTb-128 the input/output bit
//! transposition (state bit `4i+j` is bit `i` of the big-endian 32-bit word `Sj`).
//!
//! This module also holds what every strategy shares from the specification: the S-box,
//! the round constants and the key schedule.

mod fixsliced;
mod naive;
mod slices;
mod table;
mod vperm;

#[cfg(target_arch = "x86_64")]
mod bitsliced_avx2;
#[cfg(target_arch = "x86_64")]
mod bitsliced_avx512;
#[cfg(target_arch = "aarch64")]
mod vperm_neon;
#[cfg(target_arch = "x86_64")]
mod vperm_ssse3;

use crate::{Func, Info, Keyed, Strategy};
use std::marker::PhantomData;

/// The GIFT S-box GS (specification, Table 1).
pub(crate) const SBOX: [u8; 16] = [1, 10, 4, 12, 6, 15, 3, 9, 2, 13, 11, 7, 5, 0, 8, 14];

/// Rounds of GIFT-64.
pub(crate) const ROUNDS_64: usize = 28;
/// Rounds of GIFT-128.
pub(crate) const ROUNDS_128: usize = 40;

/// The round constants `c5..c0` of rounds 0..40: a 6-bit affine LFSR starting from zero,
/// `(c5,..,c0) <- (c4,..,c0, c5 ^ c4 ^ 1)`, updated before each round.
pub(crate) const RC: [u8; ROUNDS_128] = {
    let mut rc = [0u8; ROUNDS_128];
    let mut c = 0u8;
    let mut r = 0;
    while r < ROUNDS_128 {
        c = ((c << 1) & 0x3f) | (((c >> 5) ^ (c >> 4) ^ 1) & 1);
        rc[r] = c;
        r += 1;
    }
    rc
};

/// The key state `k7..k0` (index `i` holds `ki`) of a big-endian 16-byte key.
pub(crate) fn key_words(key: &[u8]) -> [u16; 8] {
    assert_eq!(key.len(), 16, "GIFT keys are 16 bytes");
    std::array::from_fn(|i| u16::from_be_bytes([key[14 - 2 * i], key[15 - 2 * i]]))
}

/// One key-schedule step: `k7||..||k0 <- (k1 >>> 2)||(k0 >>> 12)||k7||..||k2`.
pub(crate) fn update_key_words(k: &mut [u16; 8]) {
    let (k1, k0) = (k[1], k[0]);
    k.copy_within(2.., 0);
    k[6] = k0.rotate_right(12);
    k[7] = k1.rotate_right(2);
}

/// The key state after one key-schedule step, in the key's byte order (the "updated Key"
/// lines of the designers' traces).
pub fn next_key(key: &[u8; 16]) -> [u8; 16] {
    let mut k = key_words(key);
    update_key_words(&mut k);
    let mut out = [0u8; 16];
    for (i, w) in k.iter().enumerate() {
        out[14 - 2 * i..16 - 2 * i].copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// The GIFT-64 round keys `(U, V) = (k1, k0)` of each round.
pub(crate) fn round_keys_64(key: &[u8]) -> [(u16, u16); ROUNDS_64] {
    let mut k = key_words(key);
    std::array::from_fn(|_| {
        let uv = (k[1], k[0]);
        update_key_words(&mut k);
        uv
    })
}

/// The GIFT-128 round keys `(U, V) = (k5||k4, k1||k0)` of each round.
pub(crate) fn round_keys_128(key: &[u8]) -> [(u32, u32); ROUNDS_128] {
    let mut k = key_words(key);
    std::array::from_fn(|_| {
        let uv = (
            (u32::from(k[5]) << 16) | u32::from(k[4]),
            (u32::from(k[1]) << 16) | u32::from(k[0]),
        );
        update_key_words(&mut k);
        uv
    })
}

/// Bit `i` of `x` to bit `4i`.
fn spread4(x: u16) -> u64 {
    let x = u64::from(x);
    let x = (x | (x << 24)) & 0x0000_00ff_0000_00ff;
    let x = (x | (x << 12)) & 0x000f_000f_000f_000f;
    let x = (x | (x << 6)) & 0x0303_0303_0303_0303;
    (x | (x << 3)) & 0x1111_1111_1111_1111
}

/// The constant part of AddRoundKey: `c5..c0` at bits 23, 19, .., 3 and 1 at bit `n-1`.
fn const_mask(n: u32, c: u8) -> u128 {
    u128::from(spread4(c.into()) << 3) | 1 << (n - 1)
}

/// The GIFT-64 AddRoundKey masks: `u_i` at bit `4i+1`, `v_i` at bit `4i`, and the
/// constant, per round.
pub(crate) fn round_masks_64(key: &[u8]) -> [u64; ROUNDS_64] {
    let uv = round_keys_64(key);
    std::array::from_fn(|r| {
        let (u, v) = uv[r];
        spread4(u) << 1 | spread4(v) | const_mask(64, RC[r]) as u64
    })
}

/// The GIFT-128 AddRoundKey masks: `u_i` at bit `4i+2`, `v_i` at bit `4i+1`, and the
/// constant, per round.
pub(crate) fn round_masks_128(key: &[u8]) -> [u128; ROUNDS_128] {
    let uv = round_keys_128(key);
    std::array::from_fn(|r| {
        let (u, v) = uv[r];
        let spread = |x: u32| u128::from(spread4((x >> 16) as u16)) << 64 | u128::from(spread4(x as u16));
        spread(u) << 2 | spread(v) << 1 | const_mask(128, RC[r])
    })
}

/// A keyed implementation of one cipher, in the original convention, processing
/// [`Core::BATCH`] blocks at a time.
pub(crate) trait Core: Send + Sync + 'static {
    const BLOCK: usize;
    const BATCH: usize;
    const FUNCS: &'static [Func];
    /// Bytes of internal state for `BATCH` blocks.
    const STATE_BYTES: usize;
    /// Whether the core takes GIFTb-128 blocks itself (its representation is that
    /// convention), so that no transposition is needed around it.
    const NATIVE_GIFTB: bool = false;
    fn new(key: &[u8]) -> Self;
    fn rekey(&mut self, key: &[u8]);
    /// Encrypts exactly `BATCH` blocks in place.
    fn encrypt_batch(&self, blocks: &mut [u8]);
    /// Encrypts one block in place (the blocks after the last full batch): cores with
    /// `BATCH` > 1 must provide a one-block path; for the others it is the batch.
    fn encrypt_one(&self, block: &mut [u8]) {
        assert_eq!(Self::BATCH, 1, "batch cores implement encrypt_one");
        self.encrypt_batch(block);
    }
    fn load(&self, blocks: &[u8], state: &mut [u8]);
    fn store(&self, state: &[u8], blocks: &mut [u8]);
    /// Applies `f` (one of `FUNCS`) of round `round`.
    fn call(&self, f: Func, state: &mut [u8], round: usize);
}

/// Byte conventions (see `vectors/block-ciphers/gift.json`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Convention {
    Original,
    /// GIFT-COFB's GIFTb-128 ordering.
    GiftB,
}

/// A strategy: the static description of a [`Core`] in one convention.
pub(crate) struct Strat<C> {
    info: Info,
    conv: Convention,
    core: PhantomData<fn() -> C>,
}

impl<C: Core> Strat<C> {
    /// Boxes a strategy; `cipher`, the block size and the batch come from `C` and `conv`.
    pub(crate) fn boxed(
        conv: Convention,
        strategy: &'static str,
        secret_indexing: bool,
        features: &'static [&'static str],
        about: &'static str,
    ) -> Box<dyn Strategy> {
        let cipher = match (C::BLOCK, conv) {
            (8, Convention::Original) => "GIFT-64",
            (16, Convention::Original) => "GIFT-128",
            (16, Convention::GiftB) => "GIFTb-128",
            _ => unreachable!("no GIFT-64 in the GIFTb convention"),
        };
        let info = Info {
            cipher,
            strategy,
            block_bytes: C::BLOCK,
            key_bytes: 16,
            batch: C::BATCH,
            secret_indexing,
            features,
            about,
        };
        Box::new(Strat::<C> {
            info,
            conv,
            core: PhantomData,
        })
    }
}

impl<C: Core> Strategy for Strat<C> {
    fn info(&self) -> &Info {
        &self.info
    }

    fn available(&self) -> bool {
        crate::cpu_has_all(self.info.features)
    }

    fn schedule(&self, key: &[u8]) -> Box<dyn Keyed> {
        assert!(
            self.available(),
            "{} {} is not available on this CPU",
            self.info.cipher,
            self.info.strategy
        );
        assert_eq!(key.len(), 16, "GIFT keys are 16 bytes");
        let transpose = self.conv == Convention::GiftB && !C::NATIVE_GIFTB;
        Box::new(Wrapped {
            core: C::new(key),
            transpose,
        })
    }
}

/// A keyed core in its convention.
struct Wrapped<C> {
    core: C,
    /// Whether blocks are GIFTb-128 blocks to transpose to and from the core's original
    /// convention.
    transpose: bool,
}

/// Largest batch of any core, in bytes (the size of the buffers batches are copied to).
const MAX_BATCH_BYTES: usize = 1024;

impl<C: Core> Wrapped<C> {
    /// Encrypts whole blocks of the core's convention: full batches, then the rest singly.
    fn encrypt_batches(&self, blocks: &mut [u8]) {
        let mut chunks = blocks.chunks_exact_mut(C::BATCH * C::BLOCK);
        for chunk in &mut chunks {
            self.core.encrypt_batch(chunk);
        }
        for block in chunks.into_remainder().chunks_exact_mut(C::BLOCK) {
            self.core.encrypt_one(block);
        }
    }
}

impl<C: Core> Keyed for Wrapped<C> {
    fn rekey(&mut self, key: &[u8]) {
        assert_eq!(key.len(), 16, "GIFT keys are 16 bytes");
        self.core.rekey(key);
    }

    fn encrypt(&self, blocks: &mut [u8]) {
        assert_eq!(blocks.len() % C::BLOCK, 0, "whole blocks only");
        if self.transpose {
            blocks.chunks_exact_mut(16).for_each(giftb_to_original);
            self.encrypt_batches(blocks);
            blocks.chunks_exact_mut(16).for_each(original_to_giftb);
        } else {
            self.encrypt_batches(blocks);
        }
    }

    /// As [`crate::ctr_generic`], with the counter kept as an integer and 1 KiB of
    /// keystream encrypted at a time.
    fn ctr(&self, iv: &[u8], data: &mut [u8]) {
        const CHUNK: usize = 1024;
        let bs = C::BLOCK;
        assert_eq!(iv.len(), bs, "iv must be one block");
        let mask = u128::MAX >> (128 - 8 * bs);
        let mut counter = iv.iter().fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
        let mut ks = [0u8; CHUNK];
        for chunk in data.chunks_mut(CHUNK) {
            let n = chunk.len().div_ceil(bs);
            for block in ks[..n * bs].chunks_exact_mut(bs) {
                block.copy_from_slice(&counter.to_be_bytes()[16 - bs..]);
                counter = counter.wrapping_add(1) & mask;
            }
            self.encrypt(&mut ks[..n * bs]);
            for (d, k) in chunk.iter_mut().zip(&ks) {
                *d ^= k;
            }
        }
    }

    fn functions(&self) -> &'static [Func] {
        C::FUNCS
    }

    fn state_bytes(&self) -> usize {
        C::STATE_BYTES
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        assert_eq!(blocks.len(), C::BATCH * C::BLOCK);
        assert_eq!(state.len(), C::STATE_BYTES);
        if self.transpose {
            let mut buf = [0u8; MAX_BATCH_BYTES];
            let buf = &mut buf[..blocks.len()];
            buf.copy_from_slice(blocks);
            buf.chunks_exact_mut(16).for_each(giftb_to_original);
            self.core.load(buf, state);
        } else {
            self.core.load(blocks, state);
        }
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        assert_eq!(blocks.len(), C::BATCH * C::BLOCK);
        assert_eq!(state.len(), C::STATE_BYTES);
        self.core.store(state, blocks);
        if self.transpose {
            blocks.chunks_exact_mut(16).for_each(original_to_giftb);
        }
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        assert!(
            C::FUNCS.contains(&f),
            "{} is not an inner function of this strategy",
            f.name()
        );
        assert_eq!(state.len(), C::STATE_BYTES);
        let rounds = if C::BLOCK == 8 { ROUNDS_64 } else { ROUNDS_128 };
        assert!(round < rounds, "round {round} out of range");
        self.core.call(f, state, round);
    }
}

/// GIFTb-128 block to original-convention block: the four big-endian words are the bit
/// slices `Sj` (bit `i` = bit `j` of nibble `i`).
fn giftb_to_original(block: &mut [u8]) {
    let s: [u32; 4] = std::array::from_fn(|j| u32::from_be_bytes(block[4 * j..4 * j + 4].try_into().unwrap()));
    let w = slices::unpack128(s);
    for (k, w) in w.iter().enumerate() {
        block[4 * k..4 * k + 4].copy_from_slice(&w.to_be_bytes());
    }
}

/// Original-convention block to GIFTb-128 block (inverse of [`giftb_to_original`]).
fn original_to_giftb(block: &mut [u8]) {
    let w: [u32; 4] = std::array::from_fn(|k| u32::from_be_bytes(block[4 * k..4 * k + 4].try_into().unwrap()));
    let s = slices::pack128(w);
    for (j, s) in s.iter().enumerate() {
        block[4 * j..4 * j + 4].copy_from_slice(&s.to_be_bytes());
    }
}

/// Every GIFT strategy, available on this CPU or not.
pub fn strategies() -> Vec<Box<dyn Strategy>> {
    let mut v = naive::strategies();
    v.extend(table::strategies());
    #[cfg(target_arch = "x86_64")]
    v.extend(vperm_ssse3::strategies());
    #[cfg(target_arch = "aarch64")]
    v.extend(vperm_neon::strategies());
    v.extend(fixsliced::strategies());
    #[cfg(target_arch = "x86_64")]
    {
        v.extend(bitsliced_avx2::strategies());
        v.extend(bitsliced_avx512::strategies());
    }
    v
}
