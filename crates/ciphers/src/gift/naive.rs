//! `naive`: a direct transcription of the specification. The state is one integer
//! (`u64` for GIFT-64, `u128` for GIFT-128, nibble `i` = bits `4i+3..4i`); SubCells looks
//! each nibble up in the 16-entry S-box, PermBits moves bit by bit with the paper's
//! formula, AddRoundKey XORs key and constant bits one at a time.

use super::{round_keys_128, round_keys_64, Convention, Core, Strat, RC, ROUNDS_128, ROUNDS_64, SBOX};
use crate::{Func, Strategy};

const ABOUT: &str = "specification transcribed: S-box lookup per nibble, bit-by-bit permutation P(i) formula, bit-by-bit round-key/constant addition";

pub(super) fn strategies() -> Vec<Box<dyn Strategy>> {
    vec![
        Strat::<Gift64>::boxed(Convention::Original, "naive", true, &[], ABOUT),
        Strat::<Gift128>::boxed(Convention::Original, "naive", true, &[], ABOUT),
        Strat::<Gift128>::boxed(Convention::GiftB, "naive", true, &[], ABOUT),
    ]
}

const FUNCS: &[Func] = &[Func::SubCells, Func::PermBits, Func::AddRoundKey];

/// SubCells on an `n`-bit state: every nibble through the S-box.
fn sub_cells(x: u128, n: u32) -> u128 {
    (0..n / 4).fold(0, |acc, i| {
        acc | u128::from(SBOX[((x >> (4 * i)) & 0xf) as usize]) << (4 * i)
    })
}

/// PermBits on an `n`-bit state: bit `i` moves to
/// `P(i) = 4 floor(i/16) + (n/4) ((3 floor((i mod 16)/4) + (i mod 4)) mod 4) + (i mod 4)`.
fn perm_bits(x: u128, n: u32) -> u128 {
    (0..n).fold(0, |acc, i| {
        let p = 4 * (i / 16) + (n / 4) * ((3 * ((i % 16) / 4) + (i % 4)) % 4) + (i % 4);
        acc | ((x >> i) & 1) << p
    })
}

/// AddRoundKey on an `n`-bit state: `u_i` to bit `4i + n/64`, `v_i` to bit `4i + n/64 - 1`
/// (GIFT-64: bits 4i+1 and 4i; GIFT-128: 4i+2 and 4i+1), then the constant bits
/// `c5..c0` to bits 23, 19, 15, 11, 7, 3 and 1 to bit `n-1`.
fn add_round_key(mut x: u128, n: u32, u: u32, v: u32, c: u8) -> u128 {
    let (ub, vb) = if n == 64 { (1, 0) } else { (2, 1) };
    for i in 0..n / 4 {
        x ^= u128::from((u >> i) & 1) << (4 * i + ub);
        x ^= u128::from((v >> i) & 1) << (4 * i + vb);
    }
    for i in 0..6 {
        x ^= u128::from((c >> i) & 1) << (4 * i + 3);
    }
    x ^ (1 << (n - 1))
}

/// The naive state as bytes: the block itself (big-endian).
fn get(state: &[u8]) -> u128 {
    state.iter().fold(0, |acc, &b| (acc << 8) | u128::from(b))
}

fn put(x: u128, state: &mut [u8]) {
    let n = state.len();
    for (i, b) in state.iter_mut().enumerate() {
        *b = (x >> (8 * (n - 1 - i))) as u8;
    }
}

/// Naive GIFT-64: round keys `(U, V)` kept as the specification's 16-bit words.
pub(super) struct Gift64 {
    rk: [(u16, u16); ROUNDS_64],
}

impl Core for Gift64 {
    const BLOCK: usize = 8;
    const BATCH: usize = 1;
    const FUNCS: &'static [Func] = FUNCS;
    const STATE_BYTES: usize = 8;

    fn new(key: &[u8]) -> Self {
        Gift64 { rk: round_keys_64(key) }
    }

    fn rekey(&mut self, key: &[u8]) {
        self.rk = round_keys_64(key);
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        let mut x = get(blocks);
        for (r, &(u, v)) in self.rk.iter().enumerate() {
            x = sub_cells(x, 64);
            x = perm_bits(x, 64);
            x = add_round_key(x, 64, u.into(), v.into(), RC[r]);
        }
        put(x, blocks);
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        state.copy_from_slice(blocks);
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        blocks.copy_from_slice(state);
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        let x = get(state);
        let (u, v) = self.rk[round];
        let y = match f {
            Func::SubCells => sub_cells(x, 64),
            Func::PermBits => perm_bits(x, 64),
            _ => add_round_key(x, 64, u.into(), v.into(), RC[round]),
        };
        put(y, state);
    }
}

/// Naive GIFT-128: round keys `(U, V)` kept as the specification's 32-bit words.
pub(super) struct Gift128 {
    rk: [(u32, u32); ROUNDS_128],
}

impl Core for Gift128 {
    const BLOCK: usize = 16;
    const BATCH: usize = 1;
    const FUNCS: &'static [Func] = FUNCS;
    const STATE_BYTES: usize = 16;

    fn new(key: &[u8]) -> Self {
        Gift128 {
            rk: round_keys_128(key),
        }
    }

    fn rekey(&mut self, key: &[u8]) {
        self.rk = round_keys_128(key);
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        let mut x = get(blocks);
        for (r, &(u, v)) in self.rk.iter().enumerate() {
            x = sub_cells(x, 128);
            x = perm_bits(x, 128);
            x = add_round_key(x, 128, u, v, RC[r]);
        }
        put(x, blocks);
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        state.copy_from_slice(blocks);
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        blocks.copy_from_slice(state);
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        let x = get(state);
        let (u, v) = self.rk[round];
        let y = match f {
            Func::SubCells => sub_cells(x, 128),
            Func::PermBits => perm_bits(x, 128),
            _ => add_round_key(x, 128, u, v, RC[round]),
        };
        put(y, state);
    }
}
