//! SIMD-256, round 2: the tweaked version 1.1 (Leurent, Bouillaguet, Fouque, "SIMD Is a
//! Message Digest", round-2 submission package with the tweak note).
//!
//! The 512-bit state is four Feistel-like lanes of four words (A, B, C, D). A 64-byte
//! block is XORed into the state and expanded by a number-theoretic transform of size 128
//! over Z/257 (root 139; the "X^127" term, and for the last block the "X^125" term, are
//! added), whose outputs are multiplied by 185 or 233, packed by pairs into 16-bit halves
//! of 32 words per round and permuted. Four rounds of eight steps (IF for the first
//! four, MAJ for the others) follow, then a feed-forward of four more steps that take the
//! previous chaining value as message. The round-2 tweak changed the rotation constants
//! and the lane permutations (`j -> j xor k`, k cycling through 1, 2, 3), and hence the
//! IV. Padding: zero bits to the block end, then a block holding the 64-bit little-endian
//! bit length, processed as the final block. The digest is the first 8 state words.
//!
//! Speed: the transform is split into two passes of small transforms (see the comment
//! above [`C1`]) whose loops run over 16 independent lanes, so they vectorise; modular
//! reduction uses `256 = -1 (mod 257)` instead of divisions. On x86-64 the second pass is
//! a radix-2 FFT written with AVX2 intrinsics (when the CPU has AVX2), and the step
//! function keeps each Feistel lane's four words in one SSE register (SSE2, always
//! present on x86-64; compiled also for AVX-512VL, where rotations are one instruction).
//! The path is chosen per call from the CPU's features; other architectures use the
//! portable code, which the tests compare with the vector paths.

/// Modulus of the transform.
const P: i32 = 257;
/// The 128th root of unity used by SIMD-256.
const OMEGA: i32 = 139;

/// `POW[k] = 139^k mod 257`.
const POW: [i32; 128] = {
    let mut t = [0i32; 128];
    let mut x = 1;
    let mut k = 0;
    while k < 128 {
        t[k] = x;
        x = x * OMEGA % P;
        k += 1;
    }
    t
};

/// The transform of `X^127` (`139^(127 i)`, i.e. powers of 98), added for every block,
/// plus that of `X^125` (powers of 58) for the final block.
const fn offsets(last: bool) -> [i32; 128] {
    let mut t = [0i32; 128];
    let mut i = 0;
    while i < 128 {
        let mut v = POW[(127 * i) % 128];
        if last {
            v += POW[(125 * i) % 128];
        }
        t[i] = v % P;
        i += 1;
    }
    t
}
const YOFF_N: [i32; 128] = offsets(false);
const YOFF_F: [i32; 128] = offsets(true);

// The transform, `y_i = sum_{j<64} m_j w^(i j)` for `i < 128` (`w = 139`), is computed in
// two passes of eight-point transforms (a "four-step" split of 128 = 16 x 8). Write
// `j = b + 8 a` and `i = k + 16 d` with `a, b, d < 8` and `k < 16`. Since `w^128 = 1`,
//
//   w^(i j) = w^(16 d b) * w^(k b) * w^(8 k a),
//
// so with `F_b(k) = sum_a m_(b + 8 a) w^(8 k a)` (eight inputs per `b`, evaluated at 16
// points `k`) and `G_b(k) = w^(k b) F_b(k)` (the "twiddle" factors), the output is
// `y_(k + 16 d) = sum_b w^(16 d b) G_b(k)`. Both passes are small matrix products whose
// innermost loop runs over the 16 values of `k` with a scalar coefficient: 16 independent
// `i32` lanes, which the compiler turns into vector multiply-adds (two AVX2 registers or
// four SSE2 ones), and whose results land directly in natural order `16 d + k`.
//
// Values are reduced with `x mod 257 = (x mod 256) - floor(x / 256)` (as 256 = -1): two
// such folds take any `0 <= x < 2^20` into `0..=271` without a division, and every sum
// here stays below 2^20 (at most eight products of a value below 272 by one below 257).

/// Stage-1 coefficients `C1[a][k] = w^(8 a k)`.
const C1: [[i32; 16]; 8] = {
    let mut t = [[0i32; 16]; 8];
    let mut a = 0;
    while a < 8 {
        let mut k = 0;
        while k < 16 {
            t[a][k] = POW[(8 * a * k) % 128];
            k += 1;
        }
        a += 1;
    }
    t
};

