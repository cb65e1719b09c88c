//! Blue Midnight Wish BMW-256, the tweaked version submitted for round 2, written from the
//! round-2 specification ("Cryptographic Hash Function BLUE MIDNIGHT WISH", Gligoroski et
//! al., tweaked 2009 document).
//!
//! A double-pipe design: a 512-bit chaining value `H` (sixteen 32-bit words) and 512-bit
//! blocks of sixteen little-endian words. The compression is `f2(M, H, f1(M, H, f0(M, H)))`
//! with the round-2 tweaks (`f0` adds `H`, `AddElement` rotates the message words). Padding
//! is a 1 bit, zeros and the 64-bit little-endian bit length; a final compression keyed with
//! `0xaaaaaaa0 + i` takes the chaining value as its message, and the digest is the last
//! eight words. The IV `0x40414243 + 0x04040404 * i` and the final constant are generated.

/// Block size in bytes.
const BLOCK: usize = 64;

struct Bmw256;

/// BMW-256 (round-2 tweak).
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Bmw256))
}

/// The implementation this CPU runs (as `blocks` chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if x86::has_avx512() {
        "avx512f-bmi2"
    } else if has_bmi2() {
        "bmi2"
    } else {
        "portable"
    }
}

/// The implementation this CPU runs: the portable code.
#[cfg(not(target_arch = "x86_64"))]
fn path_name() -> &'static str {
    "portable"
}

impl crate::Candidate for Bmw256 {
    fn name(&self) -> &'static str {
        "BMW-256-r2"
    }
    fn label(&self) -> &'static str {
        "Blue Midnight Wish BMW-256 round 2 (tweaked version)"
    }
    fn kat_dir(&self) -> &'static str {
        "bmw"
    }
    fn block_bytes(&self) -> usize {
        BLOCK
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            h: core::array::from_fn(|i| 0x4041_4243u32.wrapping_add(0x0404_0404u32.wrapping_mul(i as u32))),
            buf: [0; BLOCK],
            len: 0,
            bits: 0,
        })
    }
}

#[derive(Clone)]
struct State {
    h: [u32; 16],
    buf: [u8; BLOCK],
    len: usize,
    /// Message length in bits so far (whole bytes; plus the final partial byte's bits).
    bits: u64,
}

#[inline(always)]
fn s0(x: u32) -> u32 {
    (x >> 1) ^ (x << 3) ^ x.rotate_left(4) ^ x.rotate_left(19)
}
#[inline(always)]
fn s1(x: u32) -> u32 {
    (x >> 1) ^ (x << 2) ^ x.rotate_left(8) ^ x.rotate_left(23)
}
#[inline(always)]
fn s2(x: u32) -> u32 {
    (x >> 2) ^ (x << 1) ^ x.rotate_left(12) ^ x.rotate_left(25)
}
#[inline(always)]
fn s3(x: u32) -> u32 {
    (x >> 2) ^ (x << 2) ^ x.rotate_left(15) ^ x.rotate_left(29)
}
#[inline(always)]
fn s4(x: u32) -> u32 {
    (x >> 1) ^ x
}
#[inline(always)]
fn s5(x: u32) -> u32 {
    (x >> 2) ^ x
}

/// The message words rotated as `AddElement` uses them: `m[k] <<< (k + 1)`. Computed once
/// per block instead of three times per expanded word.
#[inline(always)]
fn rotated(m: &[u32; 16]) -> [u32; 16] {
    core::array::from_fn(|k| m[k].rotate_left(k as u32 + 1))
}

/// `AddElement(j)` of the round-2 tweak, from the pre-rotated message words `rm`. Always
/// inlined with a constant `j`, so every index and the constant `(j + 16) * 0x05555555`
/// fold into the code.
#[inline(always)]
fn add_element(j: usize, rm: &[u32; 16], h: &[u32; 16]) -> u32 {
    rm[j & 15]
        .wrapping_add(rm[(j + 3) & 15])
        .wrapping_sub(rm[(j + 10) & 15])
        .wrapping_add((j as u32 + 16).wrapping_mul(0x0555_5555))
        ^ h[(j + 7) & 15]
}

