//! VAES + AVX2, 32 blocks byte-sliced in 256-bit vectors (see [`super::bytesliced`]): the
//! `aesni-avx` technique (`D2` kept in ShiftRows lane order, AESENCLAST and AESDECLAST
//! alternating) with VAES's two AES rounds per instruction. Lane 0 of each vector holds
//! blocks 0..16, lane 1 blocks 16..32; the S-box tables and ShiftRows masks are the
//! 128-bit ones broadcast to both lanes.

use super::aesni_avx::{INV_SHIFT_ROWS, POST_DEC_TABLES, POST_ENC_TABLES, PRE_DEC_TABLES, PRE_ENC_TABLES, SHIFT_ROWS};
use super::bytesliced::byte_sliced;
use std::arch::x86_64::*;

type V = __m256i;
const LANES: usize = 2;
const LABEL: &str = "vaes-avx2";
const FEATURES: &[&str] = &["vaes", "avx2", "aes"];
const ABOUT: &str =
    "32 blocks byte-sliced in 256-bit vectors; S-boxes by VAES AESENCLAST/AESDECLAST between pshufb affine maps";

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn xor(a: V, b: V) -> V {
    _mm256_xor_si256(a, b)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn and(a: V, b: V) -> V {
    _mm256_and_si256(a, b)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn or(a: V, b: V) -> V {
    _mm256_or_si256(a, b)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn unpacklo8(a: V, b: V) -> V {
    _mm256_unpacklo_epi8(a, b)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn unpackhi8(a: V, b: V) -> V {
    _mm256_unpackhi_epi8(a, b)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn shl1(a: V) -> V {
    _mm256_add_epi8(a, a)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn msb(a: V) -> V {
    _mm256_and_si256(_mm256_srli_epi16::<7>(a), _mm256_set1_epi8(1))
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn splat(x: u8) -> V {
    _mm256_set1_epi8(x as i8)
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn first_byte(a: V) -> u8 {
    _mm_cvtsi128_si32(_mm256_castsi256_si128(a)) as u8
}

/// 32 bytes as a vector.
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn load_vec(bytes: &[u8]) -> V {
    let b: &[u8; 32] = bytes[..32].try_into().expect("32 bytes");
    // SAFETY: `b` is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn store_vec(v: V, bytes: &mut [u8]) {
    let b: &mut [u8; 32] = (&mut bytes[..32]).try_into().expect("32 bytes");
    // SAFETY: `b` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), v) }
}

/// 16 bytes in both 128-bit lanes.
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn broadcast16(bytes: &[u8; 16]) -> V {
    // SAFETY: `bytes` is 16 readable bytes; the load is unaligned.
    _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) })
}

/// Blocks `r` (low lane) and `r + 16` (high lane).
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn load_row(blocks: &[u8], r: usize) -> V {
    let lo: &[u8; 16] = blocks[16 * r..16 * r + 16].try_into().expect("16 bytes");
    let hi: &[u8; 16] = blocks[16 * (r + 16)..16 * (r + 17)].try_into().expect("16 bytes");
    // SAFETY: `lo` and `hi` are 16 readable bytes each; the loads are unaligned.
    unsafe { _mm256_loadu2_m128i(hi.as_ptr().cast(), lo.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn store_row(v: V, blocks: &mut [u8], r: usize) {
    let (head, tail) = blocks.split_at_mut(16 * (r + 16));
    let lo: &mut [u8; 16] = (&mut head[16 * r..16 * r + 16]).try_into().expect("16 bytes");
    let hi: &mut [u8; 16] = (&mut tail[..16]).try_into().expect("16 bytes");
    // SAFETY: `lo` and `hi` are 16 writable bytes each; the stores are unaligned.
    unsafe { _mm256_storeu2_m128i(hi.as_mut_ptr().cast(), lo.as_mut_ptr().cast(), v) }
}

/// `(M·x ⊕ c)` on every byte, `M, c` given by nibble tables.
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn affine(x: V, t: &[[u8; 16]; 2]) -> V {
    let mask = _mm256_set1_epi8(0x0f);
    let lo = _mm256_and_si256(x, mask);
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), mask);
    xor(
        _mm256_shuffle_epi8(broadcast16(&t[0]), lo),
        _mm256_shuffle_epi8(broadcast16(&t[1]), hi),
    )
}

/// SBOX`S+1` on every byte, through AESENCLAST (lanes then in ShiftRows order) or, if
/// `DEC`, AESDECLAST (lanes in InvShiftRows order).
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn sbox<const S: usize, const DEC: bool>(x: V) -> V {
    if DEC {
        let u = _mm256_aesdeclast_epi128(affine(x, &PRE_DEC_TABLES[S]), _mm256_setzero_si256());
        affine(u, &POST_DEC_TABLES[S])
    } else {
        let u = _mm256_aesenclast_epi128(affine(x, &PRE_ENC_TABLES[S]), _mm256_setzero_si256());
        affine(u, &POST_ENC_TABLES[S])
    }
}

/// `D2`'s vectors from natural to ShiftRows lane order.
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn permute_d2(v: V) -> V {
    _mm256_shuffle_epi8(v, broadcast16(&SHIFT_ROWS))
}

/// `D2`'s vectors back to natural lane order.
#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn unpermute_d2(v: V) -> V {
    _mm256_shuffle_epi8(v, broadcast16(&INV_SHIFT_ROWS))
}

#[inline]
#[target_feature(enable = "vaes,avx2,aes")]
fn xor3(a: V, b: V, c: V) -> V {
    xor(xor(a, b), c)
}

byte_sliced!("vaes,avx2,aes");
