//! `vperm-neon`: the vector-permute strategy of [`super::vperm`] with NEON `tbl`.

use super::vperm::{self, Bytes16, Kernel, BATCH_128, BATCH_64};
use super::{Convention, Strat};
use crate::{Func, Strategy};
use std::arch::aarch64::*;

const ABOUT: &str = "vector permute (NEON tbl): one nibble per byte, S-box = one tbl, PermBits = 4 masked tbl per output vector, constant time";
const FEATURES: &[&str] = &["neon"];

pub(super) fn strategies() -> Vec<Box<dyn Strategy>> {
    vec![
        Strat::<vperm::Gift64<Neon>>::boxed(Convention::Original, "vperm-neon", false, FEATURES, ABOUT),
        Strat::<vperm::Gift128<Neon>>::boxed(Convention::Original, "vperm-neon", false, FEATURES, ABOUT),
        Strat::<vperm::Gift128<Neon>>::boxed(Convention::GiftB, "vperm-neon", false, FEATURES, ABOUT),
    ]
}

/// A NEON register. Values exist only inside the `neon` kernels below, so every method
/// runs on a CPU with NEON.
#[derive(Clone, Copy)]
pub(crate) struct Q(uint8x16_t);

impl Bytes16 for Q {
    #[inline(always)]
    fn load(b: &[u8; 16]) -> Self {
        // SAFETY: `b` is 16 readable bytes; NEON is present (see the type).
        Q(unsafe { vld1q_u8(b.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, b: &mut [u8; 16]) {
        // SAFETY: `b` is 16 writable bytes; NEON is present.
        unsafe { vst1q_u8(b.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn lookup(self, idx: Self) -> Self {
        // SAFETY: NEON is present. tbl gives 0 for indices >= 16, as pshufb for >= 0x80.
        Q(unsafe { vqtbl1q_u8(self.0, idx.0) })
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        // SAFETY: NEON is present.
        Q(unsafe { vandq_u8(self.0, o.0) })
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        // SAFETY: NEON is present.
        Q(unsafe { vorrq_u8(self.0, o.0) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: NEON is present.
        Q(unsafe { veorq_u8(self.0, o.0) })
    }
}

/// The NEON kernels.
pub(crate) struct Neon;

impl Kernel for Neon {
    #[target_feature(enable = "neon")]
    unsafe fn rounds64(state: &mut [u8], rk: &[[[u8; 16]; 1]]) {
        vperm::rounds::<Q, 1, BATCH_64>(state, rk)
    }
    #[target_feature(enable = "neon")]
    unsafe fn rounds128(state: &mut [u8], rk: &[[[u8; 16]; 2]]) {
        vperm::rounds::<Q, 2, BATCH_128>(state, rk)
    }
    #[target_feature(enable = "neon")]
    unsafe fn rounds64_one(state: &mut [u8], rk: &[[[u8; 16]; 1]]) {
        vperm::rounds::<Q, 1, 1>(state, rk)
    }
    #[target_feature(enable = "neon")]
    unsafe fn rounds128_one(state: &mut [u8], rk: &[[[u8; 16]; 2]]) {
        vperm::rounds::<Q, 2, 1>(state, rk)
    }
    #[target_feature(enable = "neon")]
    unsafe fn call64(f: Func, state: &mut [u8], rk: &[[u8; 16]; 1]) {
        vperm::call::<Q, 1, BATCH_64>(f, state, rk)
    }
    #[target_feature(enable = "neon")]
    unsafe fn call128(f: Func, state: &mut [u8], rk: &[[u8; 16]; 2]) {
        vperm::call::<Q, 2, BATCH_128>(f, state, rk)
    }
}
