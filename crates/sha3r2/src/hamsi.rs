//! Hamsi-256, round 2 (Özgül Küçük, "The Hash Function Hamsi", the round-2 submission
//! package).
//!
//! Each 32-bit message block is expanded by a linear code over GF(4) into eight 32-bit
//! words, concatenated with the eight-word chaining value into a 4x4 matrix of words, and
//! permuted by P (3 rounds: constant addition, the 4-bit S-box applied bit-sliced to the
//! columns, and the Serpent-like L on the diagonals); the truncated result is XORed into
//! the chaining value. Padding: a 1 bit, zeros to 32 bits, then the 64-bit big-endian bit
//! length as two blocks, the last of which goes through Pf (6 rounds, other constants).
//!
//! The expansion is linear, so it is given by the images of the 32 message bits; from
//! those the module builds, at compile time, one 256-entry table per message byte.
//!
//! Speed: the round function is written once, generic over the word type: on `u32`s it
//! processes one column (S-box) or diagonal (L) at a time; on x86-64 the 4x4 state is
//! four SSE registers, one per row, so the S-box handles all four columns at once and L
//! all four diagonals after rotating rows 1..=3 by one, two and three lanes (SSE2, always
//! present on x86-64; also compiled for AVX-512VL, whose rotate instruction shortens L).
//! The chaining value stays in registers across all blocks of an `update`.