/// Twiddles `TW[b][k] = w^(b k)`.
const TW: [[i32; 16]; 8] = {
    let mut t = [[0i32; 16]; 8];
    let mut b = 0;
    while b < 8 {
        let mut k = 0;
        while k < 16 {
            t[b][k] = POW[b * k];
            k += 1;
        }
        b += 1;
    }
    t
};

/// Stage-2 coefficients `C2[d][b] = w^(16 d b)`.
const C2: [[i32; 8]; 8] = {
    let mut t = [[0i32; 8]; 8];
    let mut d = 0;
    while d < 8 {
        let mut b = 0;
        while b < 8 {
            t[d][b] = POW[(16 * d * b) % 128];
            b += 1;
        }
        d += 1;
    }
    t
};

/// One fold `x -> (x mod 256) - floor(x / 256)`, congruent modulo 257.
#[inline(always)]
fn fold(x: i32) -> i32 {
    (x & 255) - (x >> 8)
}

/// Two folds: `0 <= x < 2^20` goes to `0..=271`.
#[inline(always)]
fn fold2(x: i32) -> i32 {
    fold(fold(x))
}

/// The transform of a block plus the offsets, as representatives in `-128..=128`.
#[inline(always)]
fn ntt(block: &[u8; 64], last: bool) -> [i32; 128] {
    let mut g = [[0i32; 16]; 8];
    for (b, gb) in g.iter_mut().enumerate() {
        let mut acc = [0i32; 16];
        for (a, c1) in C1.iter().enumerate() {
            let m = block[b + 8 * a] as i32;
            for (x, c) in acc.iter_mut().zip(c1) {
                *x += m * c;
            }
        }
        for ((o, x), t) in gb.iter_mut().zip(acc).zip(&TW[b]) {
            *o = fold2(fold2(x) * t);
        }
    }
    let off = if last { &YOFF_F } else { &YOFF_N };
    let mut y = [0i32; 128];
    for (d, (yd, od)) in y.chunks_exact_mut(16).zip(off.chunks_exact(16)).enumerate() {
        let mut acc = [0i32; 16];
        for (gb, &c) in g.iter().zip(&C2[d]) {
            for (x, v) in acc.iter_mut().zip(gb) {
                *x += c * v;
            }
        }
        for ((o, x), f) in yd.iter_mut().zip(acc).zip(od) {
            // 0..=271 plus an offset below 257: two conditional subtractions make it
            // exact, then the representative is centred.
            let mut v = fold2(x) + f;
            v -= if v >= P { P } else { 0 };
            v -= if v >= P { P } else { 0 };
            *o = if v > 128 { v - P } else { v };
        }
    }
    y
}

/// The naive transform (quadratic, exact), for the tests.
#[cfg(test)]
fn ntt_reference(block: &[u8; 64], last: bool) -> [i32; 128] {
    let off = if last { &YOFF_F } else { &YOFF_N };
    core::array::from_fn(|i| {
        let mut s = off[i];
        for (j, &m) in block.iter().enumerate() {
            s = (s + m as i32 * POW[(i * j) % 128]) % P;
        }
        if s > 128 {
            s - P
        } else {
            s
        }
    })
}

/// The concatenated code: 32 groups of four words, each word two 16-bit halves (low half
/// first). Flattened, words `0..64` pair `185 y_(2n)` with `185 y_(2n+1)`, words `64..96`
/// pair `233 y_(2n)` with `233 y_(2n+64)`, and words `96..128` pair `233 y_(2n+1)` with
/// `233 y_(2n+65)`; written as flat loops so that the compiler can vectorise them.
#[inline(always)]
fn expand(y: &[i32; 128]) -> [[u32; 4]; 32] {
    let pack = |l: i32, hi: i32, m: i32| ((l * m) as u32 & 0xffff) | (((hi * m) as u32) << 16);
    let mut z = [0u32; 128];
    for (n, o) in z[..64].iter_mut().enumerate() {
        *o = pack(y[2 * n], y[2 * n + 1], 185);
    }
    let (lo, hi) = y.split_at(64);
    for (n, o) in z[64..96].iter_mut().enumerate() {
        *o = pack(lo[2 * n], hi[2 * n], 233);
    }
    for (n, o) in z[96..].iter_mut().enumerate() {
        *o = pack(lo[2 * n + 1], hi[2 * n + 1], 233);
    }
    core::array::from_fn(|g| [z[4 * g], z[4 * g + 1], z[4 * g + 2], z[4 * g + 3]])
}

