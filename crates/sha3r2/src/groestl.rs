//! Grøstl-256, round-2 version (the original submission, unchanged for round 2; round 3
//! changed the round constants and Q's ShiftBytes), from "Grøstl – a SHA-3 candidate"
//! (Gauravaram, Knudsen, Matusiewicz, Mendel, Rechberger, Schläffer, Thomsen, 2008/2009).
//!
//! Wide-pipe Merkle–Damgård: 512-bit state, 512-bit blocks, compression
//! `f(h, m) = P(h ⊕ m) ⊕ Q(m) ⊕ h`, output `trunc256(P(h) ⊕ h)`. P and Q are 10 rounds of
//! AddRoundConstant, SubBytes (the AES S-box), ShiftBytes (row `i` left by `i` in both P
//! and Q) and MixBytes (circulant `02 02 03 04 05 03 05 07`). P adds the round number to
//! byte (0,0); Q adds `0xff ⊕ round` to byte (7,0).
//!
//! The state is eight `u64` columns, row 0 in the most significant byte; SubBytes,
//! ShiftBytes and MixBytes are done together with eight lookup tables built from the
//! S-box. That portable code is one of three implementations of P and Q, chosen once per
//! message by run-time CPU detection: on x86-64 with AVX-512 (F, BW, VBMI) and GFNI a
//! whole state sits in one 512-bit register (`avx512`); with AES-NI and SSSE3 eight
//! 128-bit registers hold one row of P and one of Q each (`ni`); every other CPU and
//! architecture uses the tables.

use crate::aes_round::{gmul, sbox};
use crate::{BitsUnsupported, Candidate, State};

/// `T[j][x]`: the MixBytes image of `S[x]` standing in row `j` of a column.
static T: [[u64; 256]; 8] = {
    // Column j = 0 of the circulant, rows 0..7: b[0], b[7], b[6], …, b[1].
    const COEF: [u8; 8] = [2, 7, 5, 3, 5, 4, 3, 2];
    let sb = sbox();
    let mut t = [[0u64; 256]; 8];
    let mut x = 0;
    while x < 256 {
        let s = sb[x];
        let mut w = 0u64;
        let mut i = 0;
        while i < 8 {
            w = (w << 8) | gmul(s, COEF[i]) as u64;
            i += 1;
        }
        let mut j = 0;
        while j < 8 {
            t[j][x] = w.rotate_right(8 * j as u32);
            j += 1;
        }
        x += 1;
    }
    t
};

const ROUNDS: u64 = 10;

/// SubBytes, ShiftBytes (row `j` left by `j`) and MixBytes of one 8×8 state.
#[inline(always)]
fn sub_shift_mix(a: &mut [u64; 8]) {
    let b = *a;
    let byte = |c: usize, j: usize| ((b[c & 7] >> (56 - 8 * j)) & 0xff) as usize;
    for (c, out) in a.iter_mut().enumerate() {
        *out = T[0][byte(c, 0)]
            ^ T[1][byte(c + 1, 1)]
            ^ T[2][byte(c + 2, 2)]
            ^ T[3][byte(c + 3, 3)]
            ^ T[4][byte(c + 4, 4)]
            ^ T[5][byte(c + 5, 5)]
            ^ T[6][byte(c + 6, 6)]
            ^ T[7][byte(c + 7, 7)];
    }
}

/// The permutation P: AddRoundConstant puts the round number in byte (0,0).
fn perm_p_portable(a: &mut [u64; 8]) {
    for r in 0..ROUNDS {
        a[0] ^= r << 56;
        sub_shift_mix(a);
    }
}

/// P on `p` and Q on `q`, round by round (independent work, interleaved for speed).
/// Q's AddRoundConstant puts `0xff ⊕ round` in byte (7,0).
fn perm_pq(p: &mut [u64; 8], q: &mut [u64; 8]) {
    for r in 0..ROUNDS {
        p[0] ^= r << 56;
        q[0] ^= 0xff ^ r;
        sub_shift_mix(p);
        sub_shift_mix(q);
    }
}

