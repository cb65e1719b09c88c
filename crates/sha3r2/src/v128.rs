//! A 128-bit SSE register with Rust's bit operators, for the candidates whose bit-sliced
//! or word-sliced code is written once over a word type (Hamsi's S-box and L, JH's planes,
//! Luffa's SubCrumb) and instantiated for `u32`/`u128` and for vectors.

use core::arch::x86_64::*;

// The operators need only SSE2, which every x86-64 target enables at compile time; the
// `unsafe` blocks below rely on this check.
const _: () = assert!(cfg!(target_feature = "sse2"));

/// An SSE register.
#[derive(Clone, Copy)]
pub(crate) struct V(pub(crate) __m128i);

impl core::ops::BitAnd for V {
    type Output = V;
    #[inline(always)]
    fn bitand(self, o: V) -> V {
        // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
        V(unsafe { _mm_and_si128(self.0, o.0) })
    }
}

impl core::ops::BitOr for V {
    type Output = V;
    #[inline(always)]
    fn bitor(self, o: V) -> V {
        // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
        V(unsafe { _mm_or_si128(self.0, o.0) })
    }
}

impl core::ops::BitXor for V {
    type Output = V;
    #[inline(always)]
    fn bitxor(self, o: V) -> V {
        // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
        V(unsafe { _mm_xor_si128(self.0, o.0) })
    }
}

impl core::ops::Not for V {
    type Output = V;
    #[inline(always)]
    fn not(self) -> V {
        // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
        V(unsafe { _mm_xor_si128(self.0, _mm_set1_epi32(-1)) })
    }
}
