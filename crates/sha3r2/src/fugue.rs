//! Fugue-256, round 2 (Halevi, Hall, Jutla, "The Hash Function Fugue", the round-2
//! submission package; Fugue was not tweaked for round 2).
//!
//! The state is 30 columns of 4 bytes. Each 4-byte message word goes through TIX and two
//! rounds of ROR3, CMIX and SMIX (the AES S-box followed by the "super-mix" linear map).
//! The message is padded with zero bits to whole words, followed by the 64-bit
//! big-endian bit length; the final G transformation (10 rounds of ROR3/CMIX/SMIX, then
//! 13 double rounds of XOR/ROR15/SMIX/XOR/ROR14/SMIX) precedes the output of columns
//! 1..=4 and 15..=18.
//!
//! A column is kept as a `u32` whose least significant byte is the column's first byte
//! (row 0), i.e. the byte that comes first in the message. The super-mix tables are
//! computed at compile time from the AES S-box and GF(2^8) arithmetic of
//! [`crate::aes_round`].
//!
//! Speed: the state is never moved. A rotation only changes which physical column is
//! logical column 0; one message word rotates by 6 columns, so after five words the
//! layout repeats, and the absorbing loop handles five words per iteration with every
//! column index a compile-time constant. SMIX is done either with four-table lookups
//! (portable) or, on x86-64 CPUs with GFNI, on one 16-byte register: the S-box is one
//! `gf2p8affineinvqb`, and super-mix a few byte shuffles, XORs and GF(2^8) multiplications
//! by constants (see the `x86` module). The x86-64 path also keeps the chain from one
//! SMIX to the next in registers and updates the other columns beside it.

use crate::aes_round::gmul;

/// Number of columns in the state.
const COLS: usize = 30;

/// The AES S-box (shared with the AES-based candidates).
const SBOX: [u8; 256] = crate::aes_round::sbox();

/// The super-mix matrix M (rows), from the Fugue specification.
const M: [[u8; 4]; 4] = [[1, 4, 7, 1], [1, 1, 4, 7], [7, 1, 1, 4], [4, 7, 1, 1]];

/// `MT[k][x]`: the column vector `M[.][k] * x`, packed with row `j` in byte `j`.
const MT: [[u32; 256]; 4] = {
    let mut t = [[0u32; 256]; 4];
    let mut k = 0;
    while k < 4 {
        let mut x = 0;
        while x < 256 {
            let mut j = 0;
            let mut v = 0u32;
            while j < 4 {
                v |= (gmul(M[j][k], x as u8) as u32) << (8 * j);
                j += 1;
            }
            t[k][x] = v;
            x += 1;
        }
        k += 1;
    }
    t
};

/// `MTS[k][x] = MT[k][SBOX[x]]`: S-box and column mixing in one lookup.
const MTS: [[u32; 256]; 4] = {
    let mut t = [[0u32; 256]; 4];
    let mut k = 0;
    while k < 4 {
        let mut x = 0;
        while x < 256 {
            t[k][x] = MT[k][SBOX[x] as usize];
            x += 1;
        }
        k += 1;
    }
    t
};

/// Fugue-256's initial value (columns 22..=29), from the Fugue specification (also in
/// sphlib's fugue.c `IV256`), as big-endian words; the test module re-derives it.
const IV256: [u32; 8] = [
    0xe952bdde, 0x6671135f, 0xe0d4f668, 0xd2b0b594, 0xf96c621d, 0xfbf929de, 0x9149e899, 0x34f8c248,
];

/// Multiplication by x of each byte of a packed word.
#[inline(always)]
fn xtime4(x: u32) -> u32 {
    ((x & 0x7f7f_7f7f) << 1) ^ (((x >> 7) & 0x0101_0101) * 0x1b)
}