/// P and Q with AVX-512, GFNI and VBMI: a whole 64-byte state in one register.
///
/// The register holds the state as it sits in a message block, column after column, so
/// byte `8c + r` is row `r` of column `c` and each 64-bit lane is one column with row 0 in
/// its lowest byte. One round is then:
/// - AddRoundConstant: an XOR with a constant register;
/// - SubBytes: `GF2P8AFFINEINVQB`, which inverts every byte in GF(2^8) (the AES field) and
///   applies an affine map; with the AES matrix and constant 0x63 that is the AES S-box;
/// - ShiftBytes: one byte permutation across the whole register (`VPERMB`);
/// - MixBytes: output row `i` of a column is `Σ_d b_d · row (i + d)` with
///   `b = 02 02 03 04 05 03 05 07`. Rotating every 64-bit lane right by `8d` bits puts row
///   `i + d` in row `i`'s place for all columns at once, so we form the seven rotations and
///   split the coefficients into their bits: `A ⊕ 2·B ⊕ 4·C`, where `A`, `B`, `C` are the
///   XORs of the rotations whose coefficient has bit 0, 1, 2 set (three-input XORs with
///   `VPTERNLOGQ`, the doublings with `GF2P8MULB`).
///
/// P and Q are independent, so they run side by side for instruction-level parallelism.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use core::arch::x86_64::*;

    /// The `VPERMB` indices of ShiftBytes: row `r` of column `c` comes from column `c + r`.
    static SHIFT: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            let (c, r) = (i / 8, i % 8);
            t[i] = (8 * ((c + r) % 8) + r) as u8;
            i += 1;
        }
        t
    };

    /// The AES affine map as a GF2P8AFFINE matrix: byte `7 - i` selects the input bits whose
    /// parity gives output bit `i` (bits `i, i+4, i+5, i+6, i+7` mod 8).
    const AES_AFFINE: i64 = 0xF1E3_C78F_1F3E_7CF8_u64 as i64;

    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
        _mm512_ternarylogic_epi64::<0x96>(a, b, c)
    }

    /// One round after its constant was added: SubBytes, ShiftBytes, MixBytes; then the
    /// next round's constant `next_rc` is added (in a branch that is ready early, off the
    /// round's critical path).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn sub_shift_mix(x: __m512i, shift: __m512i, next_rc: __m512i) -> __m512i {
        let x = _mm512_gf2p8affineinv_epi64_epi8::<0x63>(x, _mm512_set1_epi64(AES_AFFINE));
        let x = _mm512_permutexvar_epi8(shift, x);
        let r1 = _mm512_ror_epi64::<8>(x);
        // Some rotations by shuffles instead: on current Intel cores the 512-bit rotate
        // shares one port with GF2P8*, while the shuffles go to the other.
        let rot16 = _mm512_broadcast_i32x4(_mm_set_epi8(9, 8, 15, 14, 13, 12, 11, 10, 1, 0, 7, 6, 5, 4, 3, 2));
        let rot48 = _mm512_broadcast_i32x4(_mm_set_epi8(13, 12, 11, 10, 9, 8, 15, 14, 5, 4, 3, 2, 1, 0, 7, 6));
        let r2 = _mm512_shuffle_epi8(x, rot16);
        let r3 = _mm512_ror_epi64::<24>(x);
        let r4 = _mm512_shuffle_epi32::<0xb1>(x);
        let r5 = _mm512_ror_epi64::<40>(x);
        let r6 = _mm512_shuffle_epi8(x, rot48);
        let r7 = _mm512_ror_epi64::<56>(x);
        // Coefficients by rotation d = 0..7: 2 2 3 4 5 3 5 7.
        let a = _mm512_xor_si512(xor3(r2, r4, r5), xor3(r6, r7, next_rc)); // bit 0: d = 2, 4, 5, 6, 7
        let b = xor3(xor3(x, r1, r2), r5, r7); // bit 1: d = 0, 1, 2, 5, 7
        let c = _mm512_xor_si512(xor3(r3, r4, r6), r7); // bit 2: d = 3, 4, 6, 7
        let b2 = _mm512_gf2p8mul_epi8(b, _mm512_set1_epi8(2));
        let c4 = _mm512_gf2p8mul_epi8(c, _mm512_set1_epi8(4));
        xor3(a, b2, c4)
    }

    /// The `VPSHUFB` pattern reversing the bytes of each 64-bit lane.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn bswap64(x: __m512i) -> __m512i {
        let m = _mm512_broadcast_i32x4(_mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
        _mm512_shuffle_epi8(x, m)
    }

    /// Loads a chaining value (columns with row 0 in the most significant byte) in the
    /// register layout.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn load_h(h: &[u64; 8]) -> __m512i {
        // SAFETY: an unaligned 64-byte load of the 64-byte array `h`; AVX-512F was
        // checked by the caller (`cpu::has_avx512_gfni()`).
        bswap64(unsafe { _mm512_loadu_si512(h.as_ptr().cast()) })
    }

    /// Stores the register layout back as columns with row 0 in the most significant byte.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn store_h(h: &mut [u64; 8], x: __m512i) {
        // SAFETY: an unaligned 64-byte store into the 64-byte array `h`; AVX-512F was
        // checked by the caller (`cpu::has_avx512_gfni()`).
        unsafe { _mm512_storeu_si512(h.as_mut_ptr().cast(), bswap64(x)) };
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn shift() -> __m512i {
        // SAFETY: an unaligned 64-byte load of the 64-byte static `SHIFT`; AVX-512F was
        // checked by the caller (`cpu::has_avx512_gfni()`).
        unsafe { _mm512_loadu_si512(SHIFT.as_ptr().cast()) }
    }

    /// `h ← P(h ⊕ m) ⊕ Q(m) ⊕ h` for one 64-byte block.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    pub(super) fn compress(h: &mut [u64; 8], block: &[u8]) {
        assert!(block.len() >= 64);
        let sh = shift();
        let hv = load_h(h);
        // SAFETY: an unaligned 64-byte load of `block`, which holds at least 64 bytes
        // (asserted above); AVX-512F was checked by the caller (`cpu::has_avx512_gfni()`).
        let m = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        // The round constants: P's round number in row 0 of column 0, Q's 0xff ⊕ round
        // (= 0xff − round) in row 7 of column 0; round 0's are zero and 0xff.
        let step = _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, 1);
        let mut rcp = _mm512_setzero_si512();
        let mut rcq = _mm512_slli_epi64::<56>(_mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, 0xff));
        let mut p = _mm512_xor_si512(hv, m);
        let mut q = _mm512_xor_si512(m, rcq);
        for r in 0..super::ROUNDS {
            // The next round's constants (none after the last round).
            let last = r + 1 == super::ROUNDS;
            rcp = if last {
                _mm512_setzero_si512()
            } else {
                _mm512_add_epi64(rcp, step)
            };
            rcq = if last {
                _mm512_setzero_si512()
            } else {
                _mm512_sub_epi64(rcq, _mm512_slli_epi64::<56>(step))
            };
            p = sub_shift_mix(p, sh, rcp);
            q = sub_shift_mix(q, sh, rcq);
        }
        store_h(h, xor3(hv, p, q));
    }

    /// The permutation P alone (for the output transformation).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    pub(super) fn perm_p(a: &mut [u64; 8]) {
        let sh = shift();
        let mut p = load_h(a);
        for r in 0..super::ROUNDS as i64 {
            let next = if r + 1 == super::ROUNDS as i64 { 0 } else { r + 1 };
            p = sub_shift_mix(p, sh, _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, next));
        }
        store_h(a, p);
    }
}

