//! BLAKE-256 as submitted to the second round of the SHA-3 competition: 10 rounds of the
//! ChaCha-derived G function over a 4x4 state of 32-bit words (the round-3 tweak raised
//! this to 14 rounds). Written from the BLAKE specification (Aumasson, Henzen, Meier,
//! Phan, "SHA-3 proposal BLAKE", round-2 version); bit-level messages are supported.

/// Initial value: the SHA-256 IV (BLAKE specification, section 2.1.1).
const IV: [u32; 8] = [
    0x6A09_E667,
    0xBB67_AE85,
    0x3C6E_F372,
    0xA54F_F53A,
    0x510E_527F,
    0x9B05_688C,
    0x1F83_D9AB,
    0x5BE0_CD19,
];

/// The constants c0..c15: the first digits of pi (BLAKE specification, section 2.1.1).
const C: [u32; 16] = [
    0x243F_6A88,
    0x85A3_08D3,
    0x1319_8A2E,
    0x0370_7344,
    0xA409_3822,
    0x299F_31D0,
    0x082E_FA98,
    0xEC4E_6C89,
    0x4528_21E6,
    0x38D0_1377,
    0xBE54_66CF,
    0x34E9_0C6C,
    0xC0AC_29B7,
    0xC97C_50DD,
    0x3F84_D5B5,
    0xB547_0917,
];

/// The ten message permutations sigma_0..sigma_9 (BLAKE specification, section 2.1.2).
const SIGMA: [[usize; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

/// Rounds in the round-2 BLAKE-256.
const ROUNDS: usize = 10;

struct Blake256;

/// The catalogue entry for BLAKE-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Blake256))
}

/// The implementation this CPU runs (as `compress` chooses), reported as the subject's implementation.
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

impl crate::Candidate for Blake256 {
    fn name(&self) -> &'static str {
        "BLAKE-256-r2"
    }
    fn label(&self) -> &'static str {
        "BLAKE-256 round 2 (10 rounds)"
    }
    fn kat_dir(&self) -> &'static str {
        "blake"
    }
    fn block_bytes(&self) -> usize {
        64
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            h: IV,
            t: 0,
            buf: [0; 64],
            len: 0,
        })
    }
}

#[derive(Clone)]
struct State {
    h: [u32; 8],
    /// Message bits compressed so far.
    t: u64,
    buf: [u8; 64],
    /// Bytes waiting in `buf`.
    len: usize,
}

/// The G function on words a, b, c, d with message/constant indices x = sigma(2i),
/// y = sigma(2i+1).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn g(v: &mut [u32; 16], m: &[u32; 16], [a, b, c, d]: [usize; 4], x: usize, y: usize) {
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(m[x] ^ C[y]);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(12);
    v[a] = v[a].wrapping_add(v[b]).wrapping_add(m[y] ^ C[x]);
    v[d] = (v[d] ^ v[a]).rotate_right(8);
    v[c] = v[c].wrapping_add(v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(7);
}

/// Round `R`: four column steps, then four diagonal steps. `R` is a constant so that the
/// permutation sigma_R folds into the code.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn round<const R: usize>(v: &mut [u32; 16], m: &[u32; 16]) {
    let s = &SIGMA[R % 10];
    g(v, m, [0, 4, 8, 12], s[0], s[1]);
    g(v, m, [1, 5, 9, 13], s[2], s[3]);
    g(v, m, [2, 6, 10, 14], s[4], s[5]);
    g(v, m, [3, 7, 11, 15], s[6], s[7]);
    g(v, m, [0, 5, 10, 15], s[8], s[9]);
    g(v, m, [1, 6, 11, 12], s[10], s[11]);
    g(v, m, [2, 7, 8, 13], s[12], s[13]);
    g(v, m, [3, 4, 9, 14], s[14], s[15]);
}