/// SMIX on four columns: S-box, then super-mix, including its final row rotation.
///
/// Super-mix gives `W[r][c] = sum_k M[r][k] S(U[k][c]) + M[c][r] D[r]`, where `D[r]` is
/// the XOR of `S(U[r][c])` over `c != r`, and output column `(c - r) mod 4` takes
/// `W[r][c]` as its row `r`. M is circulant (`M[j][k] = m[(k - j) mod 4]`, `m = (1, 4, 7,
/// 1)`), so output column `c'` receives `m[-c']` times the packed `D` word. Since
/// `M[k][k] = 1`, byte `k` of `MTS[k][x]` is `S(x)` itself, which yields `D` for free.
#[inline(always)]
fn smix(c: [u32; 4]) -> [u32; 4] {
    let b = |w: u32, r: usize| ((w >> (8 * r)) & 0xff) as usize;
    // t[r][c] = M[.][r] * S(U[r][c]), packed over the output rows.
    let t: [[u32; 4]; 4] = core::array::from_fn(|r| core::array::from_fn(|ci| MTS[r][b(c[ci], r)]));
    let w: [u32; 4] = core::array::from_fn(|ci| t[0][ci] ^ t[1][ci] ^ t[2][ci] ^ t[3][ci]);
    let mut d = 0u32;
    for (r, tr) in t.iter().enumerate() {
        let mut x = 0;
        for (ci, &v) in tr.iter().enumerate() {
            if ci != r {
                x ^= v;
            }
        }
        d ^= x & (0xff << (8 * r));
    }
    let d4 = xtime4(xtime4(d));
    let d7 = d4 ^ xtime4(d) ^ d;
    let rot = |k: usize| {
        (w[k & 3] & 0xff) | (w[(k + 1) & 3] & 0xff00) | (w[(k + 2) & 3] & 0x00ff_0000) | (w[(k + 3) & 3] & 0xff00_0000)
    };
    [rot(0) ^ d, rot(1) ^ d, rot(2) ^ d7, rot(3) ^ d4]
}

/// TIX and two rounds for one message word, on a state whose logical column 0 is the
/// physical column `B` (a compile-time constant, so every index folds away). The
/// logical column 0 afterwards is physical column `(B + 24) % 30`.
#[inline(always)]
fn word_at<const B: usize, F: Fn([u32; 4]) -> [u32; 4]>(s: &mut [u32; COLS], w: u32, mix: &F) {
    let ix = |i: usize, rot: usize| (B + COLS * 2 - rot + i) % COLS;
    s[ix(10, 0)] ^= s[ix(0, 0)];
    s[ix(0, 0)] = w;
    s[ix(8, 0)] ^= w;
    s[ix(1, 0)] ^= s[ix(24, 0)];
    for rot in [3, 6] {
        for i in 0..3 {
            let v = s[ix(4 + i, rot)];
            s[ix(i, rot)] ^= v;
            s[ix(15 + i, rot)] ^= v;
        }
        let out = mix([s[ix(0, rot)], s[ix(1, rot)], s[ix(2, rot)], s[ix(3, rot)]]);
        for (i, v) in out.into_iter().enumerate() {
            s[ix(i, rot)] = v;
        }
    }
}

/// The 30-column state, rotated by moving `base` instead of the columns.
#[derive(Clone)]
struct Core {
    s: [u32; COLS],
    base: usize,
}