/// Images of the 32 message bits under the expansion (bit `v`, counted from the least
/// significant, of message byte `u` at row `8u + v`): transcribed from sphlib's
/// `hamsi_helper.c` (`T256`, the `SPH_HAMSI_EXPAND_SMALL == 1` table), which tabulates
/// the generator matrix of the Hamsi-256 code.
const BASIS: [[u32; 8]; 32] = [
    [
        0x74951000, 0x5a2b467e, 0x88fd1d2b, 0x1ee68292, 0xcba90000, 0x90273769, 0xbbdcf407, 0xd0f4af61,
    ],
    [
        0xcba90000, 0x90273769, 0xbbdcf407, 0xd0f4af61, 0xbf3c1000, 0xca0c7117, 0x3321e92c, 0xce122df3,
    ],
    [
        0xe92a2000, 0xb4578cfc, 0x11fa3a57, 0x3dc90524, 0x97530000, 0x204f6ed3, 0x77b9e80f, 0xa1ec5ec1,
    ],
    [
        0x97530000, 0x204f6ed3, 0x77b9e80f, 0xa1ec5ec1, 0x7e792000, 0x9418e22f, 0x6643d258, 0x9c255be5,
    ],
    [
        0x121b4000, 0x5b17d9e8, 0x8dfacfab, 0xce36cc72, 0xe6570000, 0x4bb33a25, 0x848598ba, 0x1041003e,
    ],
    [
        0xe6570000, 0x4bb33a25, 0x848598ba, 0x1041003e, 0xf44c4000, 0x10a4e3cd, 0x097f5711, 0xde77cc4c,
    ],
    [
        0xe4788000, 0x859673c1, 0xb5fb2452, 0x29cc5edf, 0x045f0000, 0x9c4a93c9, 0x62fc79d0, 0x731ebdc2,
    ],
    [
        0x045f0000, 0x9c4a93c9, 0x62fc79d0, 0x731ebdc2, 0xe0278000, 0x19dce008, 0xd7075d82, 0x5ad2e31d,
    ],
    [
        0xb7a40100, 0x8a1f31d8, 0x8589d8ab, 0xe6c46464, 0x734c0000, 0x956fa7d6, 0xa29d1297, 0x6ee56854,
    ],
    [
        0x734c0000, 0x956fa7d6, 0xa29d1297, 0x6ee56854, 0xc4e80100, 0x1f70960e, 0x2714ca3c, 0x88210c30,
    ],
    [
        0xa7b80200, 0x1f128433, 0x60e5f9f2, 0x9e147576, 0xee260000, 0x124b683e, 0x80c2d68f, 0x3bf3ab2c,
    ],
    [
        0xee260000, 0x124b683e, 0x80c2d68f, 0x3bf3ab2c, 0x499e0200, 0x0d59ec0d, 0xe0272f7d, 0xa5e7de5a,
    ],
    [
        0x8f3e0400, 0x0d9dc877, 0x6fc548e1, 0x898d2cd6, 0x14bd0000, 0x2fba37ff, 0x6a72e5bb, 0x247febe6,
    ],
    [
        0x14bd0000, 0x2fba37ff, 0x6a72e5bb, 0x247febe6, 0x9b830400, 0x2227ff88, 0x05b7ad5a, 0xadf2c730,
    ],
    [
        0xde320800, 0x288350fe, 0x71852ac7, 0xa6bf9f96, 0xe18b0000, 0x5459887d, 0xbf1283d3, 0x1b666a73,
    ],
    [
        0xe18b0000, 0x5459887d, 0xbf1283d3, 0x1b666a73, 0x3fb90800, 0x7cdad883, 0xce97a914, 0xbdd9f5e5,
    ],
    [
        0x515c0010, 0x40f372fb, 0xfce72602, 0x71575061, 0x2e390000, 0x64dd6689, 0x3cd406fc, 0xb1f490bc,
    ],
    [
        0x2e390000, 0x64dd6689, 0x3cd406fc, 0xb1f490bc, 0x7f650010, 0x242e1472, 0xc03320fe, 0xc0a3c0dd,
    ],
    [
        0xa2b80020, 0x81e7e5f6, 0xf9ce4c04, 0xe2afa0c0, 0x5c720000, 0xc9bacd12, 0x79a90df9, 0x63e92178,
    ],
    [
        0x5c720000, 0xc9bacd12, 0x79a90df9, 0x63e92178, 0xfeca0020, 0x485d28e4, 0x806741fd, 0x814681b8,
    ],
    [
        0x4dce0040, 0x3b5bec7e, 0x36656ba8, 0x23633a05, 0x78ab0000, 0xa0cd5a34, 0x5d5ca0f7, 0x727784cb,
    ],
    [
        0x78ab0000, 0xa0cd5a34, 0x5d5ca0f7, 0x727784cb, 0x35650040, 0x9b96b64a, 0x6b39cb5f, 0x5114bece,
    ],
    [
        0x5bd20080, 0x450f18ec, 0xc2c46c55, 0xf362b233, 0x39a60000, 0x4ab753eb, 0xd14e094b, 0xb772b42b,
    ],
    [
        0x39a60000, 0x4ab753eb, 0xd14e094b, 0xb772b42b, 0x62740080, 0x0fb84b07, 0x138a651e, 0x44100618,
    ],
    [
        0xc04e0001, 0x33b9c010, 0xae0ebb05, 0xb5a4c63b, 0xc8f10000, 0x0b2de782, 0x6bf648a4, 0x539cbdbf,
    ],
    [
        0xc8f10000, 0x0b2de782, 0x6bf648a4, 0x539cbdbf, 0x08bf0001, 0x38942792, 0xc5f8f3a1, 0xe6387b84,
    ],
    [
        0x88230002, 0x5fe7a7b3, 0x99e585aa, 0x8d75f7f1, 0x51ac0000, 0x25e30f14, 0x79e22a4c, 0x1298bd46,
    ],
    [
        0x51ac0000, 0x25e30f14, 0x79e22a4c, 0x1298bd46, 0xd98f0002, 0x7a04a8a7, 0xe007afe6, 0x9fed4ab7,
    ],
    [
        0xd0080004, 0x8c768f77, 0x9dc5b050, 0xaf4a29da, 0x6ba90000, 0x40ebf9aa, 0x98321c3d, 0x76acc733,
    ],
    [
        0x6ba90000, 0x40ebf9aa, 0x98321c3d, 0x76acc733, 0xbba10004, 0xcc9d76dd, 0x05f7ac6d, 0xd9e6eee9,
    ],
    [
        0xa8ae0008, 0x2079397d, 0xfe739301, 0xb8a92831, 0x171c0000, 0xb26e3344, 0x9e6a837e, 0x58f8485f,
    ],
    [
        0x171c0000, 0xb26e3344, 0x9e6a837e, 0x58f8485f, 0xbfb20008, 0x92170a39, 0x6019107f, 0xe051606e,
    ],
];

