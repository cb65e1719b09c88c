//! ECHO-256, round-2 version, from "SHA-3 Proposal: ECHO" (Benadjila, Billet, Gilbert,
//! Macario-Rat, Peyrin, Robshaw, Seurin; version 2.0, 2009). The salt is all zero.
//!
//! HAIFA-style iteration: the 2048-bit state is sixteen 128-bit words, the 512-bit
//! chaining value in words 0..3 and a 1536-bit (192-byte) message block in words 4..15.
//! Eight rounds of BIG.SubWords (two AES rounds per word, keyed by a 128-bit counter that
//! starts at the number of message bits hashed so far and steps by one per word, then by
//! the salt), BIG.ShiftRows and BIG.MixColumns (AES MixColumns across the four words of a
//! column, byte by byte); then BIG.Final folds the state and the input into the new
//! chaining value. Padding: a 1 bit, zeros, the 16-bit digest size and the 128-bit message
//! length (little-endian); a final block holding no message bits is compressed with
//! counter 0.
//!
//! Three implementations of the compression function, chosen once per message by run-time
//! CPU detection: four 128-bit words per 512-bit register with VAES, AVX-512 and GFNI
//! (`vaes`); one word per register with AES-NI (`ni`); and the portable table-driven
//! code (`compress_portable`), used on every other CPU and architecture.

use crate::aes_round::{round, round_nokey};
use crate::{BitsUnsupported, Candidate, State};

const BLOCK: usize = 192;

/// Multiplication by 2 of the four bytes of `x` in GF(2^8).
#[inline(always)]
fn xt(x: u32) -> u32 {
    ((x & 0x7f7f_7f7f) << 1) ^ (((x >> 7) & 0x0101_0101) * 0x1b)
}

/// ECHO's compression with AES-NI: each 128-bit word lives in one SSE register.
///
/// BIG.SubWords is two `AESENC` per word, the first keyed by the counter and the second by
/// the (zero) salt. BIG.ShiftRows moves whole words, so it costs nothing: the fused
/// ShiftRows/MixColumns step below just reads its inputs from the shifted positions.
/// BIG.MixColumns is the AES MixColumns applied to the same byte position of the four
/// words of a column, so it becomes byte-wise vector arithmetic on four whole registers:
/// XORs and a doubling in GF(2^8) done as `x + x` with `0x1b` folded back into the bytes
/// whose top bit was set.
#[cfg(target_arch = "x86_64")]
mod ni {
    use core::arch::x86_64::*;

    /// Doubles each of the sixteen bytes of `x` in GF(2^8).
    #[target_feature(enable = "aes,ssse3")]
    fn xt(x: __m128i) -> __m128i {
        let top = _mm_cmplt_epi8(x, _mm_setzero_si128());
        _mm_xor_si128(_mm_add_epi8(x, x), _mm_and_si128(top, _mm_set1_epi8(0x1b)))
    }

