//! `bitsliced-avx2`: the fixsliced representation of [`super::slices`] with one block per
//! vector lane. GIFT-128: a 32-bit lane per block, two 8-lane vectors per slice (16
//! blocks); GIFT-64: a 16-bit lane per block, two 16-lane vectors per slice (32 blocks).
//! The rounds are the scalar fixsliced code on vectors: bitsliced S-box, per-lane
//! rotations (a byte shuffle where they move whole bytes) and SWAPMOVEs, broadcast round
//! keys. Blocks are gathered into lanes in the vectors (a byte shuffle and a 4x4
//! transpose per four vectors: word `k` of every block into vector `k`) and packed there;
//! GIFTb-128 blocks need no packing.

use super::slices::{
    self, rot_field_masked, Keys128, Keys64, Lane, Pair, Sliced128, Sliced64, Vector, BYTE_ROTATIONS, WORD_ORDER,
    WORD_ORDER_INVERSE,
};
use super::{Convention, Strat};
use crate::{Func, Strategy};
use std::arch::x86_64::*;
use std::ops::{BitAnd, BitOr, BitXor, Not};

const ABOUT128: &str = "fixsliced across AVX2 lanes: 16 blocks, one per 32-bit lane; bitsliced S-box, per-lane rotations (vpshufb for whole bytes) and SWAPMOVEs; no standalone PermBits";
const ABOUT64: &str = "fixsliced across AVX2 lanes: 32 blocks, one per 16-bit lane; bitsliced S-box, per-lane nibble/halfword rotations (vpshufb for whole bytes); no standalone PermBits";
const FEATURES: &[&str] = &["avx2"];

pub(super) fn strategies() -> Vec<Box<dyn Strategy>> {
    vec![
        Strat::<Sliced64<Avx2>>::boxed(Convention::Original, "bitsliced-avx2", false, FEATURES, ABOUT64),
        Strat::<Sliced128<Avx2, false>>::boxed(Convention::Original, "bitsliced-avx2", false, FEATURES, ABOUT128),
        Strat::<Sliced128<Avx2, true>>::boxed(Convention::GiftB, "bitsliced-avx2", false, FEATURES, ABOUT128),
    ]
}

/// An AVX2 register of `B`-bit lanes (16 or 32). Values exist only inside the `avx2`
/// kernels below, so every method runs on a CPU with AVX2.
#[derive(Clone, Copy)]
pub(crate) struct Y<const B: u32>(__m256i);

impl<const B: u32> BitXor for Y<B> {
    type Output = Self;
    #[inline(always)]
    fn bitxor(self, o: Self) -> Self {
        // SAFETY: AVX2 is present (see the type).
        Y(unsafe { _mm256_xor_si256(self.0, o.0) })
    }
}

impl<const B: u32> BitAnd for Y<B> {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, o: Self) -> Self {
        // SAFETY: AVX2 is present.
        Y(unsafe { _mm256_and_si256(self.0, o.0) })
    }
}

impl<const B: u32> BitOr for Y<B> {
    type Output = Self;
    #[inline(always)]
    fn bitor(self, o: Self) -> Self {
        // SAFETY: AVX2 is present.
        Y(unsafe { _mm256_or_si256(self.0, o.0) })
    }
}

impl<const B: u32> Not for Y<B> {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        // SAFETY: AVX2 is present.
        Y(unsafe { _mm256_xor_si256(self.0, _mm256_set1_epi32(-1)) })
    }
}

impl<const B: u32> Y<B> {
    /// A byte shuffle (within 16-byte lanes) by `idx`.
    #[inline(always)]
    fn shuffle(self, idx: &[u8; 16]) -> Self {
        // SAFETY: AVX2 is present; `idx` is 16 readable bytes (a constant after inlining).
        Y(unsafe {
            _mm256_shuffle_epi8(
                self.0,
                _mm256_broadcastsi128_si256(_mm_loadu_si128(idx.as_ptr().cast())),
            )
        })
    }

    /// Transposes the 4x4 matrices of 32-bit elements formed by the same 16-byte lane of
    /// the four vectors (an involution).
    #[inline(always)]
    fn transpose(r: [Self; 4]) -> [Self; 4] {
        // SAFETY: AVX2 is present.
        unsafe {
            let t0 = _mm256_unpacklo_epi32(r[0].0, r[1].0);
            let t1 = _mm256_unpackhi_epi32(r[0].0, r[1].0);
            let t2 = _mm256_unpacklo_epi32(r[2].0, r[3].0);
            let t3 = _mm256_unpackhi_epi32(r[2].0, r[3].0);
            [
                Y(_mm256_unpacklo_epi64(t0, t2)),
                Y(_mm256_unpackhi_epi64(t0, t2)),
                Y(_mm256_unpacklo_epi64(t1, t3)),
                Y(_mm256_unpackhi_epi64(t1, t3)),
            ]
        }
    }