/// `EXPAND[u][x]`: the expansion of message byte `u` having value `x` (others zero).
static EXPAND: [[[u32; 8]; 256]; 4] = {
    let mut t = [[[0u32; 8]; 256]; 4];
    let mut u = 0;
    while u < 4 {
        let mut x = 0;
        while x < 256 {
            let mut v = 0;
            while v < 8 {
                if (x >> v) & 1 != 0 {
                    let mut j = 0;
                    while j < 8 {
                        t[u][x][j] ^= BASIS[8 * u + v][j];
                        j += 1;
                    }
                }
                v += 1;
            }
            x += 1;
        }
        u += 1;
    }
    t
};

/// Round constants of P (`alpha_n`), Hamsi specification (as in sphlib's hamsi.c); the
/// 256-bit variant uses entries 0-3, 8-11, 16-19 and 24-27.
const ALPHA_N: [u32; 32] = [
    0xff00f0f0, 0xccccaaaa, 0xf0f0cccc, 0xff00aaaa, 0xccccaaaa, 0xf0f0ff00, 0xaaaacccc, 0xf0f0ff00, 0xf0f0cccc,
    0xaaaaff00, 0xccccff00, 0xaaaaf0f0, 0xaaaaf0f0, 0xff00cccc, 0xccccf0f0, 0xff00aaaa, 0xccccaaaa, 0xff00f0f0,
    0xff00aaaa, 0xf0f0cccc, 0xf0f0ff00, 0xccccaaaa, 0xf0f0ff00, 0xaaaacccc, 0xaaaaff00, 0xf0f0cccc, 0xaaaaf0f0,
    0xccccff00, 0xff00cccc, 0xaaaaf0f0, 0xff00aaaa, 0xccccf0f0,
];

/// Round constants of Pf (`alpha_f`), same source and layout.
const ALPHA_F: [u32; 32] = [
    0xcaf9639c, 0x0ff0f9c0, 0x639c0ff0, 0xcaf9f9c0, 0x0ff0f9c0, 0x639ccaf9, 0xf9c00ff0, 0x639ccaf9, 0x639c0ff0,
    0xf9c0caf9, 0x0ff0caf9, 0xf9c0639c, 0xf9c0639c, 0xcaf90ff0, 0x0ff0639c, 0xcaf9f9c0, 0x0ff0f9c0, 0xcaf9639c,
    0xcaf9f9c0, 0x639c0ff0, 0x639ccaf9, 0x0ff0f9c0, 0x639ccaf9, 0xf9c00ff0, 0xf9c0caf9, 0x639c0ff0, 0xf9c0639c,
    0x0ff0caf9, 0xcaf90ff0, 0xf9c0639c, 0xcaf9f9c0, 0x0ff0639c,
];

/// Hamsi-256's initial chaining value (the ASCII text "versiteit Leuven, Departement El"),
/// from the specification (as in sphlib's hamsi.c `IV256`).
const IV256: [u32; 8] = [
    0x76657273, 0x69746569, 0x74204c65, 0x7576656e, 0x2c204465, 0x70617274, 0x656d656e, 0x7420456c,
];

/// What the round function needs from its words: a plain `u32` (one column or diagonal
/// at a time) or, on x86-64, an SSE register holding four of them (four at a time).
trait Lanes:
    Copy
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::Not<Output = Self>
{
    /// Rotation left by `R` (1..=31).
    fn rotl<const R: i32>(self) -> Self;
    /// Shift left by `R` (1..=31).
    fn shl<const R: i32>(self) -> Self;
}

impl Lanes for u32 {
    #[inline(always)]
    fn rotl<const R: i32>(self) -> Self {
        self.rotate_left(R as u32)
    }
    #[inline(always)]
    fn shl<const R: i32>(self) -> Self {
        self << R
    }
}

/// Hamsi's 4-bit S-box (the specification's table; it is Serpent's S2).
const SBOX: [u8; 16] = [8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2];

/// The S-box's algebraic normal form (`crate::sbox4`), computed from the table.
const ANF: [u16; 4] = crate::sbox4::anf(&SBOX);

/// The S-box bit-sliced over the four words of a column (the first word holds the least
/// significant input and output bit), evaluated from its ANF; the same code serves one
/// column in `u32`s or four columns in vector registers.
#[inline(always)]
fn sbox<T: Lanes>(x: [T; 4]) -> [T; 4] {
    // The all-one and all-zero words of `T`, from any word (constant-folded).
    let ones = x[0] | !x[0];
    crate::sbox4::eval(x, &ANF, ones, !ones)
}

