//! `table`: SubCells and PermBits fused into lookup tables, like AES T-tables. For each
//! input byte position, a table maps the byte to its contribution to the permuted state:
//! GIFT-64 has 8 tables of 256 `u64` (16 KiB), GIFT-128 16 tables of 256 `u64` pairs
//! (64 KiB, the state kept as two `u64` halves); a round is the XOR of the lookups and of
//! a precomputed round-key-and-constant mask. The separately exposed functions are
//! table-driven too: SubCells by a 256-entry double S-box on bytes, PermBits by
//! per-position tables of the permutation alone.

use super::{round_masks_128, round_masks_64, Convention, Core, Strat, ROUNDS_128, ROUNDS_64, SBOX};
use crate::{Func, Strategy};

const ABOUT: &str = "fused S-box+permutation lookup tables per input position (T-table style), XORed with a precomputed round-key/constant mask";

pub(super) fn strategies() -> Vec<Box<dyn Strategy>> {
    vec![
        Strat::<Gift64>::boxed(Convention::Original, "table", true, &[], ABOUT),
        Strat::<Gift128>::boxed(Convention::Original, "table", true, &[], ABOUT),
        Strat::<Gift128>::boxed(Convention::GiftB, "table", true, &[], ABOUT),
    ]
}

const FUNCS: &[Func] = &[Func::SubCells, Func::PermBits, Func::AddRoundKey];

/// Where PermBits sends bit `i` of an `n`-bit state (the paper's formula).
const fn perm_pos(i: usize, n: usize) -> usize {
    4 * (i / 16) + (n / 4) * ((3 * ((i % 16) / 4) + (i % 4)) % 4) + (i % 4)
}

/// Both nibbles of a byte through the S-box.
static SBOX2: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = SBOX[b & 15] | (SBOX[b >> 4] << 4);
        b += 1;
    }
    t
};

/// PermBits of the byte value `b` at byte position `p` of a GIFT-64 state.
const fn perm64_byte(p: usize, b: usize) -> u64 {
    let mut y = 0u64;
    let mut k = 0;
    while k < 8 {
        if (b >> k) & 1 == 1 {
            y |= 1 << perm_pos(8 * p + k, 64);
        }
        k += 1;
    }
    y
}

/// `P64[p][b]`: PermBits of byte value `b` at byte position `p` (from the least
/// significant byte).
static P64: [[u64; 256]; 8] = {
    let mut t = [[0u64; 256]; 8];
    let mut p = 0;
    while p < 8 {
        let mut b = 0;
        while b < 256 {
            t[p][b] = perm64_byte(p, b);
            b += 1;
        }
        p += 1;
    }
    t
};

/// `T64[p][b]`: PermBits(SubCells(b at byte position p)).
static T64: [[u64; 256]; 8] = {
    let mut t = [[0u64; 256]; 8];
    let mut p = 0;
    while p < 8 {
        let mut b = 0;
        while b < 256 {
            t[p][b] = perm64_byte(p, SBOX2[b] as usize);
            b += 1;
        }
        p += 1;
    }
    t
};

/// PermBits of the nibble value `v` at nibble position `p` of a GIFT-128 state.
const fn perm128_nibble(p: usize, v: usize) -> u128 {
    let mut y = 0u128;
    let mut k = 0;
    while k < 4 {
        if (v >> k) & 1 == 1 {
            y |= 1 << perm_pos(4 * p + k, 128);
        }
        k += 1;
    }
    y
}

/// `P128[p][v]`: PermBits of nibble value `v` at nibble position `p`.
static P128: [[u128; 16]; 32] = {
    let mut t = [[0u128; 16]; 32];
    let mut p = 0;
    while p < 32 {
        let mut v = 0;
        while v < 16 {
            t[p][v] = perm128_nibble(p, v);
            v += 1;
        }
        p += 1;
    }
    t
};

/// `T128[p][b]`: PermBits(SubCells(b at byte position p)) as (low, high) `u64` halves.
static T128: [[[u64; 2]; 256]; 16] = {
    let mut t = [[[0u64; 2]; 256]; 16];
    let mut p = 0;
    while p < 16 {
        let mut b = 0;
        while b < 256 {
            let s = SBOX2[b] as usize;
            let y = perm128_nibble(2 * p, s & 15) | perm128_nibble(2 * p + 1, s >> 4);
            t[p][b] = [y as u64, (y >> 64) as u64];
            b += 1;
        }
        p += 1;
    }
    t
};