/// P and Q with AES-NI and SSSE3, for CPUs without the AVX-512 path.
///
/// Here a register holds one row of both states: row `j` of P in bytes 0..7 and row `j`
/// of Q in bytes 8..15 (column `c` in byte `c` of its half), so eight registers carry P
/// and Q together. One round is then:
/// - AddRoundConstant: XOR into byte 0 of row 0 (P) and byte 8 of row 7 (Q);
/// - ShiftBytes and SubBytes: `AESENCLAST` with a zero key is SubBytes after AES
///   ShiftRows; a `PSHUFB` first moves every byte to where AES ShiftRows will pick it up,
///   with the row's ShiftBytes rotation folded into the same shuffle, so the pair yields
///   exactly the S-boxed, rotated row;
/// - MixBytes: new row `i` is `Σ_d b_d · row (i + d)`, all byte-wise across registers.
///   With `t_i = row_i ⊕ row_(i+1)`, the rows whose coefficient has bit 0, 1, 2 set sum to
///   `A_i = row_(i+2) ⊕ t_(i+4) ⊕ t_(i+6)`, `B_i = t_i ⊕ row_(i+2) ⊕ row_(i+5) ⊕ row_(i+7)`
///   and `C_i = t_(i+3) ⊕ t_(i+6)`, and the new row is `A_i ⊕ 2·(B_i ⊕ 2·C_i)`.
///
/// Rows come from and go to the column layout by an 8×8 byte transpose in `u64`s.
#[cfg(target_arch = "x86_64")]
mod ni {
    use core::arch::x86_64::*;

