//! The table strategy: the S-function and P-function merged into eight 256-entry `u64`
//! tables, `T[i][a] = P(SBOX_i(a) in byte i, zeros elsewhere)`, so F is eight lookups and
//! seven XORs on 64-bit halves. (P does not map the outputs of two byte positions that
//! share an S-box to rotations of each other, so four tables would need extra masking.)
//! ECB runs four blocks interleaved. The tables (16 KiB) are indexed by secret bytes. The
//! internal state of the inner functions is the two halves `D1, D2` as native-endian `u64`s.

use super::naive::{p, sbox2, sbox3, sbox4, SBOX1};
use super::{fl, fl_inv, info, key_schedule, Size, Subkeys};
use crate::{Func, Info, Keyed, Strategy};

/// `T[i][a]`: the F-function's output when byte `i` (0 = most significant) of its input
/// (after the subkey) is `a` and only its S-box output is counted.
static T: [[u64; 256]; 8] = tables();

const fn tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut a = 0;
    while a < 256 {
        let x = a as u8;
        let s = [
            SBOX1[a],
            sbox2(x),
            sbox3(x),
            sbox4(x),
            sbox2(x),
            sbox3(x),
            sbox4(x),
            SBOX1[a],
        ];
        let mut i = 0;
        while i < 8 {
            let mut only = [0u8; 8];
            only[i] = s[i];
            t[i][a] = p(only);
            i += 1;
        }
        a += 1;
    }
    t
}

/// F through the tables.
#[inline(always)]
fn f(f_in: u64, ke: u64) -> u64 {
    let x = f_in ^ ke;
    let b = |i: u32| usize::from((x >> (56 - 8 * i)) as u8);
    (T[0][b(0)] ^ T[1][b(1)]) ^ (T[2][b(2)] ^ T[3][b(3)]) ^ ((T[4][b(4)] ^ T[5][b(5)]) ^ (T[6][b(6)] ^ T[7][b(7)]))
}

/// The table strategy of one key size.
pub(crate) struct Table {
    info: Info,
    size: Size,
}

impl Table {
    pub(crate) fn new(size: Size) -> Self {
        let info = info(
            size,
            "table",
            1,
            true,
            &[],
            "eight 256-entry u64 tables merging S- and P-functions: F is 8 lookups, 64-bit halves",
        );
        Table { info, size }
    }
}

impl Strategy for Table {
    fn info(&self) -> &Info {
        &self.info
    }

    fn available(&self) -> bool {
        true
    }

    fn schedule(&self, key: &[u8]) -> Box<dyn Keyed> {
        let mut k = TableKeys {
            size: self.size,
            sk: Subkeys::default(),
        };
        k.rekey(key);
        Box::new(k)
    }
}

struct TableKeys {
    size: Size,
    sk: Subkeys,
}

impl TableKeys {
    /// Six rounds starting at round `r` (even) on `N` independent blocks, interleaved so
    /// that the lookups of one block overlap the dependency chains of the others.
    #[inline(always)]
    fn six_rounds<const N: usize>(&self, d: &mut [[u64; 2]; N], r: usize) {
        let k = &self.sk.k[r..r + 6];
        for pair in k.chunks_exact(2) {
            for d in d.iter_mut() {
                d[1] ^= f(d[0], pair[0]);
            }
            for d in d.iter_mut() {
                d[0] ^= f(d[1], pair[1]);
            }
        }
    }

    #[inline(always)]
    fn fl_layer(&self, d: &mut [u64; 2], l: usize) {
        d[0] = fl(d[0], self.sk.ke[2 * l]);
        d[1] = fl_inv(d[1], self.sk.ke[2 * l + 1]);
    }

    /// Encrypts `N` consecutive blocks together.
    #[inline(always)]
    fn encrypt_blocks<const N: usize>(&self, blocks: &mut [u8]) {
        let mut d = [[0u64; 2]; N];
        for (d, block) in d.iter_mut().zip(blocks.chunks_exact(16)) {
            let half = |i: usize| u64::from_be_bytes(block[8 * i..8 * i + 8].try_into().expect("8 bytes"));
            *d = [half(0) ^ self.sk.kw[0], half(1) ^ self.sk.kw[1]];
        }
        self.six_rounds(&mut d, 0);
        for l in 0..self.size.fl_layers() {
            for d in d.iter_mut() {
                self.fl_layer(d, l);
            }
            self.six_rounds(&mut d, 6 * (l + 1));
        }
        for (d, block) in d.iter().zip(blocks.chunks_exact_mut(16)) {
            block[..8].copy_from_slice(&(d[1] ^ self.sk.kw[2]).to_be_bytes());
            block[8..16].copy_from_slice(&(d[0] ^ self.sk.kw[3]).to_be_bytes());
        }
    }
}

impl Keyed for TableKeys {
    fn rekey(&mut self, key: &[u8]) {
        key_schedule(self.size, key, f, &mut self.sk);
    }

    fn encrypt(&self, blocks: &mut [u8]) {
        assert_eq!(blocks.len() % 16, 0, "whole blocks only");
        let mut quads = blocks.chunks_exact_mut(64);
        for quad in &mut quads {
            self.encrypt_blocks::<4>(quad);
        }
        for block in quads.into_remainder().chunks_exact_mut(16) {
            self.encrypt_blocks::<1>(block);
        }
    }

    fn functions(&self) -> &'static [Func] {
        &[Func::Feistel, Func::Fl]
    }

    fn state_bytes(&self) -> usize {
        16
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        for (s, b) in state[..16].chunks_exact_mut(8).zip(blocks[..16].chunks_exact(8)) {
            s.copy_from_slice(&u64::from_be_bytes(b.try_into().expect("8 bytes")).to_ne_bytes());
        }
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        for (b, s) in blocks[..16].chunks_exact_mut(8).zip(state[..16].chunks_exact(8)) {
            b.copy_from_slice(&u64::from_ne_bytes(s.try_into().expect("8 bytes")).to_be_bytes());
        }
    }

    fn call(&self, func: Func, state: &mut [u8], round: usize) {
        self.size.check_call(func, round);
        let word = |i: usize| u64::from_ne_bytes(state[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let mut d = [word(0), word(1)];
        match func {
            Func::Feistel if round.is_multiple_of(2) => d[1] ^= f(d[0], self.sk.k[round]),
            Func::Feistel => d[0] ^= f(d[1], self.sk.k[round]),
            Func::Fl => self.fl_layer(&mut d, round),
            _ => unreachable!("checked"),
        }
        state[..8].copy_from_slice(&d[0].to_ne_bytes());
        state[8..16].copy_from_slice(&d[1].to_ne_bytes());
    }
}