/// The portable compression function, salt zero, counter `t` (bits).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn compress_portable(h: &mut [u32; 8], block: &[u8; 64], t: u64) {
    let mut m = [0u32; 16];
    for (w, c) in m.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    let (t0, t1) = (t as u32, (t >> 32) as u32);
    let mut v = [
        h[0],
        h[1],
        h[2],
        h[3],
        h[4],
        h[5],
        h[6],
        h[7],
        C[0],
        C[1],
        C[2],
        C[3],
        t0 ^ C[4],
        t0 ^ C[5],
        t1 ^ C[6],
        t1 ^ C[7],
    ];
    // The ROUNDS = 10 rounds, sigma_0..sigma_9.
    round::<0>(&mut v, &m);
    round::<1>(&mut v, &m);
    round::<2>(&mut v, &m);
    round::<3>(&mut v, &m);
    round::<4>(&mut v, &m);
    round::<5>(&mut v, &m);
    round::<6>(&mut v, &m);
    round::<7>(&mut v, &m);
    round::<8>(&mut v, &m);
    round::<9>(&mut v, &m);
    const _: () = assert!(ROUNDS == 10);
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/// The compression function, salt zero, counter `t` (bits): the vector version on x86-64
/// (AVX-512VL rotates where the CPU has them, plain SSE2 otherwise), the portable one
/// elsewhere.
#[inline]
fn compress(h: &mut [u32; 8], block: &[u8; 64], t: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx512() {
            // SAFETY: the CPU has AVX-512F and AVX-512VL, the features this function needs.
            unsafe { x86::compress_avx512(h, block, t) };
        } else {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { x86::compress_sse2(h, block, t) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    compress_portable(h, block, t);
}

/// The vector compression. The 4x4 state is held as its four rows, one 128-bit vector
/// each, so that the four column steps of a round are one G on vectors; the diagonal steps
/// become column steps after rotating rows 1, 2 and 3 left by one, two and three lanes, and
/// the rotation is undone afterwards. Each round's message-constant words `m[s(2i)] ^
/// C[s(2i+1)]` (and the swapped pair) are gathered into vectors from scalars, the
/// permutation's indices being constants of the unrolled round.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{C, SIGMA};
    use core::arch::x86_64::*;

    /// Whether the CPU has AVX-512F and AVX-512VL (the detection is cached by `std`).
    #[inline]
    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
    }

    /// The compression, written once over a rotate-right macro `$ror!(x, n)`.
    macro_rules! compress_body {
        ($h:ident, $block:ident, $t:ident, $ror:ident) => {{
            let mut m = [0u32; 16];
            for (w, c) in m.iter_mut().zip($block.chunks_exact(4)) {
                *w = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            }
            let (t0, t1) = ($t as u32, ($t >> 32) as u32);
            let mut a = _mm_loadu_si128($h.as_ptr().cast());
            let mut b = _mm_loadu_si128($h.as_ptr().add(4).cast());
            let mut c = _mm_set_epi32(C[3] as i32, C[2] as i32, C[1] as i32, C[0] as i32);
            let mut d = _mm_set_epi32(
                (t1 ^ C[7]) as i32,
                (t1 ^ C[6]) as i32,
                (t0 ^ C[5]) as i32,
                (t0 ^ C[4]) as i32,
            );
            // Message-constant words of steps x = s[2i], y = s[2i+1] for i in `$i..$i+4`.
            macro_rules! mc {
                ($s:expr, $first:expr, $swap:expr) => {{
                    let e = |i: usize| {
                        let (x, y) = ($s[$first + 2 * i], $s[$first + 2 * i + 1]);
                        (if $swap { m[y] ^ C[x] } else { m[x] ^ C[y] }) as i32
                    };
                    _mm_set_epi32(e(3), e(2), e(1), e(0))
                }};
            }
            macro_rules! g {
                ($x:expr, $y:expr) => {
                    a = _mm_add_epi32(_mm_add_epi32(a, b), $x);
                    d = $ror!(_mm_xor_si128(d, a), 16);
                    c = _mm_add_epi32(c, d);
                    b = $ror!(_mm_xor_si128(b, c), 12);
                    a = _mm_add_epi32(_mm_add_epi32(a, b), $y);
                    d = $ror!(_mm_xor_si128(d, a), 8);
                    c = _mm_add_epi32(c, d);
                    b = $ror!(_mm_xor_si128(b, c), 7);
                };
            }
            macro_rules! round {
                ($r:expr) => {
                    let s = &SIGMA[$r];
                    g!(mc!(s, 0, false), mc!(s, 0, true));
                    // Diagonals to columns: lane i of rows 1, 2, 3 takes word i+1, i+2, i+3.
                    b = _mm_shuffle_epi32(b, 0x39);
                    c = _mm_shuffle_epi32(c, 0x4E);
                    d = _mm_shuffle_epi32(d, 0x93);
                    g!(mc!(s, 8, false), mc!(s, 8, true));
                    b = _mm_shuffle_epi32(b, 0x93);
                    c = _mm_shuffle_epi32(c, 0x4E);
                    d = _mm_shuffle_epi32(d, 0x39);
                };
            }
            round!(0);
            round!(1);
            round!(2);
            round!(3);
            round!(4);
            round!(5);
            round!(6);
            round!(7);
            round!(8);
            round!(9);
            let h0 = _mm_xor_si128(_mm_loadu_si128($h.as_ptr().cast()), _mm_xor_si128(a, c));
            let h1 = _mm_xor_si128(_mm_loadu_si128($h.as_ptr().add(4).cast()), _mm_xor_si128(b, d));
            _mm_storeu_si128($h.as_mut_ptr().cast(), h0);
            _mm_storeu_si128($h.as_mut_ptr().add(4).cast(), h1);
        }};
    }

    /// Rotate right by a constant with two shifts (SSE2).
    macro_rules! ror_sse2 {
        ($x:expr, $n:literal) => {{
            let x = $x;
            _mm_or_si128(_mm_srli_epi32::<$n>(x), _mm_slli_epi32::<{ 32 - $n }>(x))
        }};
    }

    /// Rotate right by a constant with the AVX-512VL `vprord`.
    macro_rules! ror_avx512 {
        ($x:expr, $n:literal) => {
            _mm_ror_epi32::<$n>($x)
        };
    }

    /// BLAKE-256 compression with SSE2 only.
    ///
    /// # Safety
    /// Needs SSE2 (always present on x86-64).
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn compress_sse2(h: &mut [u32; 8], block: &[u8; 64], t: u64) {
        // SAFETY: `h` has eight words, so the loads and stores at words 0 and 4 stay in it.
        unsafe { compress_body!(h, block, t, ror_sse2) }
    }

    /// BLAKE-256 compression with AVX-512VL rotates.
    ///
    /// # Safety
    /// Needs AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn compress_avx512(h: &mut [u32; 8], block: &[u8; 64], t: u64) {
        // SAFETY: `h` has eight words, so the loads and stores at words 0 and 4 stay in it.
        unsafe { compress_body!(h, block, t, ror_avx512) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Both vector versions agree with the portable compression on pseudo-random
        /// chaining values, blocks and counters.
        #[test]
        fn vector_matches_portable() {
            let mut next = crate::testutil::rng(0x9E37_79B9_7F4A_7C15u64);
            for _ in 0..200 {
                let h: [u32; 8] = core::array::from_fn(|_| next() as u32);
                let block: [u8; 64] = core::array::from_fn(|_| next() as u8);
                let t = next();
                let mut want = h;
                super::super::compress_portable(&mut want, &block, t);
                let mut got = h;
                // SAFETY: SSE2 is part of the x86-64 baseline.
                unsafe { compress_sse2(&mut got, &block, t) };
                assert_eq!(got, want);
                if has_avx512() {
                    let mut got = h;
                    // SAFETY: the CPU has AVX-512F and AVX-512VL.
                    unsafe { compress_avx512(&mut got, &block, t) };
                    assert_eq!(got, want);
                }
            }
        }
    }
}

