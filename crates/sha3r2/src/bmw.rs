//! Blue Midnight Wish BMW-256, the tweaked version submitted for round 2, written from the
//! round-2 specification ("Cryptographic Hash Function BLUE MIDNIGHT WISH", Gligoroski et
//! al., tweaked 2009 document).
//!
//! A double-pipe design: a 512-bit chaining value `H` (sixteen 32-bit words) and 512-bit
//! blocks of sixteen little-endian words. The compression is `f2(M, H, f1(M, H, f0(M, H)))`
//! with the round-2 tweaks (`f0` adds `H`, `AddElement` rotates the message words). Padding
//! is a 1 bit, zeros and the 64-bit little-endian bit length; a final compression keyed with
//! `0xaaaaaaa0 + i` takes the chaining value as its message, and the digest is the last
//! eight words. The IV `0x40414243 + 0x04040404 * i` and the final constant are generated.

/// Block size in bytes.
const BLOCK: usize = 64;

struct Bmw256;

/// BMW-256 (round-2 tweak).
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Bmw256))
}

impl crate::Candidate for Bmw256 {
    fn name(&self) -> &'static str {
        "BMW-256-r2"
    }
    fn label(&self) -> &'static str {
        "Blue Midnight Wish BMW-256 round 2 (tweaked version)"
    }
    fn kat_dir(&self) -> &'static str {
        "bmw"
    }
    fn block_bytes(&self) -> usize {
        BLOCK
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            h: core::array::from_fn(|i| 0x4041_4243u32.wrapping_add(0x0404_0404u32.wrapping_mul(i as u32))),
            buf: [0; BLOCK],
            len: 0,
            bits: 0,
        })
    }
}

#[derive(Clone)]
struct State {
    h: [u32; 16],
    buf: [u8; BLOCK],
    len: usize,
    /// Message length in bits so far (whole bytes; plus the final partial byte's bits).
    bits: u64,
}

#[inline(always)]
fn s0(x: u32) -> u32 {
    (x >> 1) ^ (x << 3) ^ x.rotate_left(4) ^ x.rotate_left(19)
}
#[inline(always)]
fn s1(x: u32) -> u32 {
    (x >> 1) ^ (x << 2) ^ x.rotate_left(8) ^ x.rotate_left(23)
}
#[inline(always)]
fn s2(x: u32) -> u32 {
    (x >> 2) ^ (x << 1) ^ x.rotate_left(12) ^ x.rotate_left(25)
}
#[inline(always)]
fn s3(x: u32) -> u32 {
    (x >> 2) ^ (x << 2) ^ x.rotate_left(15) ^ x.rotate_left(29)
}
#[inline(always)]
fn s4(x: u32) -> u32 {
    (x >> 1) ^ x
}
#[inline(always)]
fn s5(x: u32) -> u32 {
    (x >> 2) ^ x
}

