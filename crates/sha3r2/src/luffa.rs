//! Luffa-256, round-2 version (Luffa v2), written from the Luffa v2 specification
//! (Watanabe, Hatano, Yamada, Kaneko, "Hash Function Luffa: Specification", Ver. 2.0,
//! Hitachi, 2009).
//!
//! Three 256-bit chains, each a state of eight big-endian 32-bit words; 256-bit message
//! blocks. A round is the message injection `MI` (a mixing in GF(2^32)^8 by powers of 2),
//! the tweak (the last four words of chain `j` rotated left by `j`) and the
//! sub-permutations `Q_j` of eight steps (SubCrumb on words (0,1,2,3) and (5,6,7,4),
//! MixWord, AddConstant). Padding is a 1 bit and zeros to a whole block; the version-2
//! finalization always runs one blank round (an all-zero block) and outputs the XOR of the
//! three chains. The step constants are generated at compile time by the specification's
//! LFSR from its start values.

/// Block size in bytes.
const BLOCK: usize = 32;

/// Start values of the constant generators of `Q_0`, `Q_1`, `Q_2` (specification,
/// section 3.4 / the initial values `c_j^(0)`).
const CNS: [[u32; 2]; 3] = [
    [0x181c_ca53, 0x380c_de06],
    [0x5b6f_0876, 0xf16f_8594],
    [0x7e10_6ce9, 0x3897_9cb0],
];

/// Initial chaining values `V_0`, `V_1`, `V_2` (specification, section 3.3).
const IV: [[u32; 8]; 3] = [
    [
        0x6d25_1e69,
        0x44b0_51e0,
        0x4eaa_6fb4,
        0xdbf7_8465,
        0x6e29_2011,
        0x9015_2df4,
        0xee05_8139,
        0xdef6_10bb,
    ],
    [
        0xc3b4_4b95,
        0xd9d2_f256,
        0x70ee_e9a0,
        0xde09_9fa3,
        0x5d9b_0557,
        0x8fc9_44b3,
        0xcf1c_cf0e,
        0x746c_d581,
    ],
    [
        0xf7ef_c89d,
        0x5dba_5781,
        0x0401_6ce5,
        0xad65_9c05,
        0x0306_194f,
        0x666d_1836,
        0x24aa_230a,
        0x8b26_4ae7,
    ],
];

/// One clock of the 64-bit constant LFSR (`c0` the high word), then the exchange of the
/// two words the generator performs between its two outputs per step.
const fn lfsr(c: [u32; 2]) -> [u32; 2] {
    let (hi, lo) = if c[0] >> 31 == 1 {
        ((c[0] << 1) ^ (c[1] >> 31) ^ 0xc4d6_496c, (c[1] << 1) ^ 0x55c6_1c8d)
    } else {
        ((c[0] << 1) ^ (c[1] >> 31), c[1] << 1)
    };
    // Output `hi`; the register continues as (lo, hi).
    [lo, hi]
}

/// The step constants `(c_0, c_4)` of each sub-permutation, the same for every round.
const RC: [[[u32; 2]; 8]; 3] = {
    let mut out = [[[0u32; 2]; 8]; 3];
    let mut j = 0;
    while j < 3 {
        let mut c = CNS[j];
        let mut s = 0;
        while s < 8 {
            c = lfsr(c);
            out[j][s][0] = c[1];
            c = lfsr(c);
            out[j][s][1] = c[1];
            s += 1;
        }
        j += 1;
    }
    out
};

/// Multiplication by 2 in GF(2^32)^8 (word `i` the coefficient of `x^i`, reduction by
/// `x^8 + x^4 + x^3 + x + 1`).
#[inline(always)]
fn mult2(a: &[u32; 8]) -> [u32; 8] {
    let t = a[7];
    [t, a[0] ^ t, a[1], a[2] ^ t, a[3] ^ t, a[4], a[5], a[6]]
}

/// Luffa's 4-bit S-box (specification, SubCrumb).
const SBOX: [u8; 16] = [13, 14, 0, 1, 5, 10, 7, 6, 11, 3, 9, 12, 15, 8, 2, 4];

/// The S-box's algebraic normal form (`crate::sbox4`), computed from the table.
const ANF: [u16; 4] = crate::sbox4::anf(&SBOX);

/// SubCrumb: the S-box on the bit columns of four words (bit `i` of a crumb in word
/// `a_i`), bit-sliced by evaluating the algebraic normal form: the 16 monomials of the
/// inputs, then each output the XOR of its monomials (`ANF` is constant, so the compiler
/// keeps only the terms that occur).
#[inline(always)]
fn sub_crumb(a0: &mut u32, a1: &mut u32, a2: &mut u32, a3: &mut u32) {
    [*a0, *a1, *a2, *a3] = sub_crumb_any([*a0, *a1, *a2, *a3], u32::MAX, 0);
}