/// `expand1` for quadruple word `J` (16 or 17): the s-functions over the sixteen previous
/// words, written out so that each word stays a register value.
#[inline(always)]
fn expand1<const J: usize>(q: &mut [u32; 32], rm: &[u32; 16], h: &[u32; 16]) {
    let b = J - 16;
    let x = s1(q[b])
        .wrapping_add(s2(q[b + 1]))
        .wrapping_add(s3(q[b + 2]))
        .wrapping_add(s0(q[b + 3]))
        .wrapping_add(s1(q[b + 4]))
        .wrapping_add(s2(q[b + 5]))
        .wrapping_add(s3(q[b + 6]))
        .wrapping_add(s0(q[b + 7]))
        .wrapping_add(s1(q[b + 8]))
        .wrapping_add(s2(q[b + 9]))
        .wrapping_add(s3(q[b + 10]))
        .wrapping_add(s0(q[b + 11]))
        .wrapping_add(s1(q[b + 12]))
        .wrapping_add(s2(q[b + 13]))
        .wrapping_add(s3(q[b + 14]))
        .wrapping_add(s0(q[b + 15]));
    q[J] = x.wrapping_add(add_element(b, rm, h));
}

/// `expand2` for quadruple word `J` (18..32), indices constant.
#[inline(always)]
fn expand2<const J: usize>(q: &mut [u32; 32], rm: &[u32; 16], h: &[u32; 16]) {
    let b = J - 16;
    q[J] = q[b]
        .wrapping_add(q[b + 1].rotate_left(3))
        .wrapping_add(q[b + 2])
        .wrapping_add(q[b + 3].rotate_left(7))
        .wrapping_add(q[b + 4])
        .wrapping_add(q[b + 5].rotate_left(13))
        .wrapping_add(q[b + 6])
        .wrapping_add(q[b + 7].rotate_left(16))
        .wrapping_add(q[b + 8])
        .wrapping_add(q[b + 9].rotate_left(19))
        .wrapping_add(q[b + 10])
        .wrapping_add(q[b + 11].rotate_left(23))
        .wrapping_add(q[b + 12])
        .wrapping_add(q[b + 13].rotate_left(27))
        .wrapping_add(s4(q[b + 14]))
        .wrapping_add(s5(q[b + 15]))
        .wrapping_add(add_element(b, rm, h));
}

/// The `expand2` term of position `i` (0..16) in the sum: the word itself, rotated, or
/// `s4`/`s5` for the last two.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn expand2_term(i: usize, x: u32) -> u32 {
    const ROT: [u32; 7] = [3, 7, 13, 16, 19, 23, 27];
    match i {
        14 => s4(x),
        15 => s5(x),
        _ if i.is_multiple_of(2) => x,
        _ => x.rotate_left(ROT[i / 2]),
    }
}

/// `expand2` for word `J` given `pre`, the sum of its terms on words 0..16 plus its
/// `AddElement`: only the terms on words 16..J remain (constant bounds, unrolled).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn expand2_high<const J: usize>(q: &mut [u32; 32], pre: u32) {
    let mut x = pre;
    for i in (32 - J)..16 {
        x = x.wrapping_add(expand2_term(i, q[J - 16 + i]));
    }
    q[J] = x;
}