    /// The ECHO compression function; `k` is the counter for this block.
    #[target_feature(enable = "aes,ssse3")]
    pub(super) fn compress(v: &mut [[u32; 4]; 4], block: &[u8], k: u128) {
        assert!(block.len() >= super::BLOCK);
        let zero = _mm_setzero_si128();
        let mut w = [zero; 16];
        for (x, vi) in w.iter_mut().zip(v.iter()) {
            // SAFETY: an unaligned 16-byte load of one 16-byte chaining word (SSE2, baseline
            // on x86-64; the caller checked `cpu::has_aesni()` for this function's features).
            *x = unsafe { _mm_loadu_si128(vi.as_ptr().cast()) };
        }
        for (i, x) in w[4..].iter_mut().enumerate() {
            // SAFETY: an unaligned 16-byte load at 16·i < 192 of `block` (length asserted);
            // SSE2 is baseline, the rest was checked by the caller (`cpu::has_aesni()`).
            *x = unsafe { _mm_loadu_si128(block.as_ptr().add(16 * i).cast()) };
        }
        let start = w;
        let mut k = k;
        for _ in 0..8 {
            // BIG.SubWords.
            for x in w.iter_mut() {
                let key = _mm_set_epi64x((k >> 64) as i64, k as i64);
                *x = _mm_aesenc_si128(_mm_aesenc_si128(*x, key), zero);
                k = k.wrapping_add(1);
            }
            // BIG.ShiftRows fused with BIG.MixColumns, as in the portable code.
            let s = w;
            for c in 0..4 {
                let a = s[4 * c];
                let b = s[4 * ((c + 1) & 3) + 1];
                let cc = s[4 * ((c + 2) & 3) + 2];
                let d = s[4 * ((c + 3) & 3) + 3];
                let (ab, bc, cd) = (_mm_xor_si128(a, b), _mm_xor_si128(b, cc), _mm_xor_si128(cc, d));
                let (abx, bcx, cdx) = (xt(ab), xt(bc), xt(cd));
                w[4 * c] = _mm_xor_si128(_mm_xor_si128(abx, bc), d);
                w[4 * c + 1] = _mm_xor_si128(_mm_xor_si128(bcx, a), cd);
                w[4 * c + 2] = _mm_xor_si128(_mm_xor_si128(cdx, ab), d);
                w[4 * c + 3] = _mm_xor_si128(_mm_xor_si128(abx, bcx), _mm_xor_si128(_mm_xor_si128(cdx, ab), cc));
            }
        }
        // BIG.Final.
        for (i, vi) in v.iter_mut().enumerate() {
            let x = _mm_xor_si128(
                _mm_xor_si128(
                    _mm_xor_si128(start[i], start[i + 4]),
                    _mm_xor_si128(start[i + 8], start[i + 12]),
                ),
                _mm_xor_si128(_mm_xor_si128(w[i], w[i + 4]), _mm_xor_si128(w[i + 8], w[i + 12])),
            );
            // SAFETY: an unaligned 16-byte store into one 16-byte chaining word (SSE2,
            // baseline; the caller checked `cpu::has_aesni()`).
            unsafe { _mm_storeu_si128(vi.as_mut_ptr().cast(), x) };
        }
    }
}

/// ECHO's compression with 512-bit VAES: four 128-bit words per register.
///
/// Register `R[r]` holds row `r` of the 4×4 matrix of words, lane `c` being the word of
/// column `c` (word `4c + r`). Then:
/// - BIG.SubWords is two `VAESENC` per register; the counter keys of register `r` are
///   `k + 4c + r` in lane `c`, and step by 16 per round (a 64-bit add on the low halves;
///   blocks whose counter would carry into the high half go to the 128-bit path instead);
/// - BIG.ShiftRows rotates the lanes of `R[r]` by `r` (`VSHUFI64X2`);
/// - BIG.MixColumns mixes the same byte of the four rows, i.e. it is byte-wise arithmetic
///   on the four registers (doubling in GF(2^8) with `GF2P8MULB`, XORs with `VPTERNLOGQ`);
/// - BIG.Final XORs the four columns of (input ⊕ output): transposing back turns the
///   columns into registers, so that is three XORs of whole registers.
///
/// A message block arrives as three registers holding columns 1..3 (and the chaining
/// value is column 0); one 4×4 transpose of 128-bit lanes turns columns into rows.
#[cfg(target_arch = "x86_64")]
mod vaes {
    use core::arch::x86_64::*;

    /// Transposes a 4×4 matrix of 128-bit lanes (an involution).
    #[target_feature(enable = "avx512f,avx512bw,vaes,gfni")]
    fn transpose(z: [__m512i; 4]) -> [__m512i; 4] {
        let t0 = _mm512_shuffle_i64x2::<0x44>(z[0], z[1]);
        let t1 = _mm512_shuffle_i64x2::<0xee>(z[0], z[1]);
        let t2 = _mm512_shuffle_i64x2::<0x44>(z[2], z[3]);
        let t3 = _mm512_shuffle_i64x2::<0xee>(z[2], z[3]);
        [
            _mm512_shuffle_i64x2::<0x88>(t0, t2),
            _mm512_shuffle_i64x2::<0xdd>(t0, t2),
            _mm512_shuffle_i64x2::<0x88>(t1, t3),
            _mm512_shuffle_i64x2::<0xdd>(t1, t3),
        ]
    }