impl State {
    /// Pads the `bits` message bits waiting in `buf` and compresses the last block(s).
    fn pad_and_finish(&mut self, bits: usize) {
        let total = self.t + bits as u64;
        let mut block = [0u8; 64];
        let full = bits.div_ceil(8);
        block[..full].copy_from_slice(&self.buf[..full]);
        if !bits.is_multiple_of(8) {
            block[bits / 8] &= 0xFFu8 << (8 - bits % 8);
        }
        block[bits / 8] |= 0x80 >> (bits % 8);
        // A block holding no message bit is compressed with counter zero.
        let counter = if bits == 0 { 0 } else { total };
        if bits <= 446 {
            block[55] |= 0x01;
            block[56..].copy_from_slice(&total.to_be_bytes());
            compress(&mut self.h, &block, counter);
        } else {
            compress(&mut self.h, &block, counter);
            let mut last = [0u8; 64];
            last[55] = 0x01;
            last[56..].copy_from_slice(&total.to_be_bytes());
            compress(&mut self.h, &last, 0);
        }
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (64 - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < 64 || data.is_empty() {
                return;
            }
            self.t = self.t.wrapping_add(512);
            compress(&mut self.h, &self.buf, self.t);
            self.len = 0;
        }
        // Keep the last (possibly whole) block buffered: finish needs to know whether
        // the final block holds message bits.
        while data.len() > 64 {
            let (block, rest) = data.split_at(64);
            self.t = self.t.wrapping_add(512);
            compress(&mut self.h, block.try_into().expect("64 bytes"), self.t);
            data = rest;
        }
        self.buf[..data.len()].copy_from_slice(data);
        self.len = data.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        if self.len == 64 {
            self.t = self.t.wrapping_add(512);
            compress(&mut self.h, &self.buf, self.t);
            self.len = 0;
        }
        let bits_now = self.len * 8 + bits as usize;
        self.buf[self.len] = last;
        self.pad_and_finish(bits_now);
        self.len = usize::MAX;
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if self.len != usize::MAX {
            if self.len == 64 {
                self.t = self.t.wrapping_add(512);
                let block = self.buf;
                compress(&mut self.h, &block, self.t);
                self.len = 0;
            }
            let bits = self.len * 8;
            self.pad_and_finish(bits);
        }
        for (o, w) in out.chunks_exact_mut(4).zip(self.h.iter()) {
            o.copy_from_slice(&w.to_be_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