/// Message-word permutation: round `r`, step `i` uses packed group `PERM[8 r + i]`.
const PERM: [usize; 32] = [
    4, 6, 0, 2, 7, 5, 3, 1, 15, 11, 12, 8, 9, 13, 10, 14, 17, 18, 23, 20, 22, 21, 16, 19, 30, 24, 25, 31, 27, 29, 28,
    26,
];

/// Round parameters of version 1.1: first permutation index and rotations.
const ROUNDS: [(usize, [u32; 4]); 4] = [
    (0, [3, 23, 17, 27]),
    (2, [28, 19, 22, 7]),
    (1, [29, 9, 15, 5]),
    (0, [4, 13, 10, 25]),
];

/// SIMD-256 v1.1 initial value (from the round-2 specification, also sphlib's simd.c
/// `IV256`); the test module re-derives it by compressing "SIMD-256 v1.1".
const IV256: [u32; 16] = [
    0x4d567983, 0x07190ba9, 0x8474577b, 0x39d726e9, 0xaaf3d925, 0x3ee20b03, 0xafd5e751, 0xc96006d3, 0xc2c2ba14,
    0x49b3bcb4, 0xf67caf46, 0x668626c9, 0xe2eaa8d2, 0x1ff47833, 0xd0c661a5, 0x55693de1,
];

#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn f_if(x: u32, y: u32, z: u32) -> u32 {
    ((y ^ z) & x) ^ z
}

#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn f_maj(x: u32, y: u32, z: u32) -> u32 {
    (x & y) | ((x | y) & z)
}

#[cfg(any(test, not(target_arch = "x86_64")))]
/// One step on the four lanes: message words `w`, Boolean function IF (or MAJ when
/// `MAJ`), rotations `r` and `s`, lane permutation `j -> j ^ k`.
#[inline(always)]
fn step<const MAJ: bool>(st: &mut [[u32; 4]; 4], w: &[u32; 4], r: u32, s: u32, k: usize) {
    let f = if MAJ { f_maj } else { f_if };
    let [a, b, c, d] = st;
    let t = [
        a[0].rotate_left(r),
        a[1].rotate_left(r),
        a[2].rotate_left(r),
        a[3].rotate_left(r),
    ];
    for j in 0..4 {
        let tt = d[j].wrapping_add(w[j]).wrapping_add(f(a[j], b[j], c[j]));
        a[j] = tt.rotate_left(s).wrapping_add(t[j ^ k]);
        d[j] = c[j];
        c[j] = b[j];
        b[j] = t[j];
    }
}

#[cfg(any(test, not(target_arch = "x86_64")))]
/// The compression function on one 64-byte block, in portable Rust (one `u32` per lane).
#[inline(always)]
fn compress_portable(h: &mut [u32; 16], block: &[u8; 64], last: bool) {
    let z = expand(&ntt(block, last));
    // State XOR message.
    let saved = *h;
    let mut st = [[0u32; 4]; 4];
    for (k, (lane, hv)) in st.iter_mut().flatten().zip(h.iter()).enumerate() {
        let m = u32::from_le_bytes([block[4 * k], block[4 * k + 1], block[4 * k + 2], block[4 * k + 3]]);
        *lane = hv ^ m;
    }
    for (ri, &(isp, rot)) in ROUNDS.iter().enumerate() {
        for i in 0..8 {
            let k = (isp + i) % 3 + 1;
            let w = &z[PERM[8 * ri + i]];
            if i < 4 {
                step::<false>(&mut st, w, rot[i % 4], rot[(i + 1) % 4], k);
            } else {
                step::<true>(&mut st, w, rot[i % 4], rot[(i + 1) % 4], k);
            }
        }
    }
    // Feed-forward: the previous chaining value as message.
    let w = |q: usize| [saved[4 * q], saved[4 * q + 1], saved[4 * q + 2], saved[4 * q + 3]];
    step::<false>(&mut st, &w(0), 4, 13, 3);
    step::<false>(&mut st, &w(1), 13, 10, 1);
    step::<false>(&mut st, &w(2), 10, 25, 2);
    step::<false>(&mut st, &w(3), 25, 4, 3);
    for (hv, v) in h.iter_mut().zip(st.iter().flatten()) {
        *hv = *v;
    }
}