    #[target_feature(enable = "avx512f,avx512bw,vaes,gfni")]
    fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
        _mm512_ternarylogic_epi64::<0x96>(a, b, c)
    }

    /// The ECHO compression function; `k` is the counter for this block.
    #[target_feature(enable = "avx512f,avx512bw,vaes,gfni")]
    pub(super) fn compress(v: &mut [[u32; 4]; 4], block: &[u8], k: u128) {
        assert!(block.len() >= super::BLOCK);
        let (lo, hi) = (k as u64, (k >> 64) as u64);
        if lo > u64::MAX - 127 {
            // The low counter half carries within this block: take the path with full
            // 128-bit counters. (Safe to call: the features enabled here, VAES in
            // particular, imply AES-NI and SSSE3.)
            super::ni::compress(v, block, k);
            return;
        }
        // SAFETY: unaligned 64-byte loads of the 64-byte `v` and of bytes 0..192 of
        // `block` (length asserted above); AVX-512F was checked by the caller
        // (`cpu::has_vaes512()`).
        let cols = unsafe {
            [
                _mm512_loadu_si512(v.as_ptr().cast()),
                _mm512_loadu_si512(block.as_ptr().cast()),
                _mm512_loadu_si512(block.as_ptr().add(64).cast()),
                _mm512_loadu_si512(block.as_ptr().add(128).cast()),
            ]
        };
        let start = transpose(cols);
        let mut w = start;
        // Counter keys: lane c of row r gets k + 4c + r (no carry out of the low half, see above).
        let base = _mm512_broadcast_i32x4(_mm_set_epi64x(hi as i64, lo as i64));
        let mut key: [__m512i; 4] = core::array::from_fn(|r| {
            _mm512_add_epi64(
                base,
                _mm512_set_epi64(0, 12 + r as i64, 0, 8 + r as i64, 0, 4 + r as i64, 0, r as i64),
            )
        });
        let step = _mm512_set_epi64(0, 16, 0, 16, 0, 16, 0, 16);
        let zero = _mm512_setzero_si512();
        let two = _mm512_set1_epi8(2);
        for _ in 0..8 {
            // BIG.SubWords.
            for (x, kr) in w.iter_mut().zip(key.iter_mut()) {
                *x = _mm512_aesenc_epi128(_mm512_aesenc_epi128(*x, *kr), zero);
                *kr = _mm512_add_epi64(*kr, step);
            }
            // BIG.ShiftRows: lane c of row r takes lane c + r.
            let a = w[0];
            let b = _mm512_shuffle_i64x2::<0x39>(w[1], w[1]);
            let c = _mm512_shuffle_i64x2::<0x4e>(w[2], w[2]);
            let d = _mm512_shuffle_i64x2::<0x93>(w[3], w[3]);
            // BIG.MixColumns.
            let (ab, bc, cd) = (_mm512_xor_si512(a, b), _mm512_xor_si512(b, c), _mm512_xor_si512(c, d));
            let abx = _mm512_gf2p8mul_epi8(ab, two);
            let bcx = _mm512_gf2p8mul_epi8(bc, two);
            let cdx = _mm512_gf2p8mul_epi8(cd, two);
            w[0] = xor3(abx, bc, d); // 2a + 3b + c + d
            w[1] = xor3(bcx, a, cd); // a + 2b + 3c + d
            w[2] = xor3(cdx, ab, d); // a + b + 2c + 3d
            w[3] = xor3(xor3(abx, bcx, cdx), ab, c); // 3a + b + c + 2d
        }
        // BIG.Final: back to columns, then the XOR of the four columns.
        let x: [__m512i; 4] = core::array::from_fn(|r| _mm512_xor_si512(start[r], w[r]));
        let z = transpose(x);
        let out = _mm512_xor_si512(_mm512_xor_si512(z[0], z[1]), _mm512_xor_si512(z[2], z[3]));
        // SAFETY: an unaligned 64-byte store into the 64-byte `v`; AVX-512F was checked by
        // the caller (`cpu::has_vaes512()`).
        unsafe { _mm512_storeu_si512(v.as_mut_ptr().cast(), out) };
    }
}