impl Core {
    #[inline(always)]
    fn idx(&self, i: usize) -> usize {
        let x = self.base + i;
        if x >= COLS {
            x - COLS
        } else {
            x
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        self.s[self.idx(i)]
    }

    #[inline(always)]
    fn xor(&mut self, i: usize, v: u32) {
        let k = self.idx(i);
        self.s[k] ^= v;
    }

    /// Rotates the state right by `r` columns: new column i is old column i - r.
    #[inline(always)]
    fn ror(&mut self, r: usize) {
        self.base = self.idx(COLS - r);
    }

    #[inline(always)]
    fn smix<F: Fn([u32; 4]) -> [u32; 4]>(&mut self, mix: &F) {
        let i = [self.idx(0), self.idx(1), self.idx(2), self.idx(3)];
        let out = mix([self.s[i[0]], self.s[i[1]], self.s[i[2]], self.s[i[3]]]);
        for (k, v) in i.into_iter().zip(out) {
            self.s[k] = v;
        }
    }

    /// ROR3, CMIX, SMIX.
    #[inline(always)]
    fn round<F: Fn([u32; 4]) -> [u32; 4]>(&mut self, mix: &F) {
        self.ror(3);
        for i in 0..3 {
            let v = self.get(4 + i);
            self.xor(i, v);
            self.xor(15 + i, v);
        }
        self.smix(mix);
    }

    /// TIX and two rounds for one message word.
    #[inline(always)]
    fn word<F: Fn([u32; 4]) -> [u32; 4]>(&mut self, w: u32, mix: &F) {
        match self.base {
            0 => word_at::<0, F>(&mut self.s, w, mix),
            6 => word_at::<6, F>(&mut self.s, w, mix),
            12 => word_at::<12, F>(&mut self.s, w, mix),
            18 => word_at::<18, F>(&mut self.s, w, mix),
            24 => word_at::<24, F>(&mut self.s, w, mix),
            _ => return self.word_slow(w, mix),
        }
        self.base = self.idx(24);
    }

    /// [`Core::word`] for any rotation (only reached if `base` is not a multiple of 6).
    fn word_slow<F: Fn([u32; 4]) -> [u32; 4]>(&mut self, w: u32, mix: &F) {
        let s0 = self.get(0);
        self.xor(10, s0);
        let k = self.idx(0);
        self.s[k] = w;
        self.xor(8, w);
        let s24 = self.get(24);
        self.xor(1, s24);
        self.round(mix);
        self.round(mix);
    }

    /// Absorbs the little-endian words of `data` (whole words only). Five words bring
    /// the layout back to where it was, so whole groups of five run with constant
    /// column indices and no dispatch on the rotation.
    #[inline(always)]
    fn absorb<F: Fn([u32; 4]) -> [u32; 4]>(&mut self, data: &[u8], mix: &F) {
        debug_assert_eq!(data.len() % 4, 0);
        let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let mut data = data;
        while self.base != 0 && data.len() >= 4 {
            self.word(word(data), mix);
            data = &data[4..];
        }
        let mut groups = data.chunks_exact(20);
        if self.base == 0 {
            let mut s = self.s;
            for g in &mut groups {
                word_at::<0, F>(&mut s, word(&g[0..4]), mix);
                word_at::<24, F>(&mut s, word(&g[4..8]), mix);
                word_at::<18, F>(&mut s, word(&g[8..12]), mix);
                word_at::<12, F>(&mut s, word(&g[12..16]), mix);
                word_at::<6, F>(&mut s, word(&g[16..20]), mix);
            }
            self.s = s;
            data = groups.remainder();
        }
        for c in data.chunks_exact(4) {
            self.word(word(c), mix);
        }
    }

    /// The final transformation G and the output columns.
    #[inline(always)]
    fn close<F: Fn([u32; 4]) -> [u32; 4]>(mut self, mix: &F) -> [u32; 8] {
        for _ in 0..10 {
            self.round(mix);
        }
        for _ in 0..13 {
            let s0 = self.get(0);
            self.xor(4, s0);
            self.xor(15, s0);
            self.ror(15);
            self.smix(mix);
            let s0 = self.get(0);
            self.xor(4, s0);
            self.xor(16, s0);
            self.ror(14);
            self.smix(mix);
        }
        let s0 = self.get(0);
        self.xor(4, s0);
        self.xor(15, s0);
        let mut out = [0u32; 8];
        for j in 0..4 {
            out[j] = self.get(1 + j);
            out[4 + j] = self.get(15 + j);
        }
        out
    }
}

/// The SMIX of the x86-64 path, on one SSE register holding the four columns (byte
/// `4 c + r` is row `r` of column `c`, the natural little-endian layout).
///
/// With `S` the S-box output, output column `c'` has in row `r`
/// `sum_k M[r][k] S[k][c' + r] + m'[c'] D[r]` (column indices mod 4), where
/// `D[r] = sum_(c != r) S[r][c]` and `m' = (1, 1, 7, 4)`. As `M[r][k]` only depends on
/// `k - r` (1, 4, 7, 1 for 0, 1, 2, 3), the first sum is `B_0 + 4 B_1 + 7 B_2 + B_3` with
/// `B_j[c'][r] = S[r + j][c' + r]`: four fixed byte shuffles. `D` is the XOR of all four
/// columns (two column rotations) plus the diagonal (one more shuffle), and `m'` one
/// byte-wise multiplication by a constant vector.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// The AES affine map as a GFNI bit matrix: byte `7 - i` selects the input bits that
    /// make output bit `i` (`i, i + 4, i + 5, i + 6, i + 7` mod 8).
    const AES_AFFINE: i64 = 0xF1E3_C78F_1F3E_7CF8u64 as i64;

    /// Shuffle control for `B_j`: output byte `4 c' + r` takes input byte
    /// `4 ((c' + r) mod 4) + (r + j) mod 4`.
    const fn shuffle_b(j: usize) -> [u8; 16] {
        let mut t = [0u8; 16];
        let mut c = 0;
        while c < 4 {
            let mut r = 0;
            while r < 4 {
                t[4 * c + r] = (4 * ((c + r) % 4) + (r + j) % 4) as u8;
                r += 1;
            }
            c += 1;
        }
        t
    }