/// The x86-64 paths: each of the four Feistel lanes' four words is one SSE register, so
/// a step is a handful of 128-bit operations (the lane permutation `j -> j ^ k` is one
/// `pshufd`). SSE2 is part of the x86-64 baseline; the same code is also compiled with
/// AVX2 (the transform's 16-lane loops then use 256-bit registers) and with AVX-512VL
/// (where the compiler turns the shift pairs into single rotate instructions).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{expand, ntt, C1, P, PERM, POW, ROUNDS, TW, YOFF_F, YOFF_N};
    use core::arch::x86_64::*;

    // The intrinsics below need only SSE2, which every x86-64 target enables at compile
    // time (checked here); the `unsafe` blocks below rely on this.
    const _: () = assert!(cfg!(target_feature = "sse2"));

    /// Rotation of each 32-bit lane left by `R` (1..=31).
    #[inline(always)]
    fn rotl<const R: i32>(x: __m128i) -> __m128i {
        // SAFETY: SSE2 is all these intrinsics need, and it is enabled at compile time on
        // every x86-64 target (asserted at the top of this module).
        unsafe {
            _mm_or_si128(
                _mm_sll_epi32(x, _mm_cvtsi32_si128(R)),
                _mm_srl_epi32(x, _mm_cvtsi32_si128(32 - R)),
            )
        }
    }

    /// The lane permutation `j -> j ^ K` applied to `t`.
    #[inline(always)]
    fn perm<const K: usize>(t: __m128i) -> __m128i {
        // SAFETY: SSE2 is all these intrinsics need, and it is enabled at compile time on
        // every x86-64 target (asserted at the top of this module).
        unsafe {
            match K {
                1 => _mm_shuffle_epi32::<0b10_11_00_01>(t),
                2 => _mm_shuffle_epi32::<0b01_00_11_10>(t),
                _ => _mm_shuffle_epi32::<0b00_01_10_11>(t),
            }
        }
    }

    /// One step, as [`super::step`], on registers.
    #[inline(always)]
    fn step<const R: i32, const S: i32, const K: usize, const MAJ: bool>(st: &mut [__m128i; 4], w: __m128i) {
        let [a, b, c, d] = *st;
        // SAFETY: SSE2 is all these intrinsics need, and it is enabled at compile time on
        // every x86-64 target (asserted at the top of this module).
        unsafe {
            let f = if MAJ {
                _mm_or_si128(_mm_and_si128(a, b), _mm_and_si128(_mm_or_si128(a, b), c))
            } else {
                _mm_xor_si128(_mm_and_si128(_mm_xor_si128(b, c), a), c)
            };
            let t = rotl::<R>(a);
            let tt = _mm_add_epi32(_mm_add_epi32(d, w), f);
            let na = _mm_add_epi32(rotl::<S>(tt), perm::<K>(t));
            *st = [na, t, b, c];
        }
    }

    /// Loads four words.
    #[inline(always)]
    fn load(w: &[u32; 4]) -> __m128i {
        // SAFETY: SSE2 is all these intrinsics need, and it is enabled at compile time on
        // every x86-64 target (asserted at the top of this module).
        unsafe { _mm_set_epi32(w[3] as i32, w[2] as i32, w[1] as i32, w[0] as i32) }
    }

    /// Stores four words.
    #[inline(always)]
    fn store(v: __m128i) -> [u32; 4] {
        // SAFETY: SSE2 is all these intrinsics need, and it is enabled at compile time on
        // every x86-64 target (asserted at the top of this module).
        unsafe {
            [
                _mm_cvtsi128_si32(v) as u32,
                _mm_cvtsi128_si32(_mm_shuffle_epi32::<1>(v)) as u32,
                _mm_cvtsi128_si32(_mm_shuffle_epi32::<2>(v)) as u32,
                _mm_cvtsi128_si32(_mm_shuffle_epi32::<3>(v)) as u32,
            ]
        }
    }

    /// One round: eight steps with rotations `R0..R3` and first permutation index `ISP`.
    #[inline(always)]
    fn round<const RI: usize, const ISP: usize, const R0: i32, const R1: i32, const R2: i32, const R3: i32>(
        st: &mut [__m128i; 4],
        z: &[[u32; 4]; 32],
    ) {
        debug_assert_eq!(ROUNDS[RI].0, ISP);
        let w = |i: usize| load(&z[PERM[8 * RI + i]]);
        // `k = (ISP + i) % 3 + 1`, spelled out for the three starting values.
        macro_rules! eight {
            ($k0:literal, $k1:literal, $k2:literal) => {
                step::<R0, R1, $k0, false>(st, w(0));
                step::<R1, R2, $k1, false>(st, w(1));
                step::<R2, R3, $k2, false>(st, w(2));
                step::<R3, R0, $k0, false>(st, w(3));
                step::<R0, R1, $k1, true>(st, w(4));
                step::<R1, R2, $k2, true>(st, w(5));
                step::<R2, R3, $k0, true>(st, w(6));
                step::<R3, R0, $k1, true>(st, w(7));
            };
        }
        match ISP {
            0 => {
                eight!(1, 2, 3);
            }
            1 => {
                eight!(2, 3, 1);
            }
            _ => {
                eight!(3, 1, 2);
            }
        }
    }

    /// The compression function with the step function on SSE registers.
    #[inline(always)]
    pub(super) fn compress_body(h: &mut [u32; 16], block: &[u8; 64], y: &[i32; 128]) {
        let z = expand(y);
        let word = |k: usize| u32::from_le_bytes([block[4 * k], block[4 * k + 1], block[4 * k + 2], block[4 * k + 3]]);
        let hv = |q: usize| [h[4 * q], h[4 * q + 1], h[4 * q + 2], h[4 * q + 3]];
        let saved = [load(&hv(0)), load(&hv(1)), load(&hv(2)), load(&hv(3))];
        let mut st: [__m128i; 4] = core::array::from_fn(|q| {
            let x = |j: usize| h[4 * q + j] ^ word(4 * q + j);
            load(&[x(0), x(1), x(2), x(3)])
        });
        round::<0, 0, 3, 23, 17, 27>(&mut st, &z);
        round::<1, 2, 28, 19, 22, 7>(&mut st, &z);
        round::<2, 1, 29, 9, 15, 5>(&mut st, &z);
        round::<3, 0, 4, 13, 10, 25>(&mut st, &z);
        step::<4, 13, 3, false>(&mut st, saved[0]);
        step::<13, 10, 1, false>(&mut st, saved[1]);
        step::<10, 25, 2, false>(&mut st, saved[2]);
        step::<25, 4, 3, false>(&mut st, saved[3]);
        for (q, v) in st.into_iter().enumerate() {
            h[4 * q..4 * q + 4].copy_from_slice(&store(v));
        }
    }

    /// The compression function with the SSE2 baseline (portable transform).
    #[inline]
    pub(super) fn compress_sse2(h: &mut [u32; 16], block: &[u8; 64], last: bool) {
        compress_body(h, block, &ntt(block, last))
    }

    /// Eight `i32` from `x[..8]`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn ld(x: &[i32]) -> __m256i {
        assert!(x.len() >= 8);
        // SAFETY: `x` has at least 8 elements (asserted), an unaligned load reads 32 bytes.
        unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
    }

    /// `C1` rows `2 q` and `2 q + 1` as the low and high 16-bit halves of each lane.
    const C1P: [[i32; 16]; 4] = {
        let mut t = [[0i32; 16]; 4];
        let mut q = 0;
        while q < 4 {
            let mut k = 0;
            while k < 16 {
                t[q][k] = C1[2 * q][k] | (C1[2 * q + 1][k] << 16);
                k += 1;
            }
            q += 1;
        }
        t
    };

    /// [`super::fold`] on eight lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn fold(x: __m256i) -> __m256i {
        _mm256_sub_epi32(_mm256_and_si256(x, _mm256_set1_epi32(255)), _mm256_srai_epi32::<8>(x))
    }

    /// [`super::ntt`] with explicit AVX2: each row of 16 lanes is two registers.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn ntt_avx2(block: &[u8; 64], last: bool) -> [i32; 128] {
        let fold2 = |x| fold(fold(x));
        // First pass with `pmaddwd`, which multiplies 16-bit pairs and adds each pair:
        // `pairs[q][b]` holds `m_(b + 16 q)` and `m_(b + 16 q + 8)` (inputs `a = 2 q` and
        // `2 q + 1`) as the two halves of a word, and `C1P` the matching coefficients.
        let mut pairs = [[0i32; 8]; 4];
        for (q, pq) in pairs.iter_mut().enumerate() {
            // SAFETY: the slice is 16 bytes long (bounds-checked); unaligned load.
            let row = unsafe { _mm_loadu_si128(block[16 * q..16 * q + 16].as_ptr().cast()) };
            // Bytes m_0, m_8, m_1, m_9, ... (relative to 16 q), then zero-extended.
            let inter = _mm_unpacklo_epi8(row, _mm_srli_si128::<8>(row));
            let wide = _mm256_cvtepu8_epi16(inter);
            // SAFETY: `pq` is 8 `i32`s, 32 bytes; unaligned store.
            unsafe { _mm256_storeu_si256(pq.as_mut_ptr().cast(), wide) };
        }
        // `g[h][b]`: lanes `k = 8 h..8 h + 8` of `G_b`.
        let mut g = [[_mm256_setzero_si256(); 8]; 2];
        for b in 0..8 {
            let (mut lo, mut hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for (pq, c) in pairs.iter().zip(&C1P) {
                let m = _mm256_set1_epi32(pq[b]);
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(m, ld(&c[..8])));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(m, ld(&c[8..])));
            }
            g[0][b] = fold2(_mm256_mullo_epi32(fold2(lo), ld(&TW[b][..8])));
            g[1][b] = fold2(_mm256_mullo_epi32(fold2(hi), ld(&TW[b][8..])));
        }
        // Second pass: for each `k`, an eight-point transform over `b` with the 8th root
        // of unity `r = w^16` (`r^4 = -1`), as a radix-2 FFT on whole registers: two
        // four-point transforms (root `r^2`) and three twiddles, five products in all.
        let off = if last { &YOFF_F } else { &YOFF_N };
        let mut y = [0i32; 128];
        let (p, p1, half, zero) = (
            _mm256_set1_epi32(P),
            _mm256_set1_epi32(P - 1),
            _mm256_set1_epi32(128),
            _mm256_setzero_si256(),
        );
        let r = |e: usize| _mm256_set1_epi32(POW[16 * e]);
        let mulr = |x: __m256i, e: usize| fold2(_mm256_mullo_epi32(x, r(e)));
        let add = |a, b| _mm256_add_epi32(a, b);
        let sub = |a, b| _mm256_sub_epi32(a, b);
        // Four-point transform with root `r^2` of `a0..a3`.
        let dft4 = |a0, a1, a2, a3| {
            let (s02, d02, s13) = (add(a0, a2), sub(a0, a2), add(a1, a3));
            let t13 = mulr(sub(a1, a3), 2);
            [add(s02, s13), add(d02, t13), sub(s02, s13), sub(d02, t13)]
        };
        for (h, gh) in g.iter().enumerate() {
            let x = |b: usize| gh[b];
            let e = dft4(x(0), x(2), x(4), x(6));
            let o = dft4(x(1), x(3), x(5), x(7));
            let o = [o[0], mulr(o[1], 1), mulr(o[2], 2), mulr(o[3], 3)];
            for d in 0..8 {
                let acc = if d < 4 {
                    add(e[d], o[d])
                } else {
                    sub(e[d - 4], o[d - 4])
                };
                let at = 16 * d + 8 * h;
                // -1100 < acc < 2200 (inputs below 272, products folded to -5..=260): two
                // folds give -1..=256, plus the offset -1..=512; one conditional addition
                // and two subtractions make it exact (one would do), then centre.
                let mut v = _mm256_add_epi32(fold2(acc), ld(&off[at..]));
                v = _mm256_add_epi32(v, _mm256_and_si256(_mm256_cmpgt_epi32(zero, v), p));
                v = _mm256_sub_epi32(v, _mm256_and_si256(_mm256_cmpgt_epi32(v, p1), p));
                v = _mm256_sub_epi32(v, _mm256_and_si256(_mm256_cmpgt_epi32(v, p1), p));
                v = _mm256_sub_epi32(v, _mm256_and_si256(_mm256_cmpgt_epi32(v, half), p));
                // SAFETY: `y[at..at + 8]` is in bounds (`at <= 120`); unaligned store.
                unsafe { _mm256_storeu_si256(y[at..at + 8].as_mut_ptr().cast(), v) };
            }
        }
        y
    }

    /// The compression function compiled for AVX2, with [`ntt_avx2`].
    #[target_feature(enable = "avx2")]
    pub(super) fn compress_avx2(h: &mut [u32; 16], block: &[u8; 64], last: bool) {
        compress_body(h, block, &ntt_avx2(block, last))
    }

    /// The compression function compiled for AVX-512 (F and VL), with [`ntt_avx2`].
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn compress_avx512(h: &mut [u32; 16], block: &[u8; 64], last: bool) {
        compress_body(h, block, &ntt_avx2(block, last))
    }

    /// Consecutive non-final blocks (`data.len()` a multiple of 64), SSE2 baseline.
    pub(super) fn many_sse2(h: &mut [u32; 16], data: &[u8]) {
        for c in data.chunks_exact(64) {
            let b: &[u8; 64] = c.try_into().expect("64-byte chunk");
            compress_body(h, b, &ntt(b, false));
        }
    }

    /// Consecutive non-final blocks (`data.len()` a multiple of 64), AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn many_avx2(h: &mut [u32; 16], data: &[u8]) {
        for c in data.chunks_exact(64) {
            let b: &[u8; 64] = c.try_into().expect("64-byte chunk");
            compress_body(h, b, &ntt_avx2(b, false));
        }
    }

    /// Consecutive non-final blocks (`data.len()` a multiple of 64), AVX-512F/VL.
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn many_avx512(h: &mut [u32; 16], data: &[u8]) {
        for c in data.chunks_exact(64) {
            let b: &[u8; 64] = c.try_into().expect("64-byte chunk");
            compress_body(h, b, &ntt_avx2(b, false));
        }
    }
}