    /// Rotates every `w`-bit field (16 or 32) left by `k`, a multiple of 8: one byte
    /// shuffle.
    #[inline(always)]
    fn rotate_bytes(self, w: u32, k: u32) -> Self {
        self.shuffle(&BYTE_ROTATIONS[(w / 32) as usize][(k / 8) as usize])
    }
}

impl<const B: u32> Lane for Y<B> {
    const BITS: u32 = B;
    #[inline(always)]
    fn splat(x: u32) -> Self {
        // SAFETY: AVX2 is present.
        Y(unsafe {
            if B == 32 {
                _mm256_set1_epi32(x as i32)
            } else {
                _mm256_set1_epi16(x as i16)
            }
        })
    }
    #[inline(always)]
    fn shl(self, n: u32) -> Self {
        // SAFETY: AVX2 is present. `n` is a constant after inlining, which LLVM turns into
        // the immediate form.
        Y(unsafe {
            let n = _mm_cvtsi32_si128(n as i32);
            if B == 32 {
                _mm256_sll_epi32(self.0, n)
            } else {
                _mm256_sll_epi16(self.0, n)
            }
        })
    }
    #[inline(always)]
    fn rotl(self, n: u32) -> Self {
        if n.is_multiple_of(8) {
            self.rotate_bytes(B, n)
        } else {
            self.shl(n) | self.shr(B - n)
        }
    }
    #[inline(always)]
    fn rot_field(self, w: u32, k: u32) -> Self {
        if k.is_multiple_of(8) && w >= 16 {
            self.rotate_bytes(w, k)
        } else {
            rot_field_masked(self, w, k)
        }
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        // SAFETY: as `shl`.
        Y(unsafe {
            let n = _mm_cvtsi32_si128(n as i32);
            if B == 32 {
                _mm256_srl_epi32(self.0, n)
            } else {
                _mm256_srl_epi16(self.0, n)
            }
        })
    }
}

impl<const B: u32> Vector for Y<B> {
    const BYTES: usize = 32;
    #[inline(always)]
    fn from_bytes(b: &[u8]) -> Self {
        assert!(b.len() >= 32);
        // SAFETY: 32 readable bytes; AVX2 is present.
        Y(unsafe { _mm256_loadu_si256(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn to_bytes(self, b: &mut [u8]) {
        assert!(b.len() >= 32);
        // SAFETY: 32 writable bytes; AVX2 is present.
        unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn load_words(blocks: &[u8]) -> [Self; 4] {
        let order = &WORD_ORDER[(B / 32) as usize];
        // No closure here: it would not inherit the kernel's target features.
        Self::transpose([
            Self::from_bytes(blocks).shuffle(order),
            Self::from_bytes(&blocks[32..]).shuffle(order),
            Self::from_bytes(&blocks[64..]).shuffle(order),
            Self::from_bytes(&blocks[96..]).shuffle(order),
        ])
    }
    #[inline(always)]
    fn store_words(w: [Self; 4], blocks: &mut [u8]) {
        let order = &WORD_ORDER_INVERSE[(B / 32) as usize];
        for (i, r) in Self::transpose(w).into_iter().enumerate() {
            r.shuffle(order).to_bytes(&mut blocks[i * 32..]);
        }
    }
}

type W128 = Pair<Y<32>>;
type W64 = Pair<Y<16>>;

/// The AVX2 kernels.
pub(super) struct Avx2;

impl slices::Kernel for Avx2 {
    const BATCH_128: usize = 16;
    const BATCH_64: usize = 32;

    #[target_feature(enable = "avx2")]
    unsafe fn encrypt128(blocks: &mut [u8], keys: &Keys128, giftb: bool) {
        slices::encrypt128::<W128>(blocks, keys, giftb)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn encrypt64(blocks: &mut [u8], keys: &Keys64) {
        slices::encrypt64::<W64>(blocks, keys)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn load(blocks: &[u8], state: &mut [u8], gift64: bool, giftb: bool) {
        if gift64 {
            slices::load_state::<W64>(blocks, state, false)
        } else {
            slices::load_state::<W128>(blocks, state, giftb)
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn store(state: &[u8], blocks: &mut [u8], gift64: bool, giftb: bool) {
        if gift64 {
            slices::store_state::<W64>(state, blocks, false)
        } else {
            slices::store_state::<W128>(state, blocks, giftb)
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn call(f: Func, state: &mut [u8], k: &[u32; 3], gift64: bool) {
        if gift64 {
            slices::call_bytes::<W64>(f, state, k, true)
        } else {
            slices::call_bytes::<W128>(f, state, k, false)
        }
    }
}
