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

use crate::aes_round::{round, round_nokey};
use crate::{BitsUnsupported, Candidate, State};

const BLOCK: usize = 192;

/// Multiplication by 2 of the four bytes of `x` in GF(2^8).
#[inline(always)]
fn xt(x: u32) -> u32 {
    ((x & 0x7f7f_7f7f) << 1) ^ (((x >> 7) & 0x0101_0101) * 0x1b)
}

/// The ECHO compression function; `k` is the counter for this block.
fn compress(v: &mut [[u32; 4]; 4], block: &[u8], k: u128) {
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
            compress(&mut self.v, &block, self.counter);
            self.len = 0;
        }
        let mut chunks = data.chunks_exact(BLOCK);
        for block in &mut chunks {
            self.counter += (BLOCK * 8) as u128;
            compress(&mut self.v, block, self.counter);
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
            compress(&mut self.v, &block, total);
            0
        };
        last[174..176].copy_from_slice(&256u16.to_le_bytes());
        last[176..192].copy_from_slice(&total.to_le_bytes());
        compress(&mut self.v, &last, last_k);
        for (o, x) in out.chunks_exact_mut(4).zip(self.v[..2].iter().flatten()) {
            o.copy_from_slice(&x.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn State> {
        Box::new(self.clone())
    }
}

struct Echo;

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
    fn start(&self) -> Box<dyn State> {
        // Each 128-bit chaining word starts as the digest size, 256.
        let iv = [256, 0, 0, 0];
        Box::new(Echo256 {
            v: [iv; 4],
            buf: [0; BLOCK],
            len: 0,
            counter: 0,
            extra_bits: 0,
        })
    }
}

/// ECHO-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Echo))
}
