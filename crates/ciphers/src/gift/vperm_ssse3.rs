//! `vperm-ssse3`: the vector-permute strategy of [`super::vperm`] with SSSE3 `pshufb`.

use super::vperm::{self, Bytes16, Kernel, BATCH_128, BATCH_64};
use super::{Convention, Strat};
use crate::{Func, Strategy};
use std::arch::x86_64::*;

const ABOUT: &str = "vector permute (SSSE3 pshufb): one nibble per byte, S-box = one pshufb, PermBits = 4 masked pshufb per output vector, constant time";
const FEATURES: &[&str] = &["ssse3"];

pub(super) fn strategies() -> Vec<Box<dyn Strategy>> {
    vec![
        Strat::<vperm::Gift64<Ssse3>>::boxed(Convention::Original, "vperm-ssse3", false, FEATURES, ABOUT),
        Strat::<vperm::Gift128<Ssse3>>::boxed(Convention::Original, "vperm-ssse3", false, FEATURES, ABOUT),
        Strat::<vperm::Gift128<Ssse3>>::boxed(Convention::GiftB, "vperm-ssse3", false, FEATURES, ABOUT),
    ]
}

/// An SSE register. Values exist only inside the `ssse3` kernels below, so every method
/// runs on a CPU with SSSE3.
#[derive(Clone, Copy)]
pub(crate) struct X(__m128i);

impl Bytes16 for X {
    #[inline(always)]
    fn load(b: &[u8; 16]) -> Self {
        // SAFETY: `b` is 16 readable bytes; loadu has no alignment requirement.
        X(unsafe { _mm_loadu_si128(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store(self, b: &mut [u8; 16]) {
        // SAFETY: `b` is 16 writable bytes.
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn lookup(self, idx: Self) -> Self {
        // SAFETY: X values only exist on CPUs with SSSE3 (see the type).
        X(unsafe { _mm_shuffle_epi8(self.0, idx.0) })
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        // SAFETY: SSE2 is part of x86_64.
        X(unsafe { _mm_and_si128(self.0, o.0) })
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        // SAFETY: SSE2 is part of x86_64.
        X(unsafe { _mm_or_si128(self.0, o.0) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: SSE2 is part of x86_64.
        X(unsafe { _mm_xor_si128(self.0, o.0) })
    }
}

/// The SSSE3 kernels.
pub(crate) struct Ssse3;

impl Kernel for Ssse3 {
    #[target_feature(enable = "ssse3")]
    unsafe fn rounds64(state: &mut [u8], rk: &[[[u8; 16]; 1]]) {
        vperm::rounds::<X, 1, BATCH_64>(state, rk)
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn rounds128(state: &mut [u8], rk: &[[[u8; 16]; 2]]) {
        vperm::rounds::<X, 2, BATCH_128>(state, rk)
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn rounds64_one(state: &mut [u8], rk: &[[[u8; 16]; 1]]) {
        vperm::rounds::<X, 1, 1>(state, rk)
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn rounds128_one(state: &mut [u8], rk: &[[[u8; 16]; 2]]) {
        vperm::rounds::<X, 2, 1>(state, rk)
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn call64(f: Func, state: &mut [u8], rk: &[[u8; 16]; 1]) {
        vperm::call::<X, 1, BATCH_64>(f, state, rk)
    }
    #[target_feature(enable = "ssse3")]
    unsafe fn call128(f: Func, state: &mut [u8], rk: &[[u8; 16]; 2]) {
        vperm::call::<X, 2, BATCH_128>(f, state, rk)
    }
}