/// Which compression path this CPU takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    Portable,
    /// AES-NI, one word per register ([`ni`]).
    #[cfg(target_arch = "x86_64")]
    AesNi,
    /// VAES on 512-bit registers, four words per register ([`vaes`]).
    #[cfg(target_arch = "x86_64")]
    Vaes512,
}

/// The compression by the path `path` (from [`best_path`]).
#[inline(always)]
fn compress(v: &mut [[u32; 4]; 4], block: &[u8], k: u128, path: Path) {
    match path {
        // SAFETY: `Path::Vaes512` comes only from `best_path`, after `cpu::has_vaes512()`
        // found AVX-512 F/BW, VAES and GFNI (and AES-NI with SSSE3).
        #[cfg(target_arch = "x86_64")]
        Path::Vaes512 => unsafe { vaes::compress(v, block, k) },
        // SAFETY: `Path::AesNi` comes only from `best_path`, after `cpu::has_aesni()` found
        // AES-NI and SSSE3.
        #[cfg(target_arch = "x86_64")]
        Path::AesNi => unsafe { ni::compress(v, block, k) },
        Path::Portable => compress_portable(v, block, k),
    }
}

/// The fastest compression path this CPU supports.
fn best_path() -> Path {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::aes_round::cpu;
        if cpu::has_vaes512() {
            return Path::Vaes512;
        }
        if cpu::has_aesni() {
            return Path::AesNi;
        }
    }
    Path::Portable
}

/// The ECHO compression function, portable (table-driven AES rounds); `k` is the counter
/// for this block.
fn compress_portable(v: &mut [[u32; 4]; 4], block: &[u8], k: u128) {
    let mut w = [[0u32; 4]; 16];
    w[..4].copy_from_slice(v);
    for (i, word) in w[4..].iter_mut().enumerate() {
        for (j, x) in word.iter_mut().enumerate() {
            let o = 16 * i + 4 * j;
            *x = u32::from_le_bytes(block[o..o + 4].try_into().unwrap());
        }
    }
    let start = w;
    let mut k = k;
    for _ in 0..8 {
        // BIG.SubWords.
        for x in w.iter_mut() {
            let key = [k as u32, (k >> 32) as u32, (k >> 64) as u32, (k >> 96) as u32];
            *x = round_nokey(round(*x, key));
            k = k.wrapping_add(1);
        }
        // BIG.ShiftRows (row r, the word index mod 4, rotates left by r columns) fused
        // with BIG.MixColumns (AES MixColumns on each byte position of a column's words).
        let s = w;
        for c in 0..4 {
            for n in 0..4 {
                let a = s[4 * c][n];
                let b = s[4 * ((c + 1) & 3) + 1][n];
                let cc = s[4 * ((c + 2) & 3) + 2][n];
                let d = s[4 * ((c + 3) & 3) + 3][n];
                let (ab, bc, cd) = (a ^ b, b ^ cc, cc ^ d);
                let (abx, bcx, cdx) = (xt(ab), xt(bc), xt(cd));
                w[4 * c][n] = abx ^ bc ^ d; // 2a + 3b + c + d
                w[4 * c + 1][n] = bcx ^ a ^ cd; // a + 2b + 3c + d
                w[4 * c + 2][n] = cdx ^ ab ^ d; // a + b + 2c + 3d
                w[4 * c + 3][n] = abx ^ bcx ^ cdx ^ ab ^ cc; // 3a + b + c + 2d
            }
        }
    }
    // BIG.Final.
    for (i, vi) in v.iter_mut().enumerate() {
        for n in 0..4 {
            vi[n] = start[i][n]
                ^ start[i + 4][n]
                ^ start[i + 8][n]
                ^ start[i + 12][n]
                ^ w[i][n]
                ^ w[i + 4][n]
                ^ w[i + 8][n]
                ^ w[i + 12][n];
        }
    }
}

