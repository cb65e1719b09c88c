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

/// The compression function, salt zero, counter `t` (bits).
fn compress(h: &mut [u32; 8], block: &[u8; 64], t: u64) {
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