/// The linear diffusion L (Serpent's linear transformation on four words).
#[inline(always)]
fn lin<T: Lanes>([mut a, mut b, mut c, mut d]: [T; 4]) -> [T; 4] {
    a = a.rotl::<13>();
    c = c.rotl::<3>();
    b = b ^ a ^ c;
    d = d ^ c ^ a.shl::<3>();
    b = b.rotl::<1>();
    d = d.rotl::<7>();
    a = a ^ b ^ d;
    c = c ^ d ^ b.shl::<7>();
    [a.rotl::<5>(), b, c.rotl::<22>(), d]
}

/// The expansion of one 4-byte block: four table lookups.
#[inline(always)]
fn expand(block: [u8; 4]) -> [u32; 8] {
    let mut m = EXPAND[0][block[0] as usize];
    for (u, &byte) in block.iter().enumerate().skip(1) {
        for (mj, e) in m.iter_mut().zip(&EXPAND[u][byte as usize]) {
            *mj ^= e;
        }
    }
    m
}

#[cfg(any(test, not(target_arch = "x86_64")))]
/// One compression: expansion of `block`, concatenation, `rounds` rounds with `alpha`,
/// truncation and feed-forward (portable: one column, then one diagonal, at a time).
#[inline(always)]
fn compress_portable(h: &mut [u32; 8], block: [u8; 4], alpha: &[u32; 32], rounds: u32) {
    let m = expand(block);
    // The 4x4 matrix s0..s15 (rows of four words): message words and chaining words.
    let mut s = [
        m[0], m[1], h[0], h[1], h[2], h[3], m[2], m[3], m[4], m[5], h[4], h[5], h[6], h[7], m[6], m[7],
    ];
    const AIDX: [usize; 16] = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
    for r in 0..rounds {
        for (si, &ai) in s.iter_mut().zip(&AIDX) {
            *si ^= alpha[ai];
        }
        s[1] ^= r;
        for j in 0..4 {
            [s[j], s[4 + j], s[8 + j], s[12 + j]] = sbox([s[j], s[4 + j], s[8 + j], s[12 + j]]);
        }
        for j in 0..4 {
            let (p, q, u, v) = (j, 4 + (j + 1) % 4, 8 + (j + 2) % 4, 12 + (j + 3) % 4);
            [s[p], s[q], s[u], s[v]] = lin([s[p], s[q], s[u], s[v]]);
        }
    }
    for j in 0..4 {
        h[j] ^= s[j];
        h[4 + j] ^= s[8 + j];
    }
}

#[cfg(any(test, not(target_arch = "x86_64")))]
/// Compresses every 4-byte block of `data` (a multiple of 4 bytes long) with P.
#[inline(always)]
fn compress_blocks_portable(h: &mut [u32; 8], data: &[u8]) {
    for c in data.chunks_exact(4) {
        compress_portable(h, [c[0], c[1], c[2], c[3]], &ALPHA_N, 3);
    }
}

