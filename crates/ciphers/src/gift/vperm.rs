//! The vector-permute technique shared by `vperm-ssse3` (pshufb) and `vperm-neon` (tbl),
//! written once over [`Bytes16`].
//!
//! The state is held one nibble per byte (GIFT-64: one 16-byte vector per block,
//! GIFT-128: two), so SubCells is a single byte shuffle with the S-box as the table
//! (Hamburg's vector-permute S-box, without even the high/low nibble split). PermBits
//! keeps bit `j` of each nibble in bit `j` of a byte and moves nibble `i` to `π_j(i)`: for
//! each `j`, a byte shuffle by the inverse of `π_j` (for GIFT-128, from each of the two
//! input vectors into each output vector, index 0xff giving zero), masked to bit `j`.
//! AddRoundKey XORs a precomputed round mask in the same nibble-per-byte form. Nothing
//! indexes memory with secret data: shuffles are constant-time.

use super::{round_masks_128, round_masks_64, Core, ROUNDS_128, ROUNDS_64, SBOX};
use crate::Func;
use std::marker::PhantomData;

/// A 16-byte vector with a byte shuffle.
pub(crate) trait Bytes16: Copy {
    fn load(b: &[u8; 16]) -> Self;
    fn store(self, b: &mut [u8; 16]);
    /// `out[i] = self[idx[i]]` for indices below 16, 0 for index 0xff.
    fn lookup(self, idx: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

/// Blocks per batch: GIFT-64 blocks are one vector each, GIFT-128 blocks two; a few in
/// lockstep hide the shuffles' latency.
pub(crate) const BATCH_64: usize = 4;
pub(crate) const BATCH_128: usize = 4;

/// Index meaning "zero this byte".
const ZERO: u8 = 0xff;

/// Bit `j` of every byte.
const BIT_MASKS: [[u8; 16]; 4] = [[1; 16], [2; 16], [4; 16], [8; 16]];

/// Where PermBits sends nibble `i` of an `n`-nibble state in bit plane `j`:
/// `π_j(4a + b) = (n/4) ((j - b) mod 4) + a`.
const fn pi(j: usize, i: usize, n: usize) -> usize {
    (n / 4) * ((j + 4 - (i & 3)) & 3) + (i >> 2)
}

/// GIFT-64: `IDX64[j][d]` = the nibble that plane `j` moves to nibble `d`.
const IDX64: [[u8; 16]; 4] = {
    let mut t = [[0u8; 16]; 4];
    let mut j = 0;
    while j < 4 {
        let mut s = 0;
        while s < 16 {
            t[j][pi(j, s, 16)] = s as u8;
            s += 1;
        }
        j += 1;
    }
    t
};

/// GIFT-128: `IDX128[r][t][j][d]` = the byte of input vector `t` that plane `j` moves to
/// byte `d` of output vector `r` (nibble `16r + d`), or [`ZERO`] if it comes from the
/// other input vector.
const IDX128: [[[[u8; 16]; 4]; 2]; 2] = {
    let mut t = [[[[ZERO; 16]; 4]; 2]; 2];
    let mut j = 0;
    while j < 4 {
        let mut s = 0;
        while s < 32 {
            let d = pi(j, s, 32);
            t[d / 16][s / 16][j][d % 16] = (s % 16) as u8;
            s += 1;
        }
        j += 1;
    }
    t
};

/// Spreads the `16 * W` nibbles of `x` (least significant first) into bytes.
fn spread<const W: usize>(x: u128, out: &mut [u8]) {
    for (i, b) in out[..16 * W].iter_mut().enumerate() {
        *b = ((x >> (4 * i)) & 0xf) as u8;
    }
}

/// Inverse of [`spread`].
fn gather<const W: usize>(bytes: &[u8]) -> u128 {
    bytes[..16 * W]
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | u128::from(b & 0xf) << (4 * i))
}

// The generic code below avoids closures (`map`, `from_fn`): a closure is a function
// of its own, without the caller's target features, and would not be inlined.

/// The vectors of `N` blocks of `W` vectors each, from nibble bytes.
#[inline(always)]
fn load_state<V: Bytes16, const W: usize, const N: usize>(state: &[u8], zero: V) -> [[V; W]; N] {
    let mut x = [[zero; W]; N];
    for (i, v) in x.as_flattened_mut().iter_mut().enumerate() {
        *v = V::load(state[16 * i..][..16].try_into().unwrap());
    }
    x
}

#[inline(always)]
fn store_state<V: Bytes16, const W: usize, const N: usize>(x: &[[V; W]; N], state: &mut [u8]) {
    for (i, v) in x.as_flattened().iter().enumerate() {
        v.store((&mut state[16 * i..][..16]).try_into().unwrap());
    }
}

/// The shuffle tables of one cipher, as vectors.
struct Tables<V, const W: usize> {
    sbox: V,
    masks: [V; 4],
    /// `idx[r][t][j]`: output vector `r`, input vector `t`, bit plane `j`.
    idx: [[[V; 4]; W]; W],
}

impl<V: Bytes16, const W: usize> Tables<V, W> {
    /// The tables of GIFT-64 (`W` = 1) or GIFT-128 (`W` = 2).
    #[inline(always)]
    fn new() -> Self {
        let sbox = V::load(&SBOX);
        let mut t = Tables {
            sbox,
            masks: [sbox; 4],
            idx: [[[sbox; 4]; W]; W],
        };
        for (j, m) in t.masks.iter_mut().enumerate() {
            *m = V::load(&BIT_MASKS[j]);
        }
        for (r, row) in t.idx.iter_mut().enumerate() {
            for (u, planes) in row.iter_mut().enumerate() {
                for (j, p) in planes.iter_mut().enumerate() {
                    *p = V::load(if W == 1 { &IDX64[j] } else { &IDX128[r][u][j] });
                }
            }
        }
        t
    }