    #[inline(always)]
    fn bytes(t: [u8; 16]) -> __m128i {
        // `__m128i` is 16 bytes with no invalid bit patterns.
        // SAFETY: transmuting between two 16-byte plain-data types is always valid.
        unsafe { core::mem::transmute::<[u8; 16], __m128i>(t) }
    }

    /// SMIX on a register of four columns (GFNI, SSSE3 and SSE4.1).
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    #[inline]
    fn smix_v(u: __m128i) -> __m128i {
        let s = _mm_gf2p8affineinv_epi64_epi8::<0x63>(u, _mm_set1_epi64x(AES_AFFINE));
        let b0 = _mm_shuffle_epi8(s, bytes(shuffle_b(0)));
        let b1 = _mm_shuffle_epi8(s, bytes(shuffle_b(1)));
        let b2 = _mm_shuffle_epi8(s, bytes(shuffle_b(2)));
        let b3 = _mm_shuffle_epi8(s, bytes(shuffle_b(3)));
        let m1 = _mm_xor_si128(b0, b3);
        let m4 = _mm_gf2p8mul_epi8(b1, _mm_set1_epi8(4));
        let m7 = _mm_gf2p8mul_epi8(b2, _mm_set1_epi8(7));
        let mixed = _mm_xor_si128(m1, _mm_xor_si128(m4, m7));
        // Row sums in every column, then minus (plus) the diagonal byte of each row.
        let t = _mm_xor_si128(s, _mm_shuffle_epi32::<0b00_11_10_01>(s));
        let rows = _mm_xor_si128(t, _mm_shuffle_epi32::<0b01_00_11_10>(t));
        let diag = _mm_shuffle_epi8(s, _mm_set1_epi32(0x0f0a_0500));
        let d = _mm_xor_si128(rows, diag);
        let dm = _mm_gf2p8mul_epi8(d, _mm_set_epi32(0x0404_0404, 0x0707_0707, 0x0101_0101, 0x0101_0101));
        _mm_xor_si128(mixed, dm)
    }

    /// Four words into a register.
    #[inline(always)]
    fn from_arr(c: [u32; 4]) -> __m128i {
        // SAFETY: `[u32; 4]` and `__m128i` are both 16 bytes of plain data.
        unsafe { core::mem::transmute::<[u32; 4], __m128i>(c) }
    }

    /// A register as four words.
    #[inline(always)]
    fn to_arr(v: __m128i) -> [u32; 4] {
        // SAFETY: `[u32; 4]` and `__m128i` are both 16 bytes of plain data.
        unsafe { core::mem::transmute::<__m128i, [u32; 4]>(v) }
    }

    /// SMIX on four columns (GFNI, SSSE3 and SSE4.1).
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    #[inline]
    pub(super) fn smix(c: [u32; 4]) -> [u32; 4] {
        to_arr(smix_v(from_arr(c)))
    }

    /// TIX and two rounds for one word `w` with logical column 0 at physical column `B`,
    /// written out so that the chain from one SMIX to the next stays in registers:
    /// `cur` holds logical columns 0..=3 (the previous word's last SMIX output) and the
    /// result is this word's last SMIX output, logical columns 0..=3 for the next word.
    /// The other columns are updated in `s` beside that chain. (Indices below are the
    /// logical ones before the word: its two ROR3 make the first SMIX act on columns
    /// 27, 28, 29, 0 and the second on 24..=27.)
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    #[inline]
    fn word_v<const B: usize>(s: &mut [u32; super::COLS], cur: __m128i, w: u32) -> __m128i {
        let p = |i: usize| (B + i) % super::COLS;
        let (c0, c2, c3, c24) = (s[p(0)], s[p(2)], s[p(3)], s[p(24)]);
        let c1 = s[p(1)] ^ c24;
        // TIX.
        s[p(10)] ^= c0;
        s[p(8)] ^= w;
        s[p(1)] = c1;
        // Round 1: CMIX (columns 27..=29 and 12..=14 take 1..=3), SMIX of 27, 28, 29, 0.
        let x = _mm_set_epi32(
            (w ^ c3) as i32,
            s[p(29)] as i32,
            s[p(28)] as i32,
            (s[p(27)] ^ c24) as i32,
        );
        let in1 = _mm_xor_si128(_mm_shuffle_epi32::<0b11_11_10_01>(cur), x);
        s[p(12)] ^= c1;
        s[p(13)] ^= c2;
        s[p(14)] ^= c3;
        let o = smix_v(in1);
        // Round 2: columns 24..=26 and 9..=11 take 28, 29, 0 (= o[1..=3]); SMIX of 24..=27.
        let y = _mm_set_epi32(0, s[p(26)] as i32, s[p(25)] as i32, c24 as i32);
        let in2 = _mm_xor_si128(_mm_shuffle_epi32::<0b00_11_10_01>(o), y);
        let o2 = smix_v(in2);
        let oa = to_arr(o);
        s[p(28)] = oa[1];
        s[p(29)] = oa[2];
        s[p(0)] = oa[3];
        s[p(9)] ^= oa[1];
        s[p(10)] ^= oa[2];
        s[p(11)] ^= oa[3];
        let ob = to_arr(o2);
        s[p(24)] = ob[0];
        s[p(25)] = ob[1];
        s[p(26)] = ob[2];
        s[p(27)] = ob[3];
        o2
    }