/// The BMW-256 compression function: returns the new chaining value.
///
/// Everything is written with constant indices (the `f1` expansions through const-generic
/// helpers, `f0`'s s-functions and `f2`'s second half spelled out) so that the compiler
/// turns the arrays `t`, `q` and `o` into plain values and needs no index arithmetic; the
/// rotated message words of `AddElement` are computed once per block.
#[inline(always)]
fn compress(h: &[u32; 16], m: &[u32; 16]) -> [u32; 16] {
    let t: [u32; 16] = core::array::from_fn(|i| m[i] ^ h[i]);
    // f0: the bijective transform of M xor H.
    let w = [
        t[5].wrapping_sub(t[7])
            .wrapping_add(t[10])
            .wrapping_add(t[13])
            .wrapping_add(t[14]),
        t[6].wrapping_sub(t[8])
            .wrapping_add(t[11])
            .wrapping_add(t[14])
            .wrapping_sub(t[15]),
        t[0].wrapping_add(t[7])
            .wrapping_add(t[9])
            .wrapping_sub(t[12])
            .wrapping_add(t[15]),
        t[0].wrapping_sub(t[1])
            .wrapping_add(t[8])
            .wrapping_sub(t[10])
            .wrapping_add(t[13]),
        t[1].wrapping_add(t[2])
            .wrapping_add(t[9])
            .wrapping_sub(t[11])
            .wrapping_sub(t[14]),
        t[3].wrapping_sub(t[2])
            .wrapping_add(t[10])
            .wrapping_sub(t[12])
            .wrapping_add(t[15]),
        t[4].wrapping_sub(t[0])
            .wrapping_sub(t[3])
            .wrapping_sub(t[11])
            .wrapping_add(t[13]),
        t[1].wrapping_sub(t[4])
            .wrapping_sub(t[5])
            .wrapping_sub(t[12])
            .wrapping_sub(t[14]),
        t[2].wrapping_sub(t[5])
            .wrapping_sub(t[6])
            .wrapping_add(t[13])
            .wrapping_sub(t[15]),
        t[0].wrapping_sub(t[3])
            .wrapping_add(t[6])
            .wrapping_sub(t[7])
            .wrapping_add(t[14]),
        t[8].wrapping_sub(t[1])
            .wrapping_sub(t[4])
            .wrapping_sub(t[7])
            .wrapping_add(t[15]),
        t[8].wrapping_sub(t[0])
            .wrapping_sub(t[2])
            .wrapping_sub(t[5])
            .wrapping_add(t[9]),
        t[1].wrapping_add(t[3])
            .wrapping_sub(t[6])
            .wrapping_sub(t[9])
            .wrapping_add(t[10]),
        t[2].wrapping_add(t[4])
            .wrapping_add(t[7])
            .wrapping_add(t[10])
            .wrapping_add(t[11]),
        t[3].wrapping_sub(t[5])
            .wrapping_add(t[8])
            .wrapping_sub(t[11])
            .wrapping_sub(t[12]),
        t[12]
            .wrapping_sub(t[4])
            .wrapping_sub(t[6])
            .wrapping_sub(t[9])
            .wrapping_add(t[13]),
    ];
    let mut q = [0u32; 32];
    // s_{i mod 5} of each f0 word plus the rotated chaining value.
    q[0] = s0(w[0]).wrapping_add(h[1]);
    q[1] = s1(w[1]).wrapping_add(h[2]);
    q[2] = s2(w[2]).wrapping_add(h[3]);
    q[3] = s3(w[3]).wrapping_add(h[4]);
    q[4] = s4(w[4]).wrapping_add(h[5]);
    q[5] = s0(w[5]).wrapping_add(h[6]);
    q[6] = s1(w[6]).wrapping_add(h[7]);
    q[7] = s2(w[7]).wrapping_add(h[8]);
    q[8] = s3(w[8]).wrapping_add(h[9]);
    q[9] = s4(w[9]).wrapping_add(h[10]);
    q[10] = s0(w[10]).wrapping_add(h[11]);
    q[11] = s1(w[11]).wrapping_add(h[12]);
    q[12] = s2(w[12]).wrapping_add(h[13]);
    q[13] = s3(w[13]).wrapping_add(h[14]);
    q[14] = s4(w[14]).wrapping_add(h[15]);
    q[15] = s0(w[15]).wrapping_add(h[0]);
    let rm = rotated(m);
    // f1: two rounds of expand1, fourteen of expand2 (in `back`).
    expand1::<16>(&mut q, &rm, h);
    expand1::<17>(&mut q, &rm, h);
    back(&mut q, h, m, &rm)
}

/// The rest of the compression after `expand1`: the fourteen rounds of `expand2` and
/// `f2`. `q` holds the first eighteen expanded words.
#[inline(always)]
fn back(q: &mut [u32; 32], h: &[u32; 16], m: &[u32; 16], rm: &[u32; 16]) -> [u32; 16] {
    expand2::<18>(q, rm, h);
    expand2::<19>(q, rm, h);
    expand2::<20>(q, rm, h);
    expand2::<21>(q, rm, h);
    expand2::<22>(q, rm, h);
    expand2::<23>(q, rm, h);
    expand2::<24>(q, rm, h);
    expand2::<25>(q, rm, h);
    expand2::<26>(q, rm, h);
    expand2::<27>(q, rm, h);
    expand2::<28>(q, rm, h);
    expand2::<29>(q, rm, h);
    expand2::<30>(q, rm, h);
    expand2::<31>(q, rm, h);
    fold(q, m)
}