    #[inline(always)]
    fn sub_cells(&self, x: &mut [V; W]) {
        for v in x {
            *v = self.sbox.lookup(*v);
        }
    }

    #[inline(always)]
    fn perm_bits(&self, x: &mut [V; W]) {
        let mut out = *x;
        for (r, o) in out.iter_mut().enumerate() {
            let mut planes = [x[0]; 4];
            for (j, p) in planes.iter_mut().enumerate() {
                let mut moved = x[0].lookup(self.idx[r][0][j]);
                for (u, xu) in x.iter().enumerate().skip(1) {
                    moved = moved.or(xu.lookup(self.idx[r][u][j]));
                }
                *p = moved.and(self.masks[j]);
            }
            *o = planes[0].or(planes[1]).or(planes[2].or(planes[3]));
        }
        *x = out;
    }

    #[inline(always)]
    fn add_round_key(x: &mut [V; W], k: &[[u8; 16]; W]) {
        for (v, k) in x.iter_mut().zip(k) {
            *v = v.xor(V::load(k));
        }
    }
}

/// All rounds on `N` blocks of nibble bytes.
#[inline(always)]
pub(crate) fn rounds<V: Bytes16, const W: usize, const N: usize>(state: &mut [u8], rk: &[[[u8; 16]; W]]) {
    let t = Tables::<V, W>::new();
    let mut x = load_state::<V, W, N>(state, t.sbox);
    for k in rk {
        // Step by step across the blocks, for independent instructions side by side.
        for b in &mut x {
            t.sub_cells(b);
        }
        for b in &mut x {
            t.perm_bits(b);
        }
        for b in &mut x {
            Tables::add_round_key(b, k);
        }
    }
    store_state(&x, state);
}

/// One inner function on `N` blocks of nibble bytes.
#[inline(always)]
pub(crate) fn call<V: Bytes16, const W: usize, const N: usize>(f: Func, state: &mut [u8], rk: &[[u8; 16]; W]) {
    let t = Tables::<V, W>::new();
    let mut x = load_state::<V, W, N>(state, t.sbox);
    for b in &mut x {
        match f {
            Func::SubCells => t.sub_cells(b),
            Func::PermBits => t.perm_bits(b),
            _ => Tables::add_round_key(b, rk),
        }
    }
    store_state(&x, state);
}

/// The target-feature kernels of one architecture: [`rounds`] and [`call`] instantiated
/// with its vector type inside `#[target_feature]` functions.
pub(crate) trait Kernel: Send + Sync + 'static {
    /// # Safety
    /// The CPU must have the kernel's features.
    unsafe fn rounds64(state: &mut [u8], rk: &[[[u8; 16]; 1]]);
    /// # Safety
    /// As [`Kernel::rounds64`].
    unsafe fn rounds128(state: &mut [u8], rk: &[[[u8; 16]; 2]]);
    /// [`Kernel::rounds64`] on one block.
    ///
    /// # Safety
    /// As [`Kernel::rounds64`].
    unsafe fn rounds64_one(state: &mut [u8], rk: &[[[u8; 16]; 1]]);
    /// [`Kernel::rounds128`] on one block.
    ///
    /// # Safety
    /// As [`Kernel::rounds64`].
    unsafe fn rounds128_one(state: &mut [u8], rk: &[[[u8; 16]; 2]]);
    /// # Safety
    /// As [`Kernel::rounds64`].
    unsafe fn call64(f: Func, state: &mut [u8], rk: &[[u8; 16]; 1]);
    /// # Safety
    /// As [`Kernel::rounds64`].
    unsafe fn call128(f: Func, state: &mut [u8], rk: &[[u8; 16]; 2]);
}