    /// Whether the CPU has what [`smix`] needs (the detection macro caches its answer).
    #[inline]
    pub(super) fn available() -> bool {
        is_x86_feature_detected!("gfni") && is_x86_feature_detected!("ssse3") && is_x86_feature_detected!("sse4.1")
    }

    /// One word with [`word_v`] for a rotation known only at run time (a multiple of 6).
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    #[inline]
    fn word_any(s: &mut [u32; super::COLS], base: usize, cur: __m128i, w: u32) -> __m128i {
        match base {
            0 => word_v::<0>(s, cur, w),
            6 => word_v::<6>(s, cur, w),
            12 => word_v::<12>(s, cur, w),
            18 => word_v::<18>(s, cur, w),
            _ => word_v::<24>(s, cur, w),
        }
    }

    /// [`super::Core::absorb`] with the GFNI SMIX: single words until the layout is back
    /// at physical column 0, then five words at a time, all with [`word_v`].
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    pub(super) fn absorb(core: &mut super::Core, data: &[u8]) {
        if !core.base.is_multiple_of(6) {
            // Not reached: only G moves the layout by other amounts.
            return core.absorb(data, &|c| smix(c));
        }
        let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let mut s = core.s;
        let mut base = core.base;
        let mut cur = from_arr(core::array::from_fn(|i| s[(base + i) % super::COLS]));
        let mut data = &data[..data.len() & !3];
        while base != 0 && !data.is_empty() {
            cur = word_any(&mut s, base, cur, word(data));
            base = (base + 24) % super::COLS;
            data = &data[4..];
        }
        let mut groups = data.chunks_exact(20);
        for g in &mut groups {
            cur = word_v::<0>(&mut s, cur, word(&g[0..4]));
            cur = word_v::<24>(&mut s, cur, word(&g[4..8]));
            cur = word_v::<18>(&mut s, cur, word(&g[8..12]));
            cur = word_v::<12>(&mut s, cur, word(&g[12..16]));
            cur = word_v::<6>(&mut s, cur, word(&g[16..20]));
        }
        for c in groups.remainder().chunks_exact(4) {
            cur = word_any(&mut s, base, cur, word(c));
            base = (base + 24) % super::COLS;
        }
        core.s = s;
        core.base = base;
    }

    /// One round of G (ROR3, CMIX, SMIX) with logical column 0 at physical column `B`
    /// before the round; `cur` and the result are logical columns 0..=3 before and after.
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    #[inline]
    fn round_v<const B: usize>(s: &mut [u32; super::COLS], cur: __m128i) -> __m128i {
        let p = |i: usize| (B + i) % super::COLS;
        // After ROR3, columns 0..=3 are 27, 28, 29, 0, and CMIX adds 1..=3 to the first
        // three (and to 12..=14).
        let x = _mm_set_epi32(0, s[p(29)] as i32, s[p(28)] as i32, s[p(27)] as i32);
        let o = smix_v(_mm_xor_si128(_mm_shuffle_epi32::<0b00_11_10_01>(cur), x));
        s[p(12)] ^= s[p(1)];
        s[p(13)] ^= s[p(2)];
        s[p(14)] ^= s[p(3)];
        let oa = to_arr(o);
        s[p(27)] = oa[0];
        s[p(28)] = oa[1];
        s[p(29)] = oa[2];
        s[p(0)] = oa[3];
        o
    }