/// The x86-64 path: the state matrix as four SSE registers, one per row. The S-box acts
/// on columns, i.e. lane-wise on the four rows at once; L acts on diagonals, so rows 1,
/// 2 and 3 are rotated by one, two and three lanes first (making diagonal `j` lane `j`)
/// and back afterwards. The chaining value stays in two registers across blocks. SSE2
/// (the x86-64 baseline) suffices; the same code compiled for AVX-512VL gets single
/// rotate instructions.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{expand, lin, sbox, Lanes};
    use core::arch::x86_64::*;

    // The intrinsics below need only SSE2, which every x86-64 target enables at compile
    // time (checked here); the `unsafe` blocks below rely on this.
    const _: () = assert!(cfg!(target_feature = "sse2"));

    /// Four words in an SSE register.
    pub(super) use crate::v128::V;

    impl Lanes for V {
        #[inline(always)]
        fn rotl<const R: i32>(self) -> V {
            // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
            V(unsafe {
                _mm_or_si128(
                    _mm_sll_epi32(self.0, _mm_cvtsi32_si128(R)),
                    _mm_srl_epi32(self.0, _mm_cvtsi32_si128(32 - R)),
                )
            })
        }
        #[inline(always)]
        fn shl<const R: i32>(self) -> V {
            // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
            V(unsafe { _mm_sll_epi32(self.0, _mm_cvtsi32_si128(R)) })
        }
    }

    impl V {
        #[inline(always)]
        fn new(w: [u32; 4]) -> V {
            // SAFETY: `[u32; 4]` and `__m128i` are both 16 bytes of plain data.
            V(unsafe { core::mem::transmute::<[u32; 4], __m128i>(w) })
        }
        #[inline(always)]
        fn words(self) -> [u32; 4] {
            // SAFETY: `[u32; 4]` and `__m128i` are both 16 bytes of plain data.
            unsafe { core::mem::transmute::<__m128i, [u32; 4]>(self.0) }
        }
        /// Lane `j` of the result is lane `(j + K) mod 4` of `self`.
        #[inline(always)]
        fn lanes<const K: i32>(self) -> V {
            // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
            V(unsafe {
                match K {
                    1 => _mm_shuffle_epi32::<0b00_11_10_01>(self.0),
                    2 => _mm_shuffle_epi32::<0b01_00_11_10>(self.0),
                    _ => _mm_shuffle_epi32::<0b10_01_00_11>(self.0),
                }
            })
        }
        /// Low halves of `self` and `o`: lanes `self[0], self[1], o[0], o[1]`.
        #[inline(always)]
        fn lo(self, o: V) -> V {
            // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
            V(unsafe { _mm_unpacklo_epi64(self.0, o.0) })
        }
        /// High halves of `self` and `o`: lanes `self[2], self[3], o[2], o[3]`.
        #[inline(always)]
        fn hi(self, o: V) -> V {
            // SAFETY: SSE2 only, enabled on every x86-64 target (asserted above).
            V(unsafe { _mm_unpackhi_epi64(self.0, o.0) })
        }
    }

    /// Compresses one block with `rounds` rounds of `alpha` on the chaining value halves
    /// `ha`, `hb`.
    #[inline(always)]
    fn block(ha: &mut V, hb: &mut V, b: [u8; 4], alpha: &[u32; 32], rounds: u32) {
        let m = expand(b);
        let (ma, mb) = (V::new([m[0], m[1], m[2], m[3]]), V::new([m[4], m[5], m[6], m[7]]));
        // Rows: (m0 m1 h0 h1), (h2 h3 m2 m3), (m4 m5 h4 h5), (h6 h7 m6 m7).
        let mut s = [ma.lo(*ha), ha.hi(ma), mb.lo(*hb), hb.hi(mb)];
        let row = |k: usize| V::new([alpha[8 * k], alpha[8 * k + 1], alpha[8 * k + 2], alpha[8 * k + 3]]);
        let a = [row(0), row(1), row(2), row(3)];
        for r in 0..rounds {
            let x0 = a[0] ^ V::new([0, r, 0, 0]);
            let t = sbox([s[0] ^ x0, s[1] ^ a[1], s[2] ^ a[2], s[3] ^ a[3]]);
            let [d0, d1, d2, d3] = lin([t[0], t[1].lanes::<1>(), t[2].lanes::<2>(), t[3].lanes::<3>()]);
            s = [d0, d1.lanes::<3>(), d2.lanes::<2>(), d3.lanes::<1>()];
        }
        *ha = *ha ^ s[0];
        *hb = *hb ^ s[2];
    }

    /// Absorbs whole blocks and, if `last` is given, the final block with Pf.
    #[inline(always)]
    fn body(h: &mut [u32; 8], data: &[u8], last: Option<[u8; 4]>) {
        let mut ha = V::new([h[0], h[1], h[2], h[3]]);
        let mut hb = V::new([h[4], h[5], h[6], h[7]]);
        for c in data.chunks_exact(4) {
            block(&mut ha, &mut hb, [c[0], c[1], c[2], c[3]], &super::ALPHA_N, 3);
        }
        if let Some(b) = last {
            block(&mut ha, &mut hb, b, &super::ALPHA_F, 6);
        }
        h[..4].copy_from_slice(&ha.words());
        h[4..].copy_from_slice(&hb.words());
    }

    /// [`body`] with the SSE2 baseline.
    pub(super) fn run_sse2(h: &mut [u32; 8], data: &[u8], last: Option<[u8; 4]>) {
        body(h, data, last)
    }

    /// [`body`] compiled for AVX-512F/VL (rotations become single instructions).
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) fn run_avx512(h: &mut [u32; 8], data: &[u8], last: Option<[u8; 4]>) {
        body(h, data, last)
    }
}