    /// The `PSHUFB` pattern for row `j`: ShiftBytes (left by `j` in each half), then the
    /// inverse of the AES ShiftRows that `AESENCLAST` applies.
    static SHUF: [[u8; 16]; 8] = {
        let mut t = [[0u8; 16]; 8];
        let mut j = 0;
        while j < 8 {
            let mut i = 0;
            while i < 16 {
                // Output byte i of AESENCLAST is S(input byte src), AES ShiftRows on
                // column i / 4, row i % 4.
                let (col, row) = (i / 4, i % 4);
                let src = 4 * ((col + row) % 4) + row;
                // We want S of the row's byte at ShiftBytes position i.
                let (half, c) = (i / 8, i % 8);
                t[j][src] = (8 * half + (c + j) % 8) as u8;
                i += 1;
            }
            j += 1;
        }
        t
    };

    /// Doubles each byte in GF(2^8).
    #[target_feature(enable = "aes,ssse3")]
    fn xt(x: __m128i) -> __m128i {
        let top = _mm_cmplt_epi8(x, _mm_setzero_si128());
        _mm_xor_si128(_mm_add_epi8(x, x), _mm_and_si128(top, _mm_set1_epi8(0x1b)))
    }

    #[target_feature(enable = "aes,ssse3")]
    fn xor3(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
        _mm_xor_si128(_mm_xor_si128(a, b), c)
    }

    /// Transposes an 8×8 byte matrix held as eight `u64`s (byte `j` of word `i` ↔ byte `i`
    /// of word `j`), by swapping off-diagonal blocks of 4, 2 and 1 bytes.
    fn transpose(a: &mut [u64; 8]) {
        for (s, mask) in [
            (4, 0x0000_0000_ffff_ffff_u64),
            (2, 0x0000_ffff_0000_ffff),
            (1, 0x00ff_00ff_00ff_00ff),
        ] {
            for i in 0..8 {
                if i & s == 0 {
                    let t = ((a[i] >> (8 * s)) ^ a[i + s]) & mask;
                    a[i + s] ^= t;
                    a[i] ^= t << (8 * s);
                }
            }
        }
    }

    /// P on the rows `p` and Q on the rows `q` (row `j` with column `c` in byte `c`).
    #[target_feature(enable = "aes,ssse3")]
    fn perm_pq(p: &mut [u64; 8], q: &mut [u64; 8]) {
        let zero = _mm_setzero_si128();
        let mut x: [__m128i; 8] = core::array::from_fn(|j| _mm_set_epi64x(q[j] as i64, p[j] as i64));
        // SAFETY: unaligned 16-byte loads of the eight 16-byte rows of `SHUF` (SSE2,
        // baseline; the caller checked `cpu::has_aesni()` for this function's features).
        let shuf: [__m128i; 8] = core::array::from_fn(|j| unsafe { _mm_loadu_si128(SHUF[j].as_ptr().cast()) });
        for r in 0..super::ROUNDS as i64 {
            x[0] = _mm_xor_si128(x[0], _mm_set_epi64x(0, r));
            x[7] = _mm_xor_si128(x[7], _mm_set_epi64x(0xff ^ r, 0));
            for (xj, sj) in x.iter_mut().zip(shuf) {
                *xj = _mm_aesenclast_si128(_mm_shuffle_epi8(*xj, sj), zero);
            }
            // (Plain loops rather than closures, so that everything inlines.)
            let mut t = [zero; 8];
            for i in 0..8 {
                t[i] = _mm_xor_si128(x[i], x[(i + 1) % 8]);
            }
            let mut y = [zero; 8];
            for (i, yi) in y.iter_mut().enumerate() {
                let a = xor3(x[(i + 2) % 8], t[(i + 4) % 8], t[(i + 6) % 8]);
                let b = _mm_xor_si128(xor3(t[i], x[(i + 2) % 8], x[(i + 5) % 8]), x[(i + 7) % 8]);
                let c = _mm_xor_si128(t[(i + 3) % 8], t[(i + 6) % 8]);
                *yi = _mm_xor_si128(a, xt(_mm_xor_si128(b, xt(c))));
            }
            x = y;
        }
        for j in 0..8 {
            let mut pair = [0u64; 2];
            // SAFETY: an unaligned 16-byte store into the 16-byte `pair` (SSE2, baseline;
            // the caller checked `cpu::has_aesni()`).
            unsafe { _mm_storeu_si128(pair.as_mut_ptr().cast(), x[j]) };
            (p[j], q[j]) = (pair[0], pair[1]);
        }
    }