/// SubCrumb on any word type with AND and XOR (`ones` the all-one word, `zero` the
/// all-zero one): the same ANF evaluation serves the scalar words and the vectors.
#[inline(always)]
fn sub_crumb_any<T>(x: [T; 4], ones: T, zero: T) -> [T; 4]
where
    T: Copy + core::ops::BitAnd<Output = T> + core::ops::BitXor<Output = T>,
{
    crate::sbox4::eval(x, &ANF, ones, zero)
}

/// MixWord on a pair of words.
#[inline(always)]
fn mix_word(u: &mut u32, v: &mut u32) {
    *v ^= *u;
    *u = u.rotate_left(2) ^ *v;
    *v = v.rotate_left(14) ^ *u;
    *u = u.rotate_left(10) ^ *v;
    *v = v.rotate_left(1);
}

/// The sub-permutation `Q_j`.
#[inline(always)]
fn q(a: &mut [u32; 8], rc: &[[u32; 2]; 8]) {
    let [mut a0, mut a1, mut a2, mut a3, mut a4, mut a5, mut a6, mut a7] = *a;
    for c in rc {
        sub_crumb(&mut a0, &mut a1, &mut a2, &mut a3);
        sub_crumb(&mut a5, &mut a6, &mut a7, &mut a4);
        mix_word(&mut a0, &mut a4);
        mix_word(&mut a1, &mut a5);
        mix_word(&mut a2, &mut a6);
        mix_word(&mut a3, &mut a7);
        a0 ^= c[0];
        a4 ^= c[1];
    }
    *a = [a0, a1, a2, a3, a4, a5, a6, a7];
}

struct Luffa256;

/// Luffa-256 (v2, round 2).
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Luffa256))
}

/// The implementation this CPU runs (as `blocks` chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if x86::has_avx512() {
        "avx512vl"
    } else {
        "sse2"
    }
}

/// The implementation this CPU runs: the portable code.
#[cfg(not(target_arch = "x86_64"))]
fn path_name() -> &'static str {
    "portable"
}

impl crate::Candidate for Luffa256 {
    fn name(&self) -> &'static str {
        "Luffa-256-r2"
    }
    fn label(&self) -> &'static str {
        "Luffa-256 round 2 (v2)"
    }
    fn kat_dir(&self) -> &'static str {
        "luffa"
    }
    fn block_bytes(&self) -> usize {
        BLOCK
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            v: IV,
            buf: [0; BLOCK],
            len: 0,
            padded: false,
        })
    }
}

#[derive(Clone)]
struct State {
    v: [[u32; 8]; 3],
    buf: [u8; BLOCK],
    len: usize,
    /// Whether `update_bits` already placed the padding bit.
    padded: bool,
}

/// One portable round: message injection, tweak, the three sub-permutations.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn round(v: &mut [[u32; 8]; 3], m: &[u32; 8]) {
    let mut t = [0u32; 8];
    for i in 0..8 {
        t[i] = v[0][i] ^ v[1][i] ^ v[2][i];
    }
    let t = mult2(&t);
    let m1 = mult2(m);
    let m2 = mult2(&m1);
    for i in 0..8 {
        v[0][i] ^= t[i] ^ m[i];
        v[1][i] ^= t[i] ^ m1[i];
        v[2][i] ^= t[i] ^ m2[i];
    }
    for (j, chain) in v.iter_mut().enumerate() {
        for w in &mut chain[4..] {
            *w = w.rotate_left(j as u32);
        }
        q(chain, &RC[j]);
    }
}

/// The block's eight big-endian words.
#[inline(always)]
fn words(block: &[u8]) -> [u32; 8] {
    core::array::from_fn(|i| u32::from_be_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes")))
}

/// Portable rounds over whole 32-byte blocks.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn blocks_portable(v: &mut [[u32; 8]; 3], data: &[u8]) {
    for blk in data.chunks_exact(BLOCK) {
        round(v, &words(blk));
    }
}