/// Table GIFT-64: one 64-bit mask per round.
pub(super) struct Gift64 {
    rk: [u64; ROUNDS_64],
}

impl Gift64 {
    /// SubCells and PermBits of one round: eight lookups.
    #[inline(always)]
    fn sub_perm(x: u64) -> u64 {
        (0..8).fold(0, |acc, p| acc ^ T64[p][((x >> (8 * p)) & 0xff) as usize])
    }
}

impl Core for Gift64 {
    const BLOCK: usize = 8;
    const BATCH: usize = 1;
    const FUNCS: &'static [Func] = FUNCS;
    const STATE_BYTES: usize = 8;

    fn new(key: &[u8]) -> Self {
        Gift64 {
            rk: round_masks_64(key),
        }
    }

    fn rekey(&mut self, key: &[u8]) {
        self.rk = round_masks_64(key);
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        let mut x = u64::from_be_bytes(blocks.try_into().unwrap());
        for k in &self.rk {
            x = Self::sub_perm(x) ^ k;
        }
        blocks.copy_from_slice(&x.to_be_bytes());
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        state.copy_from_slice(blocks);
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        blocks.copy_from_slice(state);
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        let x = u64::from_be_bytes(state[..8].try_into().unwrap());
        let y = match f {
            Func::SubCells => u64::from_le_bytes(x.to_le_bytes().map(|b| SBOX2[b as usize])),
            Func::PermBits => (0..8).fold(0, |acc, p| acc | P64[p][((x >> (8 * p)) & 0xff) as usize]),
            _ => x ^ self.rk[round],
        };
        state.copy_from_slice(&y.to_be_bytes());
    }
}

/// Table GIFT-128: one 128-bit mask per round, as (low, high) halves.
pub(super) struct Gift128 {
    rk: [[u64; 2]; ROUNDS_128],
}

impl Gift128 {
    fn masks(key: &[u8]) -> [[u64; 2]; ROUNDS_128] {
        round_masks_128(key).map(|m| [m as u64, (m >> 64) as u64])
    }

    /// SubCells and PermBits of one round on the (low, high) halves: 16 lookups.
    #[inline(always)]
    fn sub_perm([lo, hi]: [u64; 2]) -> [u64; 2] {
        let mut y = [0u64; 2];
        for p in 0..8 {
            let a = &T128[p][((lo >> (8 * p)) & 0xff) as usize];
            let b = &T128[p + 8][((hi >> (8 * p)) & 0xff) as usize];
            y[0] ^= a[0] ^ b[0];
            y[1] ^= a[1] ^ b[1];
        }
        y
    }
}

impl Core for Gift128 {
    const BLOCK: usize = 16;
    const BATCH: usize = 1;
    const FUNCS: &'static [Func] = FUNCS;
    const STATE_BYTES: usize = 16;

    fn new(key: &[u8]) -> Self {
        Gift128 { rk: Self::masks(key) }
    }

    fn rekey(&mut self, key: &[u8]) {
        self.rk = Self::masks(key);
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        let hi = u64::from_be_bytes(blocks[..8].try_into().unwrap());
        let lo = u64::from_be_bytes(blocks[8..].try_into().unwrap());
        let mut x = [lo, hi];
        for k in &self.rk {
            let y = Self::sub_perm(x);
            x = [y[0] ^ k[0], y[1] ^ k[1]];
        }
        blocks[..8].copy_from_slice(&x[1].to_be_bytes());
        blocks[8..].copy_from_slice(&x[0].to_be_bytes());
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        state.copy_from_slice(blocks);
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        blocks.copy_from_slice(state);
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        let x = u128::from_be_bytes(state[..16].try_into().unwrap());
        let y = match f {
            Func::SubCells => u128::from_le_bytes(x.to_le_bytes().map(|b| SBOX2[b as usize])),
            Func::PermBits => (0..32).fold(0, |acc, p| acc | P128[p][((x >> (4 * p)) & 0xf) as usize]),
            _ => x ^ (u128::from(self.rk[round][1]) << 64 | u128::from(self.rk[round][0])),
        };
        state.copy_from_slice(&y.to_be_bytes());
    }
}