    /// One iteration of G's second part (XOR, ROR15, SMIX, XOR, ROR14, SMIX) with logical
    /// column 0 at physical column `B`; it moves column 0 to physical column `B + 1`.
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    #[inline]
    fn double_v<const B: usize>(s: &mut [u32; super::COLS], cur: __m128i) -> __m128i {
        let p = |i: usize| (B + i) % super::COLS;
        let lane0 = _mm_set_epi32(0, 0, 0, -1);
        // Columns 4 and 15 take column 0; SMIX acts on 15..=18.
        let x = _mm_set_epi32(s[p(18)] as i32, s[p(17)] as i32, s[p(16)] as i32, s[p(15)] as i32);
        let o1 = smix_v(_mm_xor_si128(x, _mm_and_si128(cur, lane0)));
        // Now column 0 is 15: columns 19 and 1 take it; SMIX acts on 1..=4 (4 having
        // taken the old column 0 above).
        let y = _mm_set_epi32(s[p(4)] as i32, 0, 0, 0);
        let in2 = _mm_xor_si128(_mm_shuffle_epi32::<0b00_11_10_01>(cur), _mm_and_si128(o1, lane0));
        let o2 = smix_v(_mm_xor_si128(in2, y));
        let oa = to_arr(o1);
        s[p(15)] = oa[0];
        s[p(16)] = oa[1];
        s[p(17)] = oa[2];
        s[p(18)] = oa[3];
        s[p(19)] ^= oa[0];
        let ob = to_arr(o2);
        s[p(1)] = ob[0];
        s[p(2)] = ob[1];
        s[p(3)] = ob[2];
        s[p(4)] = ob[3];
        o2
    }

    /// [`super::Core::close`] with the GFNI SMIX and, after turning the state so that
    /// logical column 0 is physical column 0, every index a compile-time constant.
    #[target_feature(enable = "gfni,ssse3,sse4.1")]
    pub(super) fn close(core: super::Core) -> [u32; 8] {
        let mut s = core.s;
        s.rotate_left(core.base);
        let mut cur = from_arr([s[0], s[1], s[2], s[3]]);
        macro_rules! rounds {
            ($($b:literal)*) => { $(cur = round_v::<$b>(&mut s, cur);)* };
        }
        rounds!(0 27 24 21 18 15 12 9 6 3);
        macro_rules! doubles {
            ($($b:literal)*) => { $(cur = double_v::<$b>(&mut s, cur);)* };
        }
        doubles!(0 1 2 3 4 5 6 7 8 9 10 11 12);
        // The last `cur` is also in `s`.
        let _ = cur;
        // Logical column 0 is now physical column 13: columns 4 and 15 take it.
        let c = |i: usize| s[(13 + i) % super::COLS];
        let c0 = c(0);
        [c(1), c(2), c(3), c(4) ^ c0, c(15) ^ c0, c(16), c(17), c(18)]
    }
}

impl Core {
    /// Absorbs whole words with the fastest SMIX the CPU offers.
    fn absorb_words(&mut self, data: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        if x86::available() {
            // SAFETY: `x86::available` checked GFNI, SSSE3 and SSE4.1 at run time.
            return unsafe { x86::absorb(self, data) };
        }
        self.absorb(data, &smix)
    }

    /// G and the output, with the fastest SMIX the CPU offers.
    fn finish(self) -> [u32; 8] {
        #[cfg(target_arch = "x86_64")]
        if x86::available() {
            // SAFETY: `x86::available` checked GFNI, SSSE3 and SSE4.1 at run time.
            return unsafe { x86::close(self) };
        }
        self.close(&smix)
    }
}

/// Fugue-256 streaming state.
#[derive(Clone)]
struct Fugue256 {
    core: Core,
    /// Pending bytes of an incomplete 4-byte word.
    buf: [u8; 4],
    /// Number of valid bytes in `buf`.
    fill: usize,
    /// Message length so far, in bits.
    bits: u64,
}

impl Fugue256 {
    fn new() -> Self {
        let mut s = [0u32; COLS];
        for (d, v) in s[22..].iter_mut().zip(IV256) {
            *d = v.swap_bytes();
        }
        Fugue256 {
            core: Core { s, base: 0 },
            buf: [0; 4],
            fill: 0,
            bits: 0,
        }
    }
}