/// `f2`, the folding of the expanded words into the new chaining value.
#[inline(always)]
fn fold(q: &[u32; 32], m: &[u32; 16]) -> [u32; 16] {
    let xl = q[16] ^ q[17] ^ q[18] ^ q[19] ^ q[20] ^ q[21] ^ q[22] ^ q[23];
    let xh = xl ^ q[24] ^ q[25] ^ q[26] ^ q[27] ^ q[28] ^ q[29] ^ q[30] ^ q[31];
    let mut o = [0u32; 16];
    o[0] = ((xh << 5) ^ (q[16] >> 5) ^ m[0]).wrapping_add(xl ^ q[24] ^ q[0]);
    o[1] = ((xh >> 7) ^ (q[17] << 8) ^ m[1]).wrapping_add(xl ^ q[25] ^ q[1]);
    o[2] = ((xh >> 5) ^ (q[18] << 5) ^ m[2]).wrapping_add(xl ^ q[26] ^ q[2]);
    o[3] = ((xh >> 1) ^ (q[19] << 5) ^ m[3]).wrapping_add(xl ^ q[27] ^ q[3]);
    o[4] = ((xh >> 3) ^ q[20] ^ m[4]).wrapping_add(xl ^ q[28] ^ q[4]);
    o[5] = ((xh << 6) ^ (q[21] >> 6) ^ m[5]).wrapping_add(xl ^ q[29] ^ q[5]);
    o[6] = ((xh >> 4) ^ (q[22] << 6) ^ m[6]).wrapping_add(xl ^ q[30] ^ q[6]);
    o[7] = ((xh >> 11) ^ (q[23] << 2) ^ m[7]).wrapping_add(xl ^ q[31] ^ q[7]);
    o[8] = o[4]
        .rotate_left(9)
        .wrapping_add(xh ^ q[24] ^ m[8])
        .wrapping_add((xl << 8) ^ q[23] ^ q[8]);
    o[9] = o[5]
        .rotate_left(10)
        .wrapping_add(xh ^ q[25] ^ m[9])
        .wrapping_add((xl >> 6) ^ q[16] ^ q[9]);
    o[10] = o[6]
        .rotate_left(11)
        .wrapping_add(xh ^ q[26] ^ m[10])
        .wrapping_add((xl << 6) ^ q[17] ^ q[10]);
    o[11] = o[7]
        .rotate_left(12)
        .wrapping_add(xh ^ q[27] ^ m[11])
        .wrapping_add((xl << 4) ^ q[18] ^ q[11]);
    o[12] = o[0]
        .rotate_left(13)
        .wrapping_add(xh ^ q[28] ^ m[12])
        .wrapping_add((xl >> 3) ^ q[19] ^ q[12]);
    o[13] = o[1]
        .rotate_left(14)
        .wrapping_add(xh ^ q[29] ^ m[13])
        .wrapping_add((xl >> 4) ^ q[20] ^ q[13]);
    o[14] = o[2]
        .rotate_left(15)
        .wrapping_add(xh ^ q[30] ^ m[14])
        .wrapping_add((xl >> 7) ^ q[21] ^ q[14]);
    o[15] = o[3]
        .rotate_left(16)
        .wrapping_add(xh ^ q[31] ^ m[15])
        .wrapping_add((xl >> 2) ^ q[22] ^ q[15]);
    o
}

/// The lane-wise shift and rotation counts of the s-functions: an s-function is
/// `(x >> c[0]) ^ (x << c[1]) ^ (x <<< c[2]) ^ (x <<< c[3])`; `s4` is `(x >> 1) ^ (x << 0)`
/// with two equal rotations that cancel.
#[cfg(target_arch = "x86_64")]
const S_COUNTS: [[u32; 4]; 5] = [
    [1, 3, 4, 19],
    [1, 2, 8, 23],
    [2, 1, 12, 25],
    [2, 2, 15, 29],
    [1, 0, 0, 0],
];

/// Per-lane counts for lanes using s-function `kind(i)`, as four count vectors.
#[cfg(target_arch = "x86_64")]
const fn lane_counts(first_pass: bool) -> [[u32; 16]; 4] {
    let mut out = [[0u32; 16]; 4];
    let mut i = 0;
    while i < 16 {
        // f0's words use s_{i mod 5}; expand1 uses s1, s2, s3, s0 repeating.
        let kind = if first_pass { i % 5 } else { [1, 2, 3, 0][i % 4] };
        let mut c = 0;
        while c < 4 {
            out[c][i] = S_COUNTS[kind][c];
            c += 1;
        }
        i += 1;
    }
    out
}

