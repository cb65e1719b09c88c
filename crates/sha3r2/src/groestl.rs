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
//! S-box.

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
fn perm_p(a: &mut [u64; 8]) {
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

/// `h ← P(h ⊕ m) ⊕ Q(m) ⊕ h`.
fn compress(h: &mut [u64; 8], block: &[u8]) {
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
            compress(&mut self.h, &block);
            self.blocks += 1;
            self.len = 0;
        }
        let mut chunks = data.chunks_exact(64);
        for block in &mut chunks {
            compress(&mut self.h, block);
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
            compress(&mut self.h, block);
        }
        let mut x = self.h;
        perm_p(&mut x);
        for c in 4..8 {
            out[8 * (c - 4)..8 * (c - 3)].copy_from_slice(&(x[c] ^ self.h[c]).to_be_bytes());
        }
    }

    fn copy(&self) -> Box<dyn State> {
        Box::new(self.clone())
    }
}

struct Groestl;

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
    fn start(&self) -> Box<dyn State> {
        Box::new(Groestl256::new())
    }
}

/// Grøstl-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Groestl))
}