/// Compresses consecutive non-final blocks (`data.len()` a multiple of 64) with the best
/// path the CPU supports, choosing it once for all of them.
fn compress_many(h: &mut [u32; 16], data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX2, AVX-512F and AVX-512VL were detected just above (AVX-512F
            // implies AVX2).
            return unsafe { x86::many_avx512(h, data) };
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected just above.
            return unsafe { x86::many_avx2(h, data) };
        }
        x86::many_sse2(h, data)
    }
    #[cfg(not(target_arch = "x86_64"))]
    for c in data.chunks_exact(64) {
        compress_portable(h, c.try_into().expect("64-byte chunk"), false);
    }
}

/// The compression function on one 64-byte block: the best path the CPU supports.
/// (`is_x86_feature_detected!` caches its answer after the first query.)
fn compress(h: &mut [u32; 16], block: &[u8; 64], last: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX2, AVX-512F and AVX-512VL were detected just above (AVX-512F
            // implies AVX2).
            return unsafe { x86::compress_avx512(h, block, last) };
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected just above.
            return unsafe { x86::compress_avx2(h, block, last) };
        }
        x86::compress_sse2(h, block, last)
    }
    #[cfg(not(target_arch = "x86_64"))]
    compress_portable(h, block, last)
}

/// SIMD-256 streaming state.
#[derive(Clone)]
struct Simd256 {
    h: [u32; 16],
    buf: [u8; 64],
    fill: usize,
    /// Message length so far, in bits.
    bits: u64,
}