/// Compresses the 4-byte blocks of `data` (a multiple of 4 bytes long) with P and then,
/// if given, `last` with Pf: the best path the CPU supports.
/// (`is_x86_feature_detected!` caches its answer after the first query.)
fn run(h: &mut [u32; 8], data: &[u8], last: Option<[u8; 4]>) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl") {
            // SAFETY: AVX-512F and AVX-512VL were detected just above.
            return unsafe { x86::run_avx512(h, data, last) };
        }
        x86::run_sse2(h, data, last)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        compress_blocks_portable(h, data);
        if let Some(b) = last {
            compress_portable(h, b, &ALPHA_F, 6);
        }
    }
}

/// Hamsi-256 streaming state.
#[derive(Clone)]
struct Hamsi256 {
    h: [u32; 8],
    buf: [u8; 4],
    fill: usize,
    /// Message length so far, in bits.
    bits: u64,
    /// Number of final bits given to `update_bits` (0 if none).
    extra: u32,
}

impl crate::State for Hamsi256 {
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
            run(&mut self.h, &b, None);
            self.fill = 0;
        }
        let whole = data.len() & !3;
        run(&mut self.h, &data[..whole], None);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        self.buf[self.fill] = last & (0xff00u16 >> bits) as u8;
        self.extra = bits;
        self.bits = self.bits.wrapping_add(bits as u64);
        Ok(())
    }

    fn finish(self: Box<Self>, out: &mut [u8; 32]) {
        let mut st = *self;
        // The 1 bit right after the message, then zeros to the block end.
        let z = 0x80u8 >> st.extra;
        let partial = if st.extra > 0 { st.buf[st.fill] } else { 0 };
        st.buf[st.fill] = partial | z;
        st.buf[st.fill + 1..].fill(0);
        let len = st.bits.to_be_bytes();
        let mut tail = [0u8; 8];
        tail[..4].copy_from_slice(&st.buf);
        tail[4..].copy_from_slice(&len[..4]);
        run(&mut st.h, &tail, Some([len[4], len[5], len[6], len[7]]));
        for (o, w) in out.chunks_exact_mut(4).zip(st.h) {
            o.copy_from_slice(&w.to_be_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}

struct Hamsi;

/// The implementation this CPU runs (as `run` chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl") {
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

impl crate::Candidate for Hamsi {
    fn name(&self) -> &'static str {
        "Hamsi-256-r2"
    }
    fn label(&self) -> &'static str {
        "Hamsi-256 round 2 (3 rounds, 6 final rounds)"
    }
    fn kat_dir(&self) -> &'static str {
        "hamsi"
    }
    fn block_bytes(&self) -> usize {
        4
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(Hamsi256 {
            h: IV256,
            buf: [0; 4],
            fill: 0,
            bits: 0,
            extra: 0,
        })
    }
}

/// Hamsi-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Hamsi))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testutil::xorshift;

    /// The dispatched (vector) path against the portable one on random inputs.
    #[test]
    fn paths_agree() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        for len in (0..400).step_by(4) {
            let mut h: [u32; 8] = core::array::from_fn(|_| xorshift(&mut seed) as u32);
            let data: Vec<u8> = (0..len).map(|_| xorshift(&mut seed) as u8).collect();
            let last = (xorshift(&mut seed) as u32).to_le_bytes();
            let mut want = h;
            compress_blocks_portable(&mut want, &data);
            compress_portable(&mut want, last, &ALPHA_F, 6);
            run(&mut h, &data, Some(last));
            assert_eq!(h, want);
            #[cfg(target_arch = "x86_64")]
            {
                let mut got = h;
                let mut want = h;
                compress_blocks_portable(&mut want, &data);
                x86::run_sse2(&mut got, &data, None);
                assert_eq!(got, want);
            }
        }
    }
}
