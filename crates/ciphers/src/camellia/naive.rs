//! The naive strategy: RFC 3713 transcribed. SBOX1 is the RFC's table; SBOX2..SBOX4 are
//! derived from it by the RFC's rotations; F is the S-function then the P-function, byte by
//! byte. The internal state of the inner functions is the block itself (`D1 || D2`).

use super::{fl, fl_inv, info, key_schedule, Size, Subkeys};
use crate::{Func, Info, Keyed, Strategy};

/// SBOX1 of RFC 3713, section 2.4.4.
#[rustfmt::skip]
pub(super) const SBOX1: [u8; 256] = [
    112, 130,  44, 236, 179,  39, 192, 229, 228, 133,  87,  53, 234,  12, 174,  65,
     35, 239, 107, 147,  69,  25, 165,  33, 237,  14,  79,  78,  29, 101, 146, 189,
    134, 184, 175, 143, 124, 235,  31, 206,  62,  48, 220,  95,  94, 197,  11,  26,
    166, 225,  57, 202, 213,  71,  93,  61, 217,   1,  90, 214,  81,  86, 108,  77,
    139,  13, 154, 102, 251, 204, 176,  45, 116,  18,  43,  32, 240, 177, 132, 153,
    223,  76, 203, 194,  52, 126, 118,   5, 109, 183, 169,  49, 209,  23,   4, 215,
     20,  88,  58,  97, 222,  27,  17,  28,  50,  15, 156,  22,  83,  24, 242,  34,
    254,  68, 207, 178, 195, 181, 122, 145,  36,   8, 232, 168,  96, 252, 105,  80,
    170, 208, 160, 125, 161, 137,  98, 151,  84,  91,  30, 149, 224, 255, 100, 210,
     16, 196,   0,  72, 163, 247, 117, 219, 138,   3, 230, 218,   9,  63, 221, 148,
    135,  92, 131,   2, 205,  74, 144,  51, 115, 103, 246, 243, 157, 127, 191, 226,
     82, 155, 216,  38, 200,  55, 198,  59, 129, 150, 111,  75,  19, 190,  99,  46,
    233, 121, 167, 140, 159, 110, 188, 142,  41, 245, 249, 182,  47, 253, 180,  89,
    120, 152,   6, 106, 231,  70, 113, 186, 212,  37, 171,  66, 136, 162, 141, 250,
    114,   7, 185,  85, 248, 238, 172,  10,  54,  73,  42, 104,  60,  56, 241, 164,
     64,  40, 211, 123, 187, 201,  67, 193,  21, 227, 173, 244, 119, 199, 128, 158,
];

/// `SBOX2[x] = SBOX1[x] <<< 1`.
pub(super) const fn sbox2(x: u8) -> u8 {
    SBOX1[x as usize].rotate_left(1)
}

/// `SBOX3[x] = SBOX1[x] <<< 7`.
pub(super) const fn sbox3(x: u8) -> u8 {
    SBOX1[x as usize].rotate_left(7)
}

/// `SBOX4[x] = SBOX1[x <<< 1]`.
pub(super) const fn sbox4(x: u8) -> u8 {
    SBOX1[x.rotate_left(1) as usize]
}

/// RFC 3713's F-function: the S-function (bytes `t1..t8`) then the P-function.
pub(super) fn f(f_in: u64, ke: u64) -> u64 {
    let x = (f_in ^ ke).to_be_bytes();
    let t1 = SBOX1[usize::from(x[0])];
    let t2 = sbox2(x[1]);
    let t3 = sbox3(x[2]);
    let t4 = sbox4(x[3]);
    let t5 = sbox2(x[4]);
    let t6 = sbox3(x[5]);
    let t7 = sbox4(x[6]);
    let t8 = SBOX1[usize::from(x[7])];
    p([t1, t2, t3, t4, t5, t6, t7, t8])
}