/// `f0` as five lane permutations of `M xor H` with signs: output word `i` is the sum over
/// `k` of `+-t[F0_IDX[k][i]]`, negated where `F0_NEG[k][i]` is all ones (the table is the
/// formula of `compress` rearranged by term position).
#[cfg(target_arch = "x86_64")]
const F0_IDX: [[u32; 16]; 5] = [
    [5, 6, 0, 0, 1, 3, 4, 1, 2, 0, 8, 8, 1, 2, 3, 12],
    [7, 8, 7, 1, 2, 2, 0, 4, 5, 3, 1, 0, 3, 4, 5, 4],
    [10, 11, 9, 8, 9, 10, 3, 5, 6, 6, 4, 2, 6, 7, 8, 6],
    [13, 14, 12, 10, 11, 12, 11, 12, 13, 7, 7, 5, 9, 10, 11, 9],
    [14, 15, 15, 13, 14, 15, 13, 14, 15, 14, 15, 9, 10, 11, 12, 13],
];

/// The signs of `F0_IDX`'s terms (all ones: subtracted).
#[cfg(target_arch = "x86_64")]
const F0_NEG: [[u32; 16]; 5] = [
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [
        u32::MAX,
        u32::MAX,
        0,
        u32::MAX,
        0,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        0,
        0,
        u32::MAX,
        u32::MAX,
    ],
    [
        0,
        0,
        0,
        0,
        0,
        0,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        0,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        0,
        0,
        u32::MAX,
    ],
    [
        0,
        0,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        0,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        0,
        u32::MAX,
        u32::MAX,
    ],
    [
        0,
        u32::MAX,
        0,
        0,
        u32::MAX,
        0,
        0,
        u32::MAX,
        u32::MAX,
        0,
        0,
        0,
        0,
        0,
        u32::MAX,
        0,
    ],
];