#[derive(Clone)]
struct Echo256 {
    v: [[u32; 4]; 4],
    buf: [u8; BLOCK],
    len: usize,
    /// Message bits in the blocks compressed so far.
    counter: u128,
    /// Message bits in a final partial byte (its padding bit is already in `buf`).
    extra_bits: u32,
    /// The compression path for this CPU ([`best_path`]).
    path: Path,
}

impl State for Echo256 {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (BLOCK - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < BLOCK {
                return;
            }
            self.counter += (BLOCK * 8) as u128;
            let block = self.buf;
            compress(&mut self.v, &block, self.counter, self.path);
            self.len = 0;
        }
        let mut chunks = data.chunks_exact(BLOCK);
        for block in &mut chunks {
            self.counter += (BLOCK * 8) as u128;
            compress(&mut self.v, block, self.counter, self.path);
        }
        let rest = chunks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(BitsUnsupported);
        }
        self.buf[self.len] = (last & (0xff << (8 - bits))) | (0x80 >> bits);
        self.extra_bits = bits;
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        let in_block = (self.len as u128) * 8 + self.extra_bits as u128;
        let total = self.counter + in_block;
        if self.extra_bits == 0 {
            self.buf[self.len] = 0x80;
        }
        let end = self.len + 1;
        self.buf[end..].fill(0);
        let mut last = [0u8; BLOCK];
        let last_k = if end <= 174 {
            last = self.buf;
            if in_block == 0 {
                0
            } else {
                total
            }
        } else {
            let block = self.buf;
            compress(&mut self.v, &block, total, self.path);
            0
        };
        last[174..176].copy_from_slice(&256u16.to_le_bytes());
        last[176..192].copy_from_slice(&total.to_le_bytes());
        compress(&mut self.v, &last, last_k, self.path);
        for (o, x) in out.chunks_exact_mut(4).zip(self.v[..2].iter().flatten()) {
            o.copy_from_slice(&x.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn State> {
        Box::new(self.clone())
    }
}

struct Echo;

/// The implementation this CPU runs (`best_path`), reported as the subject's implementation.
fn path_name() -> &'static str {
    match best_path() {
        Path::Portable => "portable",
        #[cfg(target_arch = "x86_64")]
        Path::AesNi => "aesni",
        #[cfg(target_arch = "x86_64")]
        Path::Vaes512 => "vaes-avx512-gfni",
    }
}

impl Candidate for Echo {
    fn name(&self) -> &'static str {
        "ECHO-256-r2"
    }
    fn label(&self) -> &'static str {
        "ECHO-256 round 2 (8 rounds, zero salt)"
    }
    fn kat_dir(&self) -> &'static str {
        "echo"
    }
    fn block_bytes(&self) -> usize {
        BLOCK
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn State> {
        // Each 128-bit chaining word starts as the digest size, 256.
        let iv = [256, 0, 0, 0];
        Box::new(Echo256 {
            v: [iv; 4],
            buf: [0; BLOCK],
            len: 0,
            counter: 0,
            extra_bits: 0,
            path: best_path(),
        })
    }
}

/// ECHO-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Echo))
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
            if cpu::has_vaes512() {
                paths.push(Path::Vaes512);
            }
            paths
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            vec![]
        }
    }

    /// The fast compressions equal the portable one on random chaining values, blocks and
    /// counters, including counters whose low 64 bits (or all 128) wrap within the block.
    #[test]
    fn fast_matches_portable() {
        let paths = fast_paths();
        let mut next = rng(0xec40_0256);
        for i in 0..1000 {
            let v: [[u32; 4]; 4] = core::array::from_fn(|_| core::array::from_fn(|_| next() as u32));
            let block: Vec<u8> = (0..super::BLOCK).map(|_| next() as u8).collect();
            let r = (next() & 0xff) as u128;
            let k: u128 = match i % 5 {
                0 => 0,
                1 => (u64::MAX as u128) - r,
                2 => u128::MAX - r,
                3 => next() as u128,
                _ => (next() as u128) << 64 | next() as u128,
            };
            let mut want = v;
            super::compress_portable(&mut want, &block, k);
            for &p in &paths {
                let mut got = v;
                super::compress(&mut got, &block, k, p);
                assert_eq!(want, got, "case {i}, {p:?}");
            }
        }
    }
}