/// Rounds over the whole 32-byte blocks of `data` (its length a multiple of 32): the
/// vector version on x86-64 (with AVX-512VL where the CPU has it, else SSE2), the
/// portable one elsewhere.
fn blocks(v: &mut [[u32; 8]; 3], data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx512() {
            // SAFETY: the CPU has AVX-512F and AVX-512VL, the features this function needs.
            unsafe { x86::blocks_avx512(v, data) };
        } else {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { x86::blocks_sse2(v, data) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    blocks_portable(v, data);
}

/// The vector version. The three chains run side by side: vector `x[i]` holds word `i` of
/// chains 0, 1 and 2 in lanes 0, 1, 2 (lane 3 is unused), so the three sub-permutations
/// (identical but for their constants) become one sequence of vector operations, SubCrumb
/// and MixWord exactly as in the scalar code. The message injection XORs lanes 0..3
/// together with two shuffles (broadcasting the sum of the chains to every lane), the
/// multiplications by 2 are renamings of vectors, the message words enter as
/// `(M, 2M, 4M)` across the lanes, and the tweak's per-chain rotation by 0, 1, 2 picks each
/// lane from the matching rotation.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{mult2, sub_crumb_any, words, BLOCK, RC};
    use core::arch::x86_64::*;

    /// Whether the CPU has AVX-512F and AVX-512VL (the detection is cached by `std`).
    #[inline]
    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
    }

    /// A vector with the bit operations SubCrumb needs.
    use crate::v128::V;

    /// Lanes (chain 0, chain 1, chain 2, 0).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn lanes(a: u32, b: u32, c: u32) -> __m128i {
        _mm_set_epi32(0, c as i32, b as i32, a as i32)
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn sub_crumb(a0: &mut __m128i, a1: &mut __m128i, a2: &mut __m128i, a3: &mut __m128i) {
        let ones = V(_mm_set1_epi32(-1));
        let zero = V(_mm_setzero_si128());
        let [b0, b1, b2, b3] = sub_crumb_any([V(*a0), V(*a1), V(*a2), V(*a3)], ones, zero);
        [*a0, *a1, *a2, *a3] = [b0.0, b1.0, b2.0, b3.0];
    }

    /// The rounds, written once over a rotate-left macro `$rotl!(x, n)`.
    macro_rules! blocks_body {
        ($v:ident, $data:ident, $rotl:ident) => {{
            let v = $v;
            let mut x: [__m128i; 8] = [_mm_setzero_si128(); 8];
            for i in 0..8 {
                x[i] = lanes(v[0][i], v[1][i], v[2][i]);
            }
            let mut rc = [[_mm_setzero_si128(); 2]; 8];
            for s in 0..8 {
                rc[s][0] = lanes(RC[0][s][0], RC[1][s][0], RC[2][s][0]);
                rc[s][1] = lanes(RC[0][s][1], RC[1][s][1], RC[2][s][1]);
            }
            let chains = lanes(u32::MAX, u32::MAX, u32::MAX);
            let (sel0, sel1, sel2) = (
                _mm_set_epi32(-1, 0, 0, -1),
                _mm_set_epi32(0, 0, -1, 0),
                _mm_set_epi32(0, -1, 0, 0),
            );
            for blk in $data.chunks_exact(BLOCK) {
                let m = words(blk);
                let m1 = mult2(&m);
                let m2 = mult2(&m1);
                // MI: the XOR of the three chains, in every lane.
                let mut t = [_mm_setzero_si128(); 8];
                for i in 0..8 {
                    let a = _mm_and_si128(x[i], chains);
                    let b = _mm_xor_si128(a, _mm_shuffle_epi32::<0x4E>(a));
                    t[i] = _mm_xor_si128(b, _mm_shuffle_epi32::<0xB1>(b));
                }
                let t7 = t[7];
                let t = [
                    t7,
                    _mm_xor_si128(t[0], t7),
                    t[1],
                    _mm_xor_si128(t[2], t7),
                    _mm_xor_si128(t[3], t7),
                    t[4],
                    t[5],
                    t[6],
                ];
                for i in 0..8 {
                    x[i] = _mm_xor_si128(_mm_xor_si128(x[i], t[i]), lanes(m[i], m1[i], m2[i]));
                }
                // The tweak: words 4..8 of chain j rotated left by j.
                for w in &mut x[4..] {
                    let r1 = $rotl!(*w, 1);
                    let r2 = $rotl!(*w, 2);
                    *w = _mm_or_si128(
                        _mm_and_si128(*w, sel0),
                        _mm_or_si128(_mm_and_si128(r1, sel1), _mm_and_si128(r2, sel2)),
                    );
                }
                let [mut a0, mut a1, mut a2, mut a3, mut a4, mut a5, mut a6, mut a7] = x;
                macro_rules! mix_word {
                    ($u:ident, $w:ident) => {
                        $w = _mm_xor_si128($w, $u);
                        $u = _mm_xor_si128($rotl!($u, 2), $w);
                        $w = _mm_xor_si128($rotl!($w, 14), $u);
                        $u = _mm_xor_si128($rotl!($u, 10), $w);
                        $w = $rotl!($w, 1);
                    };
                }
                for c in &rc {
                    sub_crumb(&mut a0, &mut a1, &mut a2, &mut a3);
                    sub_crumb(&mut a5, &mut a6, &mut a7, &mut a4);
                    mix_word!(a0, a4);
                    mix_word!(a1, a5);
                    mix_word!(a2, a6);
                    mix_word!(a3, a7);
                    a0 = _mm_xor_si128(a0, c[0]);
                    a4 = _mm_xor_si128(a4, c[1]);
                }
                x = [a0, a1, a2, a3, a4, a5, a6, a7];
            }
            let mut out = [[0u32; 4]; 8];
            for i in 0..8 {
                // SAFETY: `out[i]` is 16 bytes, the size of the unaligned store.
                unsafe { _mm_storeu_si128(out[i].as_mut_ptr().cast(), x[i]) };
                v[0][i] = out[i][0];
                v[1][i] = out[i][1];
                v[2][i] = out[i][2];
            }
        }};
    }

    /// Rotate left by a constant with two shifts (SSE2).
    macro_rules! rotl_sse2 {
        ($x:expr, $n:literal) => {{
            let x = $x;
            _mm_or_si128(_mm_slli_epi32::<$n>(x), _mm_srli_epi32::<{ 32 - $n }>(x))
        }};
    }

    /// Rotate left by a constant with the AVX-512VL `vprold`.
    macro_rules! rotl_avx512 {
        ($x:expr, $n:literal) => {
            _mm_rol_epi32::<$n>($x)
        };
    }

    /// Luffa-256 rounds over whole blocks with SSE2 (the x86-64 baseline).
    #[target_feature(enable = "sse2")]
    pub(super) fn blocks_sse2(v: &mut [[u32; 8]; 3], data: &[u8]) {
        blocks_body!(v, data, rotl_sse2)
    }

    /// Luffa-256 rounds over whole blocks with AVX-512VL rotates (and the three-input
    /// logic instructions the compiler forms from SubCrumb).
    ///
    /// # Safety
    /// Needs AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn blocks_avx512(v: &mut [[u32; 8]; 3], data: &[u8]) {
        blocks_body!(v, data, rotl_avx512)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Both vector versions agree with the portable rounds on pseudo-random chaining
        /// values and messages of several blocks.
        #[test]
        fn vector_matches_portable() {
            let mut next = crate::testutil::rng(0x0123_4567_89AB_CDEFu64);
            for n in 0..40 {
                let v: [[u32; 8]; 3] = core::array::from_fn(|_| core::array::from_fn(|_| next() as u32));
                let data: Vec<u8> = (0..BLOCK * (n % 5)).map(|_| next() as u8).collect();
                let mut want = v;
                super::super::blocks_portable(&mut want, &data);
                let mut got = v;
                // SAFETY: SSE2 is part of the x86-64 baseline.
                unsafe { blocks_sse2(&mut got, &data) };
                assert_eq!(got, want);
                if has_avx512() {
                    let mut got = v;
                    // SAFETY: the CPU has AVX-512F and AVX-512VL.
                    unsafe { blocks_avx512(&mut got, &data) };
                    assert_eq!(got, want);
                }
            }
        }
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (BLOCK - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < BLOCK {
                return;
            }
            let blk = self.buf;
            blocks(&mut self.v, &blk);
            self.len = 0;
        }
        let whole = data.len() - data.len() % BLOCK;
        blocks(&mut self.v, &data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }
    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        self.buf[self.len] = (last & (0xFFu8 << (8 - bits))) | (0x80 >> bits);
        self.len += 1;
        self.padded = true;
        Ok(())
    }
    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if !self.padded {
            self.buf[self.len] = 0x80;
            self.len += 1;
        }
        self.buf[self.len..].fill(0);
        // The last block, then the blank round (an all-zero block).
        let mut two = [0u8; 2 * BLOCK];
        two[..BLOCK].copy_from_slice(&self.buf);
        blocks(&mut self.v, &two);
        for (i, o) in out.chunks_exact_mut(4).enumerate() {
            o.copy_from_slice(&(self.v[0][i] ^ self.v[1][i] ^ self.v[2][i]).to_be_bytes());
        }
    }
    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SubCrumb agrees with the specification's S-box, bit `i` of an input crumb taken
    /// from word `a_i`.
    #[test]
    fn sub_crumb_matches_sbox() {
        // The specification's table, written out again here so the test does not rely on
        // the module's copy.
        const S: [u32; 16] = [13, 14, 0, 1, 5, 10, 7, 6, 11, 3, 9, 12, 15, 8, 2, 4];
        for (x, &sx) in S.iter().enumerate() {
            let bit = |i: u32| if (x as u32) >> i & 1 == 1 { u32::MAX } else { 0 };
            let (mut a0, mut a1, mut a2, mut a3) = (bit(0), bit(1), bit(2), bit(3));
            sub_crumb(&mut a0, &mut a1, &mut a2, &mut a3);
            let y = (a0 & 1) | (a1 & 1) << 1 | (a2 & 1) << 2 | (a3 & 1) << 3;
            assert_eq!(y, sx, "S[{x}]");
        }
    }
}