/// The AVX-512 front of the compression: `f0` and the two `expand1` rounds with all sixteen
/// words in one 512-bit vector. `f0` is five lane permutations (`vpermd`) with conditional
/// negations, the s-functions are variable per-lane shifts and rotations, and each
/// `expand1` word is a horizontal sum. The serial `expand2` and `f2` stay scalar.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{expand2_high, fold, lane_counts, F0_IDX, F0_NEG};
    use core::arch::x86_64::*;

    /// Whether the CPU has AVX-512F and BMI2 (the detection is cached by `std`).
    #[inline]
    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("bmi2")
    }

    #[inline(always)]
    fn load(x: &[u32; 16]) -> __m512i {
        // SAFETY: `x` is 64 bytes, the size of the unaligned load (AVX-512F is enabled in
        // every caller).
        unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
    }

    /// The s-functions lane by lane, counts `c`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn s_lanes(x: __m512i, c: &[[u32; 16]; 4]) -> __m512i {
        let a = _mm512_srlv_epi32(x, load(&c[0]));
        let b = _mm512_sllv_epi32(x, load(&c[1]));
        let r = _mm512_rolv_epi32(x, load(&c[2]));
        let s = _mm512_rolv_epi32(x, load(&c[3]));
        _mm512_xor_si512(_mm512_xor_si512(a, b), _mm512_xor_si512(r, s))
    }

    /// The compression with the vector front.
    #[target_feature(enable = "avx512f,bmi2")]
    #[inline]
    pub(super) fn compress(h: &[u32; 16], m: &[u32; 16]) -> [u32; 16] {
        const FIRST: [[u32; 16]; 4] = lane_counts(true);
        const SECOND: [[u32; 16]; 4] = lane_counts(false);
        let hv = load(h);
        let t = _mm512_xor_si512(load(m), hv);
        let mut w = _mm512_setzero_si512();
        for k in 0..5 {
            let x = _mm512_permutexvar_epi32(load(&F0_IDX[k]), t);
            let neg = load(&F0_NEG[k]);
            w = _mm512_add_epi32(w, _mm512_sub_epi32(_mm512_xor_si512(x, neg), neg));
        }
        // q[i] = s_{i mod 5}(W_i) + H[(i + 1) mod 16].
        let q0 = _mm512_add_epi32(s_lanes(w, &FIRST), _mm512_alignr_epi32::<1>(hv, hv));
        // AddElement(j) in lane j: the rotated message words, shifted by 3 and 10 lanes.
        const ROT1: [u32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
        const K: [u32; 16] = {
            let mut k = [0u32; 16];
            let mut j = 0;
            while j < 16 {
                k[j] = (j as u32 + 16).wrapping_mul(0x0555_5555);
                j += 1;
            }
            k
        };
        let rm = _mm512_rolv_epi32(load(m), load(&ROT1));
        let ae = _mm512_xor_si512(
            _mm512_add_epi32(
                _mm512_sub_epi32(
                    _mm512_add_epi32(rm, _mm512_alignr_epi32::<3>(rm, rm)),
                    _mm512_alignr_epi32::<10>(rm, rm),
                ),
                load(&K),
            ),
            _mm512_alignr_epi32::<7>(hv, hv),
        );
        // The expand2 terms on words 0..16 for word 16 + l in lane l: term i reads word
        // l + i, zero past word 15 (and every term function maps zero to zero).
        let zero = _mm512_setzero_si512();
        macro_rules! term {
            ($i:literal, plain) => {
                _mm512_alignr_epi32::<$i>(zero, q0)
            };
            ($i:literal, $r:literal) => {
                _mm512_rol_epi32::<$r>(_mm512_alignr_epi32::<$i>(zero, q0))
            };
        }
        let even = _mm512_add_epi32(
            _mm512_add_epi32(
                _mm512_add_epi32(q0, term!(2, plain)),
                _mm512_add_epi32(term!(4, plain), term!(6, plain)),
            ),
            _mm512_add_epi32(_mm512_add_epi32(term!(8, plain), term!(10, plain)), term!(12, plain)),
        );
        let odd = _mm512_add_epi32(
            _mm512_add_epi32(
                _mm512_add_epi32(term!(1, 3), term!(3, 7)),
                _mm512_add_epi32(term!(5, 13), term!(7, 16)),
            ),
            _mm512_add_epi32(_mm512_add_epi32(term!(9, 19), term!(11, 23)), term!(13, 27)),
        );
        let x14 = term!(14, plain);
        let x15 = term!(15, plain);
        let s45 = _mm512_add_epi32(
            _mm512_xor_si512(_mm512_srli_epi32::<1>(x14), x14),
            _mm512_xor_si512(_mm512_srli_epi32::<2>(x15), x15),
        );
        let pre = _mm512_add_epi32(_mm512_add_epi32(even, odd), _mm512_add_epi32(s45, ae));
        let mut aes = [0u32; 16];
        let mut pres = [0u32; 16];
        // SAFETY: both arrays are 64 bytes, the size of the unaligned stores.
        unsafe {
            _mm512_storeu_si512(aes.as_mut_ptr().cast(), ae);
            _mm512_storeu_si512(pres.as_mut_ptr().cast(), pre);
        }
        let q16 = (_mm512_reduce_add_epi32(s_lanes(q0, &SECOND)) as u32).wrapping_add(aes[0]);
        // Words 1..17: q0 moved down one lane, q16 in the top lane.
        let q1 = _mm512_alignr_epi32::<1>(_mm512_set1_epi32(q16 as i32), q0);
        let q17 = (_mm512_reduce_add_epi32(s_lanes(q1, &SECOND)) as u32).wrapping_add(aes[1]);
        let mut q = [0u32; 32];
        // SAFETY: `q` has 32 words; the store covers words 0..16.
        unsafe { _mm512_storeu_si512(q.as_mut_ptr().cast(), q0) };
        q[16] = q16;
        q[17] = q17;
        expand2_high::<18>(&mut q, pres[2]);
        expand2_high::<19>(&mut q, pres[3]);
        expand2_high::<20>(&mut q, pres[4]);
        expand2_high::<21>(&mut q, pres[5]);
        expand2_high::<22>(&mut q, pres[6]);
        expand2_high::<23>(&mut q, pres[7]);
        expand2_high::<24>(&mut q, pres[8]);
        expand2_high::<25>(&mut q, pres[9]);
        expand2_high::<26>(&mut q, pres[10]);
        expand2_high::<27>(&mut q, pres[11]);
        expand2_high::<28>(&mut q, pres[12]);
        expand2_high::<29>(&mut q, pres[13]);
        expand2_high::<30>(&mut q, pres[14]);
        expand2_high::<31>(&mut q, pres[15]);
        fold(&q, m)
    }

    /// Compresses whole blocks with the vector front.
    ///
    /// # Safety
    /// Needs AVX-512F and BMI2.
    #[target_feature(enable = "avx512f,bmi2")]
    pub(super) unsafe fn blocks(h: &mut [u32; 16], data: &[u8]) {
        let mut v = *h;
        for blk in data.chunks_exact(super::BLOCK) {
            v = compress(&v, &super::words(blk));
        }
        *h = v;
    }

    #[cfg(test)]
    mod tests {
        /// The vector compression agrees with the portable one on pseudo-random inputs.
        #[test]
        fn vector_matches_portable() {
            if !super::has_avx512() {
                cryptoscope_testkit::skip("this CPU has no AVX-512");
                return;
            }
            let mut rng = crate::testutil::rng(0x2545_F491_4F6C_DD1D);
            let mut next = || rng() as u32;
            for _ in 0..500 {
                let h: [u32; 16] = core::array::from_fn(|_| next());
                let m: [u32; 16] = core::array::from_fn(|_| next());
                // SAFETY: the CPU has AVX-512F and BMI2.
                let got = unsafe { super::compress(&h, &m) };
                assert_eq!(got, super::super::compress(&h, &m));
            }
        }
    }
}