const FUNCS: &[Func] = &[Func::SubCells, Func::PermBits, Func::AddRoundKey];

/// Vector-permute GIFT-64 on `BATCH_64` blocks; round masks in nibble-byte form.
pub(crate) struct Gift64<K> {
    rk: [[[u8; 16]; 1]; ROUNDS_64],
    kernel: PhantomData<K>,
}

impl<K: Kernel> Core for Gift64<K> {
    const BLOCK: usize = 8;
    const BATCH: usize = BATCH_64;
    const FUNCS: &'static [Func] = FUNCS;
    const STATE_BYTES: usize = 16 * BATCH_64;

    fn new(key: &[u8]) -> Self {
        let mut k = Gift64 {
            rk: [[[0; 16]; 1]; ROUNDS_64],
            kernel: PhantomData,
        };
        k.rekey(key);
        k
    }

    fn rekey(&mut self, key: &[u8]) {
        for (rk, m) in self.rk.iter_mut().zip(round_masks_64(key)) {
            spread::<1>(m.into(), &mut rk[0]);
        }
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        let mut state = [0u8; 16 * BATCH_64];
        self.load(blocks, &mut state);
        // SAFETY: a Gift64<K> is only built by Strat::schedule, after available() checked
        // the kernel's features.
        unsafe { K::rounds64(&mut state, &self.rk) };
        self.store(&state, blocks);
    }

    fn encrypt_one(&self, block: &mut [u8]) {
        let mut state = [0u8; 16];
        self.load(block, &mut state);
        // SAFETY: as in encrypt_batch.
        unsafe { K::rounds64_one(&mut state, &self.rk) };
        self.store(&state, block);
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        for (b, s) in blocks.chunks_exact(8).zip(state.chunks_exact_mut(16)) {
            spread::<1>(u64::from_be_bytes(b.try_into().unwrap()).into(), s);
        }
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        for (b, s) in blocks.chunks_exact_mut(8).zip(state.chunks_exact(16)) {
            b.copy_from_slice(&(gather::<1>(s) as u64).to_be_bytes());
        }
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::call64(f, state, &self.rk[round]) };
    }
}

/// Vector-permute GIFT-128 on `BATCH_128` blocks; round masks in nibble-byte form.
pub(crate) struct Gift128<K> {
    rk: [[[u8; 16]; 2]; ROUNDS_128],
    kernel: PhantomData<K>,
}

impl<K: Kernel> Core for Gift128<K> {
    const BLOCK: usize = 16;
    const BATCH: usize = BATCH_128;
    const FUNCS: &'static [Func] = FUNCS;
    const STATE_BYTES: usize = 32 * BATCH_128;

    fn new(key: &[u8]) -> Self {
        let mut k = Gift128 {
            rk: [[[0; 16]; 2]; ROUNDS_128],
            kernel: PhantomData,
        };
        k.rekey(key);
        k
    }

    fn rekey(&mut self, key: &[u8]) {
        for (rk, m) in self.rk.iter_mut().zip(round_masks_128(key)) {
            spread::<1>(m, &mut rk[0]);
            spread::<1>(m >> 64, &mut rk[1]);
        }
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        let mut state = [0u8; 32 * BATCH_128];
        self.load(blocks, &mut state);
        // SAFETY: a Gift128<K> is only built by Strat::schedule, after available() checked
        // the kernel's features.
        unsafe { K::rounds128(&mut state, &self.rk) };
        self.store(&state, blocks);
    }

    fn encrypt_one(&self, block: &mut [u8]) {
        let mut state = [0u8; 32];
        self.load(block, &mut state);
        // SAFETY: as in encrypt_batch.
        unsafe { K::rounds128_one(&mut state, &self.rk) };
        self.store(&state, block);
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        for (b, s) in blocks.chunks_exact(16).zip(state.chunks_exact_mut(32)) {
            spread::<2>(u128::from_be_bytes(b.try_into().unwrap()), s);
        }
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        for (b, s) in blocks.chunks_exact_mut(16).zip(state.chunks_exact(32)) {
            b.copy_from_slice(&gather::<2>(s).to_be_bytes());
        }
    }

    fn call(&self, f: Func, state: &mut [u8], round: usize) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::call128(f, state, &self.rk[round]) };
    }
}
