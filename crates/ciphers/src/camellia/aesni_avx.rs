//! AES-NI + AVX, 16 blocks byte-sliced in 128-bit vectors (see [`super::bytesliced`]).
//! Each S-box is an affine map (two 16-entry byte shuffles, [`super::affine`]), AESENCLAST
//! or AESDECLAST with a zero key, then another affine map: no secret-indexed memory.
//!
//! AESENCLAST also applies ShiftRows to the 16 blocks' lanes and AESDECLAST InvShiftRows.
//! Rather than undoing that in every round, `D2` is kept with its lanes in ShiftRows order:
//! the even rounds (F of `D1`, natural order) use AESENCLAST, whose output lands in `D2`'s
//! order, and the odd rounds (F of `D2`) AESDECLAST, whose output lands back in `D1`'s.
//! FL, FL⁻¹ and the subkeys act on each half alone and the same on every lane, so only
//! loading and storing reorder `D2`.

use super::affine::{Affine, POST_ENC, POST_INV, PRE, PRE_DEC};
use super::bytesliced::byte_sliced;
use std::arch::x86_64::*;

type V = __m128i;
const LANES: usize = 1;
const LABEL: &str = "aesni-avx";
const FEATURES: &[&str] = &["aes", "avx", "ssse3"];
const ABOUT: &str =
    "16 blocks byte-sliced in 128-bit vectors; S-boxes by AESENCLAST/AESDECLAST between pshufb affine maps";

/// AES's byte shuffle `(r, c) ← (r, c + s·r)` as a PSHUFB mask (byte `r + 4c` of the
/// 4×4 column-major state): `s = 1` is ShiftRows, `s = 3` InvShiftRows.
const fn shift_rows(s: usize) -> [u8; 16] {
    let mut m = [0; 16];
    let mut i = 0;
    while i < 16 {
        let (r, c) = (i % 4, i / 4);
        m[i] = (r + 4 * ((c + s * r) % 4)) as u8;
        i += 1;
    }
    m
}

/// Byte shuffle putting `D2`'s lanes in ShiftRows order.
pub(super) const SHIFT_ROWS: [u8; 16] = shift_rows(1);
/// Its inverse.
pub(super) const INV_SHIFT_ROWS: [u8; 16] = shift_rows(3);

/// Nibble tables of an affine map per S-box (`[S-box][lo/hi]`).
type Tables = [[[u8; 16]; 2]; 4];

const fn tables(maps: [Affine; 4]) -> Tables {
    [
        maps[0].nibble_tables(),
        maps[1].nibble_tables(),
        maps[2].nibble_tables(),
        maps[3].nibble_tables(),
    ]
}

/// Input maps before AESENCLAST.
pub(super) const PRE_ENC_TABLES: Tables = tables(PRE);
/// Output maps after AESENCLAST.
pub(super) const POST_ENC_TABLES: Tables = tables(POST_ENC);
/// Input maps before AESDECLAST.
pub(super) const PRE_DEC_TABLES: Tables = tables(PRE_DEC);
/// Output maps after AESDECLAST.
pub(super) const POST_DEC_TABLES: Tables = tables(POST_INV);

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn xor(a: V, b: V) -> V {
    _mm_xor_si128(a, b)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn and(a: V, b: V) -> V {
    _mm_and_si128(a, b)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn or(a: V, b: V) -> V {
    _mm_or_si128(a, b)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn unpacklo8(a: V, b: V) -> V {
    _mm_unpacklo_epi8(a, b)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn unpackhi8(a: V, b: V) -> V {
    _mm_unpackhi_epi8(a, b)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn shl1(a: V) -> V {
    _mm_add_epi8(a, a)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn msb(a: V) -> V {
    _mm_and_si128(_mm_srli_epi16::<7>(a), _mm_set1_epi8(1))
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn splat(x: u8) -> V {
    _mm_set1_epi8(x as i8)
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn first_byte(a: V) -> u8 {
    _mm_cvtsi128_si32(a) as u8
}

/// 16 bytes as a vector.
#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn load_vec(bytes: &[u8]) -> V {
    let b: &[u8; 16] = bytes[..16].try_into().expect("16 bytes");
    // SAFETY: `b` is 16 readable bytes; the load is unaligned.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn store_vec(v: V, bytes: &mut [u8]) {
    let b: &mut [u8; 16] = (&mut bytes[..16]).try_into().expect("16 bytes");
    // SAFETY: `b` is 16 writable bytes; the store is unaligned.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

/// Block `r`.
#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn load_row(blocks: &[u8], r: usize) -> V {
    load_vec(&blocks[16 * r..])
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn store_row(v: V, blocks: &mut [u8], r: usize) {
    store_vec(v, &mut blocks[16 * r..]);
}

/// `(M·x ⊕ c)` on every byte, `M, c` given by nibble tables.
#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn affine(x: V, t: &[[u8; 16]; 2]) -> V {
    let mask = _mm_set1_epi8(0x0f);
    let lo = _mm_and_si128(x, mask);
    let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), mask);
    xor(
        _mm_shuffle_epi8(load_vec(&t[0]), lo),
        _mm_shuffle_epi8(load_vec(&t[1]), hi),
    )
}

/// SBOX`S+1` on every byte, through AESENCLAST (lanes then in ShiftRows order) or, if
/// `DEC`, AESDECLAST (lanes in InvShiftRows order).
#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn sbox<const S: usize, const DEC: bool>(x: V) -> V {
    if DEC {
        let u = _mm_aesdeclast_si128(affine(x, &PRE_DEC_TABLES[S]), _mm_setzero_si128());
        affine(u, &POST_DEC_TABLES[S])
    } else {
        let u = _mm_aesenclast_si128(affine(x, &PRE_ENC_TABLES[S]), _mm_setzero_si128());
        affine(u, &POST_ENC_TABLES[S])
    }
}

/// `D2`'s vectors from natural to ShiftRows lane order.
#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn permute_d2(v: V) -> V {
    _mm_shuffle_epi8(v, load_vec(&SHIFT_ROWS))
}

/// `D2`'s vectors back to natural lane order.
#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn unpermute_d2(v: V) -> V {
    _mm_shuffle_epi8(v, load_vec(&INV_SHIFT_ROWS))
}

#[inline]
#[target_feature(enable = "aes,avx,ssse3")]
fn xor3(a: V, b: V, c: V) -> V {
    xor(xor(a, b), c)
}

byte_sliced!("aes,avx,ssse3");
