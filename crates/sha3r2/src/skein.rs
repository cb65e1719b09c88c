//! Skein-512-256 as the shared `skein/` KAT files define it: UBI chaining over
//! Threefish-512 (72 rounds, the rotation constants introduced by the round-2 tweak,
//! specification version 1.2, unchanged in 1.3). The NIST API's 256-bit Skein is Skein-512
//! with a 256-bit output. Written from "The Skein Hash Function Family" (versions 1.2/1.3);
//! bit-level messages are supported (the partial byte is completed with a 1 bit and zeros
//! and the final block's tweak carries the BitPad flag).
//!
//! The version: the key-schedule parity constant those KAT files require is
//! C240 = 0x1BD11BDAA9FC1A22, the round-3 tweak (version 1.3); with the round-2 value
//! 0x5555555555555555 the empty message already fails. So this is Skein v1.3, named
//! `Skein-512-256-v1.3`, until round-2 (v1.2) KAT files are found to gate a v1.2 variant.

/// Key-schedule parity constant C240, as the `skein/` KAT files require (Skein 1.3
/// specification, section 3.3.2).
const C240: u64 = 0x1BD1_1BDA_A9FC_1A22;

/// Threefish-512 rotation constants R_{d mod 8, j} of Skein 1.2 and 1.3 (specification, table 4).
const R: [[u32; 4]; 8] = [
    [46, 36, 19, 37],
    [33, 27, 14, 42],
    [17, 49, 36, 39],
    [44, 9, 54, 56],
    [39, 30, 34, 24],
    [13, 50, 10, 17],
    [25, 29, 39, 43],
    [8, 35, 56, 22],
];

/// Threefish-512 word permutation pi (specification, table 3). Four rounds of it are the
/// identity, so the rounds below address the words directly instead of moving them:
/// round d mod 4 mixes the pairs given by pi^(d mod 4) (see `mix_pairs`).
const PI: [usize; 8] = [2, 1, 4, 7, 6, 5, 0, 3];

/// The word pairs mixed in rounds 0..4 of each group of four: round n mixes
/// (v[pi^n(2j)], v[pi^n(2j+1)]).
const PAIRS: [[usize; 8]; 4] = mix_pairs();

const fn mix_pairs() -> [[usize; 8]; 4] {
    let mut p = [[0usize; 8]; 4];
    let mut i = 0;
    while i < 8 {
        p[0][i] = i;
        i += 1;
    }
    let mut n = 1;
    while n < 4 {
        let mut i = 0;
        while i < 8 {
            p[n][i] = p[n - 1][PI[i]];
            i += 1;
        }
        n += 1;
    }
    p
}

/// Round `d` (0..8 within a group of eight) of Threefish-512, words addressed in place.
/// Always inlined with a constant `d`, so the pairs and rotation amounts are immediates.
#[inline(always)]
fn mix_round(v: &mut [u64; 8], d: usize) {
    let p = &PAIRS[d % 4];
    let r = &R[d];
    mix(v, p[0], p[1], r[0]);
    mix(v, p[2], p[3], r[1]);
    mix(v, p[4], p[5], r[2]);
    mix(v, p[6], p[7], r[3]);
}

/// The MIX function on words `a` and `b`.
#[inline(always)]
fn mix(v: &mut [u64; 8], a: usize, b: usize, r: u32) {
    v[a] = v[a].wrapping_add(v[b]);
    v[b] = v[b].rotate_left(r) ^ v[a];
}

/// Adds subkey `s` from the nine extended key words `k` and the three tweak words `t`:
/// the schedule's cyclic indexing `(s + i) mod 9` and `s mod 3` is left to constant
/// folding instead of materialising the 19 subkeys.
#[inline(always)]
fn add_subkey(v: &mut [u64; 8], k: &Mem<9>, t: &Mem<3>, s: usize) {
    for (i, w) in v.iter_mut().enumerate() {
        *w = w.wrapping_add(k.get((s + i) % 9));
    }
    v[5] = v[5].wrapping_add(t.get(s % 3));
    v[6] = v[6].wrapping_add(t.get((s + 1) % 3));
    v[7] = v[7].wrapping_add(s as u64);
}

/// Eight rounds with their two subkey injections, subkeys `S` and `S + 1`. A const generic
/// so that each of the nine groups is compiled with its own constant key indices: the 72
/// rounds end up fully unrolled with every word in a register.
#[inline(always)]
fn eight_rounds<const S: usize>(v: &mut [u64; 8], k: &Mem<9>, t: &Mem<3>) {
    add_subkey(v, k, t, S);
    mix_round(v, 0);
    mix_round(v, 1);
    mix_round(v, 2);
    mix_round(v, 3);
    add_subkey(v, k, t, S + 1);
    mix_round(v, 4);
    mix_round(v, 5);
    mix_round(v, 6);
    mix_round(v, 7);
}

/// Key and tweak words kept in the stack frame: the 8 state, 9 key and 3 tweak words do
/// not all fit in the sixteen general registers, and when they are all SSA values the
/// compiler shuffles key words between registers and spill slots (and precomputes sums it
/// must then spill too). Each key word is used only once per four rounds, so reading it with
/// a volatile load at the point of use costs nothing: the load folds into the `add`, and the
/// registers stay with the eight state words of the two interleaved MIX chains.
#[repr(transparent)]
struct Mem<const N: usize>([u64; N]);