/// The block's sixteen little-endian words (each a single 4-byte load).
#[inline(always)]
fn words(block: &[u8]) -> [u32; 16] {
    let block: &[u8; BLOCK] = block.try_into().expect("64 bytes");
    core::array::from_fn(|i| u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes")))
}

/// Compresses whole 64-byte blocks into `h`, the loop the compiler can specialise.
#[inline(always)]
fn blocks_generic(h: &mut [u32; 16], data: &[u8]) {
    let mut v = *h;
    for blk in data.chunks_exact(BLOCK) {
        v = compress(&v, &words(blk));
    }
    *h = v;
}

/// The same loop compiled with BMI2: its three-operand rotates and shifts (`rorx`, `shlx`,
/// `shrx`) save most of the register copies the s-functions otherwise need.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn blocks_bmi2(h: &mut [u32; 16], data: &[u8]) {
    blocks_generic(h, data);
}

/// Whether the CPU has BMI2 (checked once; `std` caches the answer).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_bmi2() -> bool {
    std::arch::is_x86_feature_detected!("bmi2")
}

/// Compresses the whole blocks of `data` (a multiple of 64 bytes long).
fn blocks(h: &mut [u32; 16], data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if x86::has_avx512() {
        // SAFETY: the CPU has AVX-512F and BMI2, the features `x86::blocks` needs.
        unsafe { x86::blocks(h, data) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if has_bmi2() {
        // SAFETY: the CPU supports BMI2, the only feature `blocks_bmi2` is compiled for.
        unsafe { blocks_bmi2(h, data) };
        return;
    }
    blocks_generic(h, data);
}

impl State {
    fn block(&mut self, block: &[u8]) {
        blocks(&mut self.h, block);
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        self.bits = self.bits.wrapping_add((data.len() as u64) << 3);
        if self.len > 0 {
            let take = (BLOCK - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < BLOCK {
                return;
            }
            let blk = self.buf;
            self.block(&blk);
            self.len = 0;
        }
        let whole = data.len() - data.len() % BLOCK;
        blocks(&mut self.h, &data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }
    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        // The partial byte, its padding bit in place; `finish` sees the odd bit count.
        self.buf[self.len] = (last & (0xFFu8 << (8 - bits))) | (0x80 >> bits);
        self.len += 1;
        self.bits = self.bits.wrapping_add(bits as u64);
        Ok(())
    }
    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if self.bits.is_multiple_of(8) {
            self.buf[self.len] = 0x80;
            self.len += 1;
        }
        if self.len > BLOCK - 8 {
            self.buf[self.len..].fill(0);
            let blk = self.buf;
            self.block(&blk);
            self.len = 0;
        }
        self.buf[self.len..BLOCK - 8].fill(0);
        self.buf[BLOCK - 8..].copy_from_slice(&self.bits.to_le_bytes());
        let blk = self.buf;
        self.block(&blk);
        let fin: [u32; 16] = core::array::from_fn(|i| 0xaaaa_aaa0 + i as u32);
        let mut h = fin;
        let words: [u8; BLOCK] = core::array::from_fn(|i| self.h[i / 4].to_le_bytes()[i % 4]);
        blocks(&mut h, &words);
        for (o, w) in out.chunks_exact_mut(4).zip(&h[8..]) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }
    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