/// RFC 3713's P-function on the S-function's output bytes `t1..t8`.
pub(super) const fn p(t: [u8; 8]) -> u64 {
    let [t1, t2, t3, t4, t5, t6, t7, t8] = t;
    let y1 = t1 ^ t3 ^ t4 ^ t6 ^ t7 ^ t8;
    let y2 = t1 ^ t2 ^ t4 ^ t5 ^ t7 ^ t8;
    let y3 = t1 ^ t2 ^ t3 ^ t5 ^ t6 ^ t8;
    let y4 = t2 ^ t3 ^ t4 ^ t5 ^ t6 ^ t7;
    let y5 = t1 ^ t2 ^ t6 ^ t7 ^ t8;
    let y6 = t2 ^ t3 ^ t5 ^ t7 ^ t8;
    let y7 = t3 ^ t4 ^ t5 ^ t6 ^ t8;
    let y8 = t1 ^ t4 ^ t5 ^ t6 ^ t7;
    u64::from_be_bytes([y1, y2, y3, y4, y5, y6, y7, y8])
}

/// The naive strategy of one key size.
pub(crate) struct Naive {
    info: Info,
    size: Size,
}

impl Naive {
    pub(crate) fn new(size: Size) -> Self {
        let info = info(
            size,
            "naive",
            1,
            true,
            &[],
            "RFC 3713 transcribed: byte S-box tables (SBOX2-4 by rotation), P-function byte by byte",
        );
        Naive { info, size }
    }
}

impl Strategy for Naive {
    fn info(&self) -> &Info {
        &self.info
    }

    fn available(&self) -> bool {
        true
    }

    fn schedule(&self, key: &[u8]) -> Box<dyn Keyed> {
        let mut k = NaiveKeys {
            size: self.size,
            sk: Subkeys::default(),
        };
        k.rekey(key);
        Box::new(k)
    }
}

struct NaiveKeys {
    size: Size,
    sk: Subkeys,
}

impl NaiveKeys {
    /// Feistel round `r` (0-based) on the halves.
    fn round(&self, d: &mut [u64; 2], r: usize) {
        if r.is_multiple_of(2) {
            d[1] ^= f(d[0], self.sk.k[r]);
        } else {
            d[0] ^= f(d[1], self.sk.k[r]);
        }
    }

    /// FL layer `l` (0-based) on the halves.
    fn fl_layer(&self, d: &mut [u64; 2], l: usize) {
        d[0] = fl(d[0], self.sk.ke[2 * l]);
        d[1] = fl_inv(d[1], self.sk.ke[2 * l + 1]);
    }

    fn encrypt_block(&self, block: &mut [u8]) {
        let mut d = halves(block);
        d[0] ^= self.sk.kw[0];
        d[1] ^= self.sk.kw[1];
        for r in 0..self.size.rounds() {
            if r > 0 && r.is_multiple_of(6) {
                self.fl_layer(&mut d, r / 6 - 1);
            }
            self.round(&mut d, r);
        }
        block[..8].copy_from_slice(&(d[1] ^ self.sk.kw[2]).to_be_bytes());
        block[8..].copy_from_slice(&(d[0] ^ self.sk.kw[3]).to_be_bytes());
    }
}

/// `D1, D2` of a 16-byte block.
fn halves(block: &[u8]) -> [u64; 2] {
    [
        u64::from_be_bytes(block[..8].try_into().expect("16-byte block")),
        u64::from_be_bytes(block[8..16].try_into().expect("16-byte block")),
    ]
}

/// Writes `D1 || D2` back.
fn unhalves(d: [u64; 2], block: &mut [u8]) {
    block[..8].copy_from_slice(&d[0].to_be_bytes());
    block[8..16].copy_from_slice(&d[1].to_be_bytes());
}

impl Keyed for NaiveKeys {
    fn rekey(&mut self, key: &[u8]) {
        key_schedule(self.size, key, f, &mut self.sk);
    }

    fn encrypt(&self, blocks: &mut [u8]) {
        assert_eq!(blocks.len() % 16, 0, "whole blocks only");
        for block in blocks.chunks_exact_mut(16) {
            self.encrypt_block(block);
        }
    }

    fn functions(&self) -> &'static [Func] {
        &[Func::Feistel, Func::Fl]
    }

    fn state_bytes(&self) -> usize {
        16
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        state[..16].copy_from_slice(&blocks[..16]);
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        blocks[..16].copy_from_slice(&state[..16]);
    }

    fn call(&self, func: Func, state: &mut [u8], round: usize) {
        let mut d = halves(state);
        self.size.check_call(func, round);
        match func {
            Func::Feistel => self.round(&mut d, round),
            Func::Fl => self.fl_layer(&mut d, round),
            _ => unreachable!("checked"),
        }
        unhalves(d, state);
    }
}