    /// Rows of a chaining value (columns with row 0 in the most significant byte).
    fn rows(h: &[u64; 8]) -> [u64; 8] {
        let mut a: [u64; 8] = core::array::from_fn(|c| h[c].swap_bytes());
        transpose(&mut a);
        a
    }

    /// Back from rows to columns with row 0 in the most significant byte.
    fn columns(mut a: [u64; 8]) -> [u64; 8] {
        transpose(&mut a);
        a.map(u64::swap_bytes)
    }

    /// `h ← P(h ⊕ m) ⊕ Q(m) ⊕ h` for one 64-byte block.
    #[target_feature(enable = "aes,ssse3")]
    pub(super) fn compress(h: &mut [u64; 8], block: &[u8]) {
        let mut m: [u64; 8] = core::array::from_fn(|c| u64::from_le_bytes(block[8 * c..8 * c + 8].try_into().unwrap()));
        transpose(&mut m);
        let hr = rows(h);
        let mut p: [u64; 8] = core::array::from_fn(|j| hr[j] ^ m[j]);
        perm_pq(&mut p, &mut m);
        *h = columns(core::array::from_fn(|j| hr[j] ^ p[j] ^ m[j]));
    }

    /// The permutation P alone (for the output transformation).
    #[target_feature(enable = "aes,ssse3")]
    pub(super) fn perm_p(a: &mut [u64; 8]) {
        let mut p = rows(a);
        perm_pq(&mut p, &mut [0; 8]);
        *a = columns(p);
    }
}

/// Which implementation of P and Q this CPU takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    Portable,
    /// AES-NI and SSSE3, one row of P and Q per register ([`ni`]).
    #[cfg(target_arch = "x86_64")]
    AesNi,
    /// AVX-512 with GFNI and VBMI, one state per register ([`avx512`]).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The fastest path this CPU supports.
fn best_path() -> Path {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::aes_round::cpu;
        if cpu::has_avx512_gfni() {
            return Path::Avx512;
        }
        if cpu::has_aesni() {
            return Path::AesNi;
        }
    }
    Path::Portable
}

/// The compression by the path `path` (from [`best_path`]).
#[inline(always)]
fn compress(h: &mut [u64; 8], block: &[u8], path: Path) {
    match path {
        // SAFETY: `Path::Avx512` comes only from `best_path`, after
        // `cpu::has_avx512_gfni()` found AVX-512 F, BW, VBMI and GFNI.
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => unsafe { avx512::compress(h, block) },
        // SAFETY: `Path::AesNi` comes only from `best_path`, after `cpu::has_aesni()` found
        // AES-NI and SSSE3.
        #[cfg(target_arch = "x86_64")]
        Path::AesNi => unsafe { ni::compress(h, block) },
        Path::Portable => compress_portable(h, block),
    }
}

/// P by the path `path` (from [`best_path`]).
fn perm_p(a: &mut [u64; 8], path: Path) {
    match path {
        // SAFETY: `Path::Avx512` comes only from `best_path`, after
        // `cpu::has_avx512_gfni()` found AVX-512 F, BW, VBMI and GFNI.
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => unsafe { avx512::perm_p(a) },
        // SAFETY: `Path::AesNi` comes only from `best_path`, after `cpu::has_aesni()` found
        // AES-NI and SSSE3.
        #[cfg(target_arch = "x86_64")]
        Path::AesNi => unsafe { ni::perm_p(a) },
        Path::Portable => perm_p_portable(a),
    }
}

/// `h ← P(h ⊕ m) ⊕ Q(m) ⊕ h`, portable (64-bit lookup tables).
fn compress_portable(h: &mut [u64; 8], block: &[u8]) {
    let m: [u64; 8] = core::array::from_fn(|c| u64::from_be_bytes(block[8 * c..8 * c + 8].try_into().unwrap()));
    let mut p: [u64; 8] = core::array::from_fn(|c| h[c] ^ m[c]);
    let mut q = m;
    perm_pq(&mut p, &mut q);
    for c in 0..8 {
        h[c] ^= p[c] ^ q[c];
    }
}