impl crate::State for Simd256 {
    fn update(&mut self, mut data: &[u8]) {
        self.bits = self.bits.wrapping_add((data.len() as u64) << 3);
        if self.fill > 0 {
            let n = (64 - self.fill).min(data.len());
            self.buf[self.fill..self.fill + n].copy_from_slice(&data[..n]);
            self.fill += n;
            data = &data[n..];
            if self.fill < 64 {
                return;
            }
            let b = self.buf;
            compress(&mut self.h, &b, false);
            self.fill = 0;
        }
        let whole = data.len() & !63;
        compress_many(&mut self.h, &data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        // The partial byte's top bits; zero padding follows at `finish`.
        self.buf[self.fill] = last & (0xff00u16 >> bits) as u8;
        self.fill += 1;
        self.bits = self.bits.wrapping_add(bits as u64);
        Ok(())
    }

    fn finish(self: Box<Self>, out: &mut [u8; 32]) {
        let mut st = *self;
        if st.fill > 0 {
            st.buf[st.fill..].fill(0);
            let b = st.buf;
            compress(&mut st.h, &b, false);
        }
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(&st.bits.to_le_bytes());
        compress(&mut st.h, &b, true);
        for (o, w) in out.chunks_exact_mut(4).zip(st.h) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}

struct Simd;

/// The implementation this CPU runs (as `compress_many` chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("avx512f") {
        "avx512vl"
    } else if is_x86_feature_detected!("avx2") {
        "avx2"
    } else {
        "sse2"
    }
}

