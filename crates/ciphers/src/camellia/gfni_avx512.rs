//! GFNI + AVX-512, 64 blocks byte-sliced in 512-bit vectors (see [`super::bytesliced`]):
//! each S-box is two instructions, GF2P8AFFINEQB (the input affine map into the AES field)
//! and GF2P8AFFINEINVQB (inversion then the output affine map), with the maps of
//! [`super::affine`]. Lane `l` of each vector holds blocks `16l..16l + 16`; the 32 vector
//! registers hold the whole state.

use super::affine::{POST_INV, PRE};
use super::bytesliced::byte_sliced;
use std::arch::x86_64::*;

type V = __m512i;
const LANES: usize = 4;
const LABEL: &str = "gfni-avx512";
const FEATURES: &[&str] = &["gfni", "avx512f", "avx512bw"];
const ABOUT: &str = "64 blocks byte-sliced in 512-bit vectors; each S-box is GF2P8AFFINEQB then GF2P8AFFINEINVQB";

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn xor(a: V, b: V) -> V {
    _mm512_xor_si512(a, b)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn and(a: V, b: V) -> V {
    _mm512_and_si512(a, b)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn or(a: V, b: V) -> V {
    _mm512_or_si512(a, b)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn unpacklo8(a: V, b: V) -> V {
    _mm512_unpacklo_epi8(a, b)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn unpackhi8(a: V, b: V) -> V {
    _mm512_unpackhi_epi8(a, b)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn shl1(a: V) -> V {
    _mm512_add_epi8(a, a)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn msb(a: V) -> V {
    _mm512_and_si512(_mm512_srli_epi16::<7>(a), _mm512_set1_epi8(1))
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn splat(x: u8) -> V {
    _mm512_set1_epi8(x as i8)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn first_byte(a: V) -> u8 {
    _mm_cvtsi128_si32(_mm512_castsi512_si128(a)) as u8
}

/// 64 bytes as a vector.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn load_vec(bytes: &[u8]) -> V {
    let b: &[u8; 64] = bytes[..64].try_into().expect("64 bytes");
    // SAFETY: `b` is 64 readable bytes; the load is unaligned.
    unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn store_vec(v: V, bytes: &mut [u8]) {
    let b: &mut [u8; 64] = (&mut bytes[..64]).try_into().expect("64 bytes");
    // SAFETY: `b` is 64 writable bytes; the store is unaligned.
    unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), v) }
}

/// Block `r + 16 * l` of `blocks` as a 128-bit vector.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn block(blocks: &[u8], r: usize, l: usize) -> __m128i {
    let b: &[u8; 16] = blocks[16 * (r + 16 * l)..][..16].try_into().expect("16 bytes");
    // SAFETY: `b` is 16 readable bytes; the load is unaligned.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// Blocks `r`, `r + 16`, `r + 32`, `r + 48` in lanes 0..3.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn load_row(blocks: &[u8], r: usize) -> V {
    let v = _mm512_castsi128_si512(block(blocks, r, 0));
    let v = _mm512_inserti32x4::<1>(v, block(blocks, r, 1));
    let v = _mm512_inserti32x4::<2>(v, block(blocks, r, 2));
    _mm512_inserti32x4::<3>(v, block(blocks, r, 3))
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn store_row(v: V, blocks: &mut [u8], r: usize) {
    let lanes = [
        _mm512_extracti32x4_epi32::<0>(v),
        _mm512_extracti32x4_epi32::<1>(v),
        _mm512_extracti32x4_epi32::<2>(v),
        _mm512_extracti32x4_epi32::<3>(v),
    ];
    for (l, lane) in lanes.into_iter().enumerate() {
        let b: &mut [u8; 16] = (&mut blocks[16 * (r + 16 * l)..][..16]).try_into().expect("16 bytes");
        // SAFETY: `b` is 16 writable bytes; the store is unaligned.
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), lane) }
    }
}

/// SBOX`S+1` on every byte: GF2P8AFFINEQB into the AES field, then GF2P8AFFINEINVQB
/// (inversion, then the output map). Lanes stay in place, so `DEC` changes nothing.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn sbox<const S: usize, const DEC: bool>(x: V) -> V {
    macro_rules! sbox {
        ($s:literal) => {{
            let y = _mm512_gf2p8affine_epi64_epi8::<{ PRE[$s].constant() }>(
                x,
                _mm512_set1_epi64(const { PRE[$s].gfni_matrix() }),
            );
            _mm512_gf2p8affineinv_epi64_epi8::<{ POST_INV[$s].constant() }>(
                y,
                _mm512_set1_epi64(const { POST_INV[$s].gfni_matrix() }),
            )
        }};
    }
    match S {
        0 => sbox!(0),
        1 => sbox!(1),
        2 => sbox!(2),
        _ => sbox!(3),
    }
}

/// `D2`'s lane order is the natural one here.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn permute_d2(v: V) -> V {
    v
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn unpermute_d2(v: V) -> V {
    v
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw")]
fn xor3(a: V, b: V, c: V) -> V {
    _mm512_ternarylogic_epi64::<0x96>(a, b, c)
}

byte_sliced!("gfni,avx512f,avx512bw");