impl crate::State for Fugue256 {
    fn update(&mut self, mut data: &[u8]) {
        self.bits = self.bits.wrapping_add((data.len() as u64) << 3);
        if self.fill > 0 {
            let n = (4 - self.fill).min(data.len());
            self.buf[self.fill..self.fill + n].copy_from_slice(&data[..n]);
            self.fill += n;
            data = &data[n..];
            if self.fill < 4 {
                return;
            }
            let b = self.buf;
            self.core.absorb_words(&b);
            self.fill = 0;
        }
        let whole = data.len() & !3;
        self.core.absorb_words(&data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        // The partial byte's top bits, then zero bits up to the word boundary.
        self.buf[self.fill] = last & (0xff00u16 >> bits) as u8;
        self.fill += 1;
        self.buf[self.fill..].fill(0);
        self.bits = self.bits.wrapping_add(bits as u64);
        Ok(())
    }

    fn finish(self: Box<Self>, out: &mut [u8; 32]) {
        let mut st = *self;
        if st.fill > 0 {
            st.buf[st.fill..].fill(0);
            let b = st.buf;
            st.core.absorb_words(&b);
        }
        st.core.absorb_words(&st.bits.to_be_bytes());
        for (o, w) in out.chunks_exact_mut(4).zip(st.core.finish()) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}

struct Fugue;

/// The implementation this CPU runs (as the absorbing code chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if x86::available() {
        "gfni"
    } else {
        "portable"
    }
}

/// The implementation this CPU runs: the portable code.
#[cfg(not(target_arch = "x86_64"))]
fn path_name() -> &'static str {
    "portable"
}

impl crate::Candidate for Fugue {
    fn name(&self) -> &'static str {
        "Fugue-256-r2"
    }
    fn label(&self) -> &'static str {
        "Fugue-256 round 2"
    }
    fn kat_dir(&self) -> &'static str {
        "fugue"
    }
    fn block_bytes(&self) -> usize {
        4
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(Fugue256::new())
    }
}

/// Fugue-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Fugue))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbox_matches_aes() {
        assert_eq!(
            (SBOX[0x00], SBOX[0x01], SBOX[0x53], SBOX[0xff]),
            (0x63, 0x7c, 0xed, 0x16)
        );
    }

    /// The specification defines the IV as the output of G applied to a zero state that
    /// absorbed the single word 256 (the digest length), with no length padding.
    #[test]
    fn iv_derivation() {
        let mut c = Core { s: [0; COLS], base: 0 };
        c.absorb_words(&256u32.to_be_bytes());
        let iv = c.finish().map(u32::swap_bytes);
        assert_eq!(iv, IV256);
    }

    use crate::testutil::xorshift;

    /// The five-word groups with constant indices against the general per-word code.
    #[test]
    fn grouped_matches_general() {
        let mut seed = 0x0bad_5eed_1234_5678u64;
        for len in (0..200).step_by(4) {
            let data: Vec<u8> = (0..len).map(|_| xorshift(&mut seed) as u8).collect();
            let mut a = Fugue256::new().core;
            let mut b = a.clone();
            a.absorb(&data, &smix);
            for c in data.chunks_exact(4) {
                b.word_slow(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), &smix);
            }
            assert_eq!((a.s, a.base), (b.s, b.base));
        }
    }

    /// The GFNI path against the portable one: SMIX alone, then whole messages.
    #[test]
    fn paths_agree() {
        #[cfg(target_arch = "x86_64")]
        if x86::available() {
            let mut seed = 0x005e_ed0f_f00d_u64;
            for _ in 0..10_000 {
                let c: [u32; 4] = core::array::from_fn(|_| xorshift(&mut seed) as u32);
                // SAFETY: `x86::available` checked GFNI, SSSE3 and SSE4.1 at run time.
                assert_eq!(unsafe { x86::smix(c) }, smix(c), "{c:08x?}");
            }
            for len in (0..300).step_by(4) {
                let data: Vec<u8> = (0..len).map(|_| xorshift(&mut seed) as u8).collect();
                let mut a = Fugue256::new().core;
                let mut b = a.clone();
                a.absorb(&data, &smix);
                // SAFETY: as above.
                unsafe { x86::absorb(&mut b, &data) };
                assert_eq!((a.s, a.base), (b.s, b.base));
                // SAFETY: as above.
                assert_eq!(a.clone().close(&smix), unsafe { x86::close(b) });
            }
        }
    }
}