#[derive(Clone)]
struct Groestl256 {
    h: [u64; 8],
    buf: [u8; 64],
    len: usize,
    blocks: u64,
    /// A final partial byte (already carrying its padding bit) was taken.
    bits_done: bool,
    /// The implementation for this CPU ([`best_path`]).
    path: Path,
}

impl Groestl256 {
    fn new() -> Self {
        let mut h = [0u64; 8];
        h[7] = 256; // IV: the output length in bits, big-endian in the last bytes.
        Groestl256 {
            h,
            buf: [0; 64],
            len: 0,
            blocks: 0,
            bits_done: false,
            path: best_path(),
        }
    }
}

impl State for Groestl256 {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (64 - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < 64 {
                return;
            }
            let block = self.buf;
            compress(&mut self.h, &block, self.path);
            self.blocks += 1;
            self.len = 0;
        }
        let mut chunks = data.chunks_exact(64);
        for block in &mut chunks {
            compress(&mut self.h, block, self.path);
            self.blocks += 1;
        }
        let rest = chunks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(BitsUnsupported);
        }
        // The message bits, then the padding '1' bit right after them.
        self.buf[self.len] = (last & (0xff << (8 - bits))) | (0x80 >> bits);
        self.len += 1;
        self.bits_done = true;
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if !self.bits_done {
            self.buf[self.len] = 0x80;
            self.len += 1;
        }
        // The partial byte may have filled the block exactly.
        let mut tail = [0u8; 128];
        tail[..self.len].copy_from_slice(&self.buf[..self.len]);
        let n = if self.len <= 56 { 64 } else { 128 };
        let total = self.blocks + (n / 64) as u64;
        tail[n - 8..n].copy_from_slice(&total.to_be_bytes());
        for block in tail[..n].chunks_exact(64) {
            compress(&mut self.h, block, self.path);
        }
        let mut x = self.h;
        perm_p(&mut x, self.path);
        for c in 4..8 {
            out[8 * (c - 4)..8 * (c - 3)].copy_from_slice(&(x[c] ^ self.h[c]).to_be_bytes());
        }
    }

    fn copy(&self) -> Box<dyn State> {
        Box::new(self.clone())
    }
}

struct Groestl;

/// The implementation this CPU runs (`best_path`), reported as the subject's implementation.
fn path_name() -> &'static str {
    match best_path() {
        Path::Portable => "portable",
        #[cfg(target_arch = "x86_64")]
        Path::AesNi => "aesni",
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => "avx512-gfni",
    }
}

impl Candidate for Groestl {
    fn name(&self) -> &'static str {
        "Groestl-256-r2"
    }
    fn label(&self) -> &'static str {
        "Grøstl-256 round 2 (original constants and ShiftBytes, 10 rounds)"
    }
    fn kat_dir(&self) -> &'static str {
        "groestl"
    }
    fn block_bytes(&self) -> usize {
        64
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn State> {
        Box::new(Groestl256::new())
    }
}

/// Grøstl-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Groestl))
}

#[cfg(test)]
mod tests {
    use crate::testutil::rng;

    /// The accelerated paths this CPU can run.
    fn fast_paths() -> Vec<super::Path> {
        #[cfg(target_arch = "x86_64")]
        {
            use super::Path;
            use crate::aes_round::cpu;
            let mut paths = vec![];
            if cpu::has_aesni() {
                paths.push(Path::AesNi);
            }
            if cpu::has_avx512_gfni() {
                paths.push(Path::Avx512);
            }
            paths
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            vec![]
        }
    }

    /// The fast compressions and P equal the portable ones on random inputs.
    #[test]
    fn fast_matches_portable() {
        let paths = fast_paths();
        let mut next = rng(0x6705_7256);
        for i in 0..2000 {
            let h: [u64; 8] = core::array::from_fn(|_| next());
            let block: Vec<u8> = (0..64).map(|_| next() as u8).collect();
            let mut want = h;
            super::compress_portable(&mut want, &block);
            let mut want_p = want;
            super::perm_p_portable(&mut want_p);
            for &p in &paths {
                let mut got = h;
                super::compress(&mut got, &block, p);
                assert_eq!(want, got, "compress, case {i}, {p:?}");
                super::perm_p(&mut got, p);
                assert_eq!(want_p, got, "P, case {i}, {p:?}");
            }
        }
    }
}