impl<const N: usize> Mem<N> {
    #[inline(always)]
    fn get(&self, i: usize) -> u64 {
        // SAFETY: `&self.0[i]` is a valid, aligned, bounds-checked reference to an initialised
        // `u64`, which is all `read_volatile` requires.
        unsafe { core::ptr::read_volatile(&self.0[i]) }
    }
}

/// UBI type values (specification, table 6), already shifted to their place in T1.
const T_CFG: u64 = 4 << 56;
const T_MSG: u64 = 48 << 56;
const T_OUT: u64 = 63 << 56;
const FIRST: u64 = 1 << 62;
const FINAL: u64 = 1 << 63;
const BIT_PAD: u64 = 1 << 55;

/// Threefish-512 encryption of `p` under key `k` and tweak `t`.
#[inline(always)]
fn threefish(k: &[u64; 8], t: [u64; 2], p: &[u64; 8]) -> [u64; 8] {
    let k8 = k.iter().fold(C240, |a, &w| a ^ w);
    let ks = Mem([k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k8]);
    let ts = Mem([t[0], t[1], t[0] ^ t[1]]);
    let mut v = *p;
    eight_rounds::<0>(&mut v, &ks, &ts);
    eight_rounds::<2>(&mut v, &ks, &ts);
    eight_rounds::<4>(&mut v, &ks, &ts);
    eight_rounds::<6>(&mut v, &ks, &ts);
    eight_rounds::<8>(&mut v, &ks, &ts);
    eight_rounds::<10>(&mut v, &ks, &ts);
    eight_rounds::<12>(&mut v, &ks, &ts);
    eight_rounds::<14>(&mut v, &ks, &ts);
    eight_rounds::<16>(&mut v, &ks, &ts);
    add_subkey(&mut v, &ks, &ts, 18);
    v
}

/// One UBI block: the chaining value becomes E_h(block) xor block.
fn ubi_block(h: &mut [u64; 8], block: &[u8; 64], t0: u64, t1: u64) {
    let mut m = [0u64; 8];
    for (w, c) in m.iter_mut().zip(block.chunks_exact(8)) {
        *w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
    let e = threefish(h, [t0, t1], &m);
    for i in 0..8 {
        h[i] = e[i] ^ m[i];
    }
}

/// The chaining value after the configuration block of Skein-512-256.
fn initial_chain() -> [u64; 8] {
    let mut cfg = [0u8; 64];
    cfg[..4].copy_from_slice(b"SHA3");
    cfg[4..6].copy_from_slice(&1u16.to_le_bytes());
    cfg[8..16].copy_from_slice(&256u64.to_le_bytes());
    let mut h = [0u64; 8];
    ubi_block(&mut h, &cfg, 32, T_CFG | FIRST | FINAL);
    h
}

struct Skein512_256 {
    iv: [u64; 8],
}

/// The catalogue entry for Skein-512-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Skein512_256 { iv: initial_chain() }))
}

impl crate::Candidate for Skein512_256 {
    fn name(&self) -> &'static str {
        "Skein-512-256-v1.3"
    }
    fn label(&self) -> &'static str {
        "Skein-512-256 v1.3 (Threefish-512, 72 rounds, C240 = 0x1BD11BDAA9FC1A22, as the shared KAT files require)"
    }
    fn kat_dir(&self) -> &'static str {
        "skein"
    }
    fn block_bytes(&self) -> usize {
        64
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            h: self.iv,
            pos: 0,
            first: true,
            buf: [0; 64],
            len: 0,
            bit_pad: false,
        })
    }
}

#[derive(Clone)]
struct State {
    h: [u64; 8],
    /// Message bytes processed so far (the tweak position).
    pos: u64,
    /// The next block is the first of the message.
    first: bool,
    buf: [u8; 64],
    /// Bytes waiting in `buf`; the last block always stays here until `finish`.
    len: usize,
    /// The message ended in a partial byte.
    bit_pad: bool,
}

impl State {
    fn block(&mut self, block: &[u8; 64]) {
        self.pos += 64;
        let t1 = T_MSG | if self.first { FIRST } else { 0 };
        ubi_block(&mut self.h, block, self.pos, t1);
        self.first = false;
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.len == 64 {
            let b = self.buf;
            self.block(&b);
            self.len = 0;
        }
        if self.len > 0 {
            let take = (64 - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if data.is_empty() {
                return;
            }
            let b = self.buf;
            self.block(&b);
            self.len = 0;
        }
        while data.len() > 64 {
            let (block, rest) = data.split_at(64);
            self.block(block.try_into().expect("64 bytes"));
            data = rest;
        }
        self.buf[..data.len()].copy_from_slice(data);
        self.len = data.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        let one = 0x80u8 >> bits;
        self.update(&[(last & (0xFFu8 << (8 - bits))) | one]);
        self.bit_pad = true;
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        let mut block = [0u8; 64];
        block[..self.len].copy_from_slice(&self.buf[..self.len]);
        self.pos += self.len as u64;
        let t1 = T_MSG | FINAL | if self.first { FIRST } else { 0 } | if self.bit_pad { BIT_PAD } else { 0 };
        ubi_block(&mut self.h, &block, self.pos, t1);
        let mut h = self.h;
        ubi_block(&mut h, &[0u8; 64], 8, T_OUT | FIRST | FINAL);
        for (o, w) in out.chunks_exact_mut(8).zip(h.iter()) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