/// The BMW-256 compression function: returns the new chaining value.
#[inline(always)]
fn compress(h: &[u32; 16], m: &[u32; 16]) -> [u32; 16] {
    let t: [u32; 16] = core::array::from_fn(|i| m[i] ^ h[i]);
    // f0: the bijective transform of M xor H.
    let w = [
        t[5].wrapping_sub(t[7])
            .wrapping_add(t[10])
            .wrapping_add(t[13])
            .wrapping_add(t[14]),
        t[6].wrapping_sub(t[8])
            .wrapping_add(t[11])
            .wrapping_add(t[14])
            .wrapping_sub(t[15]),
        t[0].wrapping_add(t[7])
            .wrapping_add(t[9])
            .wrapping_sub(t[12])
            .wrapping_add(t[15]),
        t[0].wrapping_sub(t[1])
            .wrapping_add(t[8])
            .wrapping_sub(t[10])
            .wrapping_add(t[13]),
        t[1].wrapping_add(t[2])
            .wrapping_add(t[9])
            .wrapping_sub(t[11])
            .wrapping_sub(t[14]),
        t[3].wrapping_sub(t[2])
            .wrapping_add(t[10])
            .wrapping_sub(t[12])
            .wrapping_add(t[15]),
        t[4].wrapping_sub(t[0])
            .wrapping_sub(t[3])
            .wrapping_sub(t[11])
            .wrapping_add(t[13]),
        t[1].wrapping_sub(t[4])
            .wrapping_sub(t[5])
            .wrapping_sub(t[12])
            .wrapping_sub(t[14]),
        t[2].wrapping_sub(t[5])
            .wrapping_sub(t[6])
            .wrapping_add(t[13])
            .wrapping_sub(t[15]),
        t[0].wrapping_sub(t[3])
            .wrapping_add(t[6])
            .wrapping_sub(t[7])
            .wrapping_add(t[14]),
        t[8].wrapping_sub(t[1])
            .wrapping_sub(t[4])
            .wrapping_sub(t[7])
            .wrapping_add(t[15]),
        t[8].wrapping_sub(t[0])
            .wrapping_sub(t[2])
            .wrapping_sub(t[5])
            .wrapping_add(t[9]),
        t[1].wrapping_add(t[3])
            .wrapping_sub(t[6])
            .wrapping_sub(t[9])
            .wrapping_add(t[10]),
        t[2].wrapping_add(t[4])
            .wrapping_add(t[7])
            .wrapping_add(t[10])
            .wrapping_add(t[11]),
        t[3].wrapping_sub(t[5])
            .wrapping_add(t[8])
            .wrapping_sub(t[11])
            .wrapping_sub(t[12]),
        t[12]
            .wrapping_sub(t[4])
            .wrapping_sub(t[6])
            .wrapping_sub(t[9])
            .wrapping_add(t[13]),
    ];
    let mut q = [0u32; 32];
    for i in 0..16 {
        let s = match i % 5 {
            0 => s0(w[i]),
            1 => s1(w[i]),
            2 => s2(w[i]),
            3 => s3(w[i]),
            _ => s4(w[i]),
        };
        q[i] = s.wrapping_add(h[(i + 1) & 15]);
    }
    // f1: two rounds of expand1, fourteen of expand2.
    let add_element = |j: usize| -> u32 {
        let rm = |k: usize| m[k & 15].rotate_left((k & 15) as u32 + 1);
        rm(j)
            .wrapping_add(rm(j + 3))
            .wrapping_sub(rm(j + 10))
            .wrapping_add((j as u32 + 16).wrapping_mul(0x0555_5555))
            ^ h[(j + 7) & 15]
    };
    for j in 16..18 {
        let mut x = add_element(j - 16);
        for k in 0..16 {
            let v = q[j - 16 + k];
            x = x.wrapping_add(match k & 3 {
                0 => s1(v),
                1 => s2(v),
                2 => s3(v),
                _ => s0(v),
            });
        }
        q[j] = x;
    }
    for j in 18..32 {
        q[j] = q[j - 16]
            .wrapping_add(q[j - 15].rotate_left(3))
            .wrapping_add(q[j - 14])
            .wrapping_add(q[j - 13].rotate_left(7))
            .wrapping_add(q[j - 12])
            .wrapping_add(q[j - 11].rotate_left(13))
            .wrapping_add(q[j - 10])
            .wrapping_add(q[j - 9].rotate_left(16))
            .wrapping_add(q[j - 8])
            .wrapping_add(q[j - 7].rotate_left(19))
            .wrapping_add(q[j - 6])
            .wrapping_add(q[j - 5].rotate_left(23))
            .wrapping_add(q[j - 4])
            .wrapping_add(q[j - 3].rotate_left(27))
            .wrapping_add(s4(q[j - 2]))
            .wrapping_add(s5(q[j - 1]))
            .wrapping_add(add_element(j - 16));
    }
    // f2: folding.
    let xl = q[16..24].iter().fold(0, |a, &x| a ^ x);
    let xh = q[24..32].iter().fold(xl, |a, &x| a ^ x);
    let mut o = [0u32; 16];
    o[0] = ((xh << 5) ^ (q[16] >> 5) ^ m[0]).wrapping_add(xl ^ q[24] ^ q[0]);
    o[1] = ((xh >> 7) ^ (q[17] << 8) ^ m[1]).wrapping_add(xl ^ q[25] ^ q[1]);
    o[2] = ((xh >> 5) ^ (q[18] << 5) ^ m[2]).wrapping_add(xl ^ q[26] ^ q[2]);
    o[3] = ((xh >> 1) ^ (q[19] << 5) ^ m[3]).wrapping_add(xl ^ q[27] ^ q[3]);
    o[4] = ((xh >> 3) ^ q[20] ^ m[4]).wrapping_add(xl ^ q[28] ^ q[4]);
    o[5] = ((xh << 6) ^ (q[21] >> 6) ^ m[5]).wrapping_add(xl ^ q[29] ^ q[5]);
    o[6] = ((xh >> 4) ^ (q[22] << 6) ^ m[6]).wrapping_add(xl ^ q[30] ^ q[6]);
    o[7] = ((xh >> 11) ^ (q[23] << 2) ^ m[7]).wrapping_add(xl ^ q[31] ^ q[7]);
    let lo = [xl << 8, xl >> 6, xl << 6, xl << 4, xl >> 3, xl >> 4, xl >> 7, xl >> 2];
    for i in 0..8 {
        o[8 + i] = o[(i + 4) & 7]
            .rotate_left(9 + i as u32)
            .wrapping_add(xh ^ q[24 + i] ^ m[8 + i])
            .wrapping_add(lo[i] ^ q[16 + ((i + 7) & 7)] ^ q[8 + i]);
    }
    o
}

fn words(block: &[u8]) -> [u32; 16] {
    core::array::from_fn(|i| u32::from_le_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]))
}

impl State {
    fn block(&mut self, block: &[u8]) {
        self.h = compress(&self.h, &words(block));
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        self.bits = self.bits.wrapping_add((data.len() as u64) << 3);
        if self.len > 0 {
            let take = (BLOCK - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < BLOCK {
                return;
            }
            let blk = self.buf;
            self.block(&blk);
            self.len = 0;
        }
        let mut chunks = data.chunks_exact(BLOCK);
        for blk in &mut chunks {
            self.block(blk);
        }
        let rest = chunks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }
    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        // The partial byte, its padding bit in place; `finish` sees the odd bit count.
        self.buf[self.len] = (last & (0xFFu8 << (8 - bits))) | (0x80 >> bits);
        self.len += 1;
        self.bits = self.bits.wrapping_add(bits as u64);
        Ok(())
    }
    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if self.bits.is_multiple_of(8) {
            self.buf[self.len] = 0x80;
            self.len += 1;
        }
        if self.len > BLOCK - 8 {
            self.buf[self.len..].fill(0);
            let blk = self.buf;
            self.block(&blk);
            self.len = 0;
        }
        self.buf[self.len..BLOCK - 8].fill(0);
        self.buf[BLOCK - 8..].copy_from_slice(&self.bits.to_le_bytes());
        let blk = self.buf;
        self.block(&blk);
        let fin: [u32; 16] = core::array::from_fn(|i| 0xaaaa_aaa0 + i as u32);
        let h = compress(&fin, &self.h);
        for (o, w) in out.chunks_exact_mut(4).zip(&h[8..]) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }
    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