/// The implementation this CPU runs: the portable code.
#[cfg(not(target_arch = "x86_64"))]
fn path_name() -> &'static str {
    "portable"
}

impl crate::Candidate for Simd {
    fn name(&self) -> &'static str {
        "SIMD-256-r2"
    }
    fn label(&self) -> &'static str {
        "SIMD-256 round 2 (tweaked, v1.1)"
    }
    fn kat_dir(&self) -> &'static str {
        "simd"
    }
    fn block_bytes(&self) -> usize {
        64
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(Simd256 {
            h: IV256,
            buf: [0; 64],
            fill: 0,
            bits: 0,
        })
    }
}

/// SIMD-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Simd))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IV is the compression of "SIMD-256 v1.1" (zero-padded) from the zero state.
    #[test]
    fn iv_derivation() {
        let mut h = [0u32; 16];
        let mut b = [0u8; 64];
        b[..13].copy_from_slice(b"SIMD-256 v1.1");
        compress(&mut h, &b, false);
        let hex: Vec<String> = h.iter().map(|w| format!("{w:08x}")).collect();
        assert_eq!(h, IV256, "derived {}", hex.join(" "));
    }

    use crate::testutil::xorshift;

    #[test]
    fn fast_transform_matches_definition() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        for n in 0..200 {
            let mut b = [0u8; 64];
            for x in b.iter_mut() {
                *x = xorshift(&mut seed) as u8;
            }
            if n == 0 {
                b = [255; 64];
            }
            for last in [false, true] {
                let want = ntt_reference(&b, last);
                assert_eq!(ntt(&b, last), want);
                #[cfg(target_arch = "x86_64")]
                if is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 was detected just above.
                    assert_eq!(unsafe { x86::ntt_avx2(&b, last) }, want);
                }
            }
        }
    }

    /// The multi-block entry against block-by-block portable compression.
    #[test]
    fn many_agrees() {
        let mut seed = 0x7777_1234_abcd_0001u64;
        let data: Vec<u8> = (0..64 * 9).map(|_| xorshift(&mut seed) as u8).collect();
        let mut want = IV256;
        for c in data.chunks_exact(64) {
            compress_portable(&mut want, c.try_into().unwrap(), false);
        }
        let mut got = IV256;
        compress_many(&mut got, &data);
        assert_eq!(got, want);
        #[cfg(target_arch = "x86_64")]
        {
            let mut got = IV256;
            x86::many_sse2(&mut got, &data);
            assert_eq!(got, want);
            if is_x86_feature_detected!("avx2") {
                let mut got = IV256;
                // SAFETY: AVX2 was detected just above.
                unsafe { x86::many_avx2(&mut got, &data) };
                assert_eq!(got, want);
            }
        }
    }

    /// Every compiled path against the portable one, on random states and blocks.
    #[test]
    fn paths_agree() {
        let mut seed = 0x0bad_cafe_dead_beefu64;
        for n in 0..500 {
            let mut h = [0u32; 16];
            for x in h.iter_mut() {
                *x = xorshift(&mut seed) as u32;
            }
            let mut b = [0u8; 64];
            for x in b.iter_mut() {
                *x = xorshift(&mut seed) as u8;
            }
            let last = n % 2 == 1;
            let mut want = h;
            compress_portable(&mut want, &b, last);
            let mut got = h;
            compress(&mut got, &b, last);
            assert_eq!(got, want);
            #[cfg(target_arch = "x86_64")]
            {
                let mut got = h;
                x86::compress_sse2(&mut got, &b, last);
                assert_eq!(got, want);
                if is_x86_feature_detected!("avx2") {
                    let mut got = h;
                    // SAFETY: AVX2 was detected just above.
                    unsafe { x86::compress_avx2(&mut got, &b, last) };
                    assert_eq!(got, want);
                }
                if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl") {
                    let mut got = h;
                    // SAFETY: AVX-512F and AVX-512VL (hence AVX2) were detected just above.
                    unsafe { x86::compress_avx512(&mut got, &b, last) };
                    assert_eq!(got, want);
                }
            }
        }
    }
}
