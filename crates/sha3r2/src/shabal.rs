//! Shabal-256, round-2 version, written from the Shabal submission document
//! ("Shabal, a Submission to NIST's Cryptographic Hash Algorithm Competition",
//! Bresson et al., round-2 package).
//!
//! Parameters (r, p, e) = (12, 3, 3): a 12-word `A`, 16-word `B` and `C`, a 64-bit block
//! counter `W`, 64-byte blocks of sixteen little-endian 32-bit words. The initial state
//! is not transcribed: it is computed as the specification defines it, by processing the
//! two prefix blocks `(256, 257, ..., 271)` and `(272, ..., 287)` from an all-zero state
//! with `W = -1`. Padding appends a 1 bit and zeros to a whole block; the last block is
//! then processed three more times without incrementing `W`, and the digest is the last
//! eight words of `C`.

/// Block size in bytes.
const BLOCK: usize = 64;

struct Shabal256;

/// Shabal-256 (round 2).
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Shabal256))
}

/// The implementation this CPU runs (as `blocks` chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2") {
        "bmi"
    } else {
        "portable"
    }
}

/// The implementation this CPU runs: the portable code.
#[cfg(not(target_arch = "x86_64"))]
fn path_name() -> &'static str {
    "portable"
}

impl crate::Candidate for Shabal256 {
    fn name(&self) -> &'static str {
        "Shabal-256-r2"
    }
    fn label(&self) -> &'static str {
        "Shabal-256 round 2 (r = 12, p = 3, e = 3)"
    }
    fn kat_dir(&self) -> &'static str {
        "shabal"
    }
    fn block_bytes(&self) -> usize {
        BLOCK
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        // The IV computation is the same for every message: done once, then copied.
        static INIT: std::sync::OnceLock<State> = std::sync::OnceLock::new();
        Box::new(Hasher {
            s: INIT.get_or_init(State::new).clone(),
            padded: false,
        })
    }
}

#[derive(Clone)]
struct State {
    a: [u32; 12],
    b: [u32; 16],
    c: [u32; 16],
    w: u64,
    buf: [u8; BLOCK],
    len: usize,
}

impl State {
    fn new() -> Self {
        let mut s = State {
            a: [0; 12],
            b: [0; 16],
            c: [0; 16],
            w: u64::MAX,
            buf: [0; BLOCK],
            len: 0,
        };
        // The two prefix blocks of the IV computation (output length 256).
        for start in [256u32, 272] {
            let m: [u32; 16] = core::array::from_fn(|i| start + i as u32);
            s.round(&m);
            s.sub_swap(&m);
            s.w = s.w.wrapping_add(1);
        }
        s
    }

    /// Message addition, counter injection and the keyed permutation `P_{M,C}`.
    #[inline(always)]
    fn round(&mut self, m: &[u32; 16]) {
        perm(&mut self.a, &mut self.b, &self.c, m, self.w);
    }

    /// Message subtraction from `C`, then the exchange of `B` and `C`.
    #[inline(always)]
    fn sub_swap(&mut self, m: &[u32; 16]) {
        for (c, &w) in self.c.iter_mut().zip(m) {
            *c = c.wrapping_sub(w);
        }
        core::mem::swap(&mut self.b, &mut self.c);
    }

    fn block(&mut self, block: &[u8]) {
        let m = words(block);
        self.round(&m);
        self.sub_swap(&m);
        self.w = self.w.wrapping_add(1);
    }

    /// Pads the buffer (whose `len` bytes already hold the message tail, the padding bit
    /// included when `padded` is true) and runs the final block and the three final rounds.
    fn close(mut self, out: &mut [u8; 32], padded: bool) {
        if !padded {
            self.buf[self.len] = 0x80;
            self.len += 1;
        }
        self.buf[self.len..].fill(0);
        let blk = self.buf;
        let m: [u32; 16] =
            core::array::from_fn(|i| u32::from_le_bytes([blk[4 * i], blk[4 * i + 1], blk[4 * i + 2], blk[4 * i + 3]]));
        for _ in 0..4 {
            self.round(&m);
            self.sub_swap(&m);
        }
        for (o, w) in out.chunks_exact_mut(4).zip(&self.c[8..]) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }
}

/// Message addition, counter injection and the keyed permutation `P_{M,C}` on `A` and
/// `B` (keyed by `C`), every index a constant.
///
/// Register allocation: the 60 live words (A 12, B 16, C 16, M 16) do not fit in the
/// sixteen general registers, and when every word is an SSA value the compiler spills and
/// reloads them in a haphazard order (about half the instructions were moves). Yet only one
/// word is truly hot at any moment: the A word just produced, which the next step consumes
/// on the serial chain. The A word a step overwrites was written twelve steps earlier and
/// the B words it reads were written three, seven and ten steps earlier, so they can live in
/// memory at no cost in latency. So `A` and `B` are kept in small stack arrays accessed
/// only through volatile loads and stores (see `Mem`), which the optimiser may not promote
/// into registers, and `C` and `M` are read the same way where they are used; only the
/// chain value travels in a register. A step is then a handful of loads, the ALU chain and
/// two stores, with no spill traffic.
#[inline(always)]
fn perm(a: &mut [u32; 12], b: &mut [u32; 16], c: &[u32; 16], m: &[u32; 16], w: u64) {
    let mut bs: Mem<16> = Mem(core::array::from_fn(|i| b[i].wrapping_add(m[i]).rotate_left(17)));
    let mut am: Mem<12> = Mem(*a);
    am.set(0, a[0] ^ w as u32);
    am.set(1, a[1] ^ (w >> 32) as u32);
    let (c, m): (&Mem<16>, &Mem<16>) = (Mem::view(c), Mem::view(m));
    let mut prev = a[11];
    // Step t = i + 16 j of the three passes updates A[t mod 12] (fully unrolled).
    macro_rules! step {
        ($t:expr) => {{
            const I: usize = $t % 16;
            const K: usize = $t % 12;
            // The terms not depending on the previous step's A word are grouped apart, so
            // that the serial chain through A is rotate, *5, xor, *3, xor.
            let off = am.get(K) ^ c.get((24 - I) % 16);
            let rest = bs.get((I + 13) % 16) ^ (bs.get((I + 9) % 16) & !bs.get((I + 6) % 16)) ^ m.get(I);
            let (off, rest) = (opaque(off), opaque(rest));
            let v = prev.rotate_left(15).wrapping_mul(5);
            let x = (v ^ off).wrapping_mul(3) ^ rest;
            am.set(K, x);
            bs.set(I, !(bs.get(I).rotate_left(1) ^ x));
            prev = x;
        }};
    }
    macro_rules! steps {
        ($($t:expr),*) => { $(step!($t);)* };
    }
    steps!(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
        30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47
    );
    let _ = prev;
    for (i, x) in a.iter_mut().enumerate() {
        *x = am
            .get(i)
            .wrapping_add(c.get((i + 3) & 15))
            .wrapping_add(c.get((i + 15) & 15))
            .wrapping_add(c.get((i + 27) & 15));
    }
    for (i, x) in b.iter_mut().enumerate() {
        *x = bs.get(i);
    }
}

/// Returns `x` unchanged, but hides from the optimiser how it was computed, so that
/// reassociation cannot fold its parts one by one into the serial A chain (which lengthened
/// the chain from five operations to eight). An empty `asm!` block costs no instruction.
#[inline(always)]
fn opaque(x: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut x = x;
        // SAFETY: the assembly is only a comment: it reads and writes nothing but the
        // register holding `x`, which it leaves unchanged.
        unsafe { core::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags)) };
        x
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut x = x;
        // SAFETY: as above, a comment that leaves the register holding `x` unchanged.
        unsafe { core::arch::asm!("/* {0:w} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags)) };
        x
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        x
    }
}

/// Words that stay in memory: every access is a volatile load or store, so the compiler
/// keeps them in the stack frame (or the caller's array) instead of allocating registers
/// to them. Used by `perm` to leave the registers to the chain.
#[repr(transparent)]
struct Mem<const N: usize>([u32; N]);

impl<const N: usize> Mem<N> {
    /// The same array, viewed as `Mem` for reading.
    #[inline(always)]
    fn view(x: &[u32; N]) -> &Self {
        // SAFETY: `Mem<N>` is `repr(transparent)` over `[u32; N]`, so the layouts agree and
        // the reference keeps the borrow's lifetime.
        unsafe { &*(x as *const [u32; N] as *const Self) }
    }
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        // SAFETY: `&self.0[i]` is a valid, aligned, bounds-checked reference to an initialised
        // `u32`, which is all `read_volatile` requires.
        unsafe { core::ptr::read_volatile(&self.0[i]) }
    }
    #[inline(always)]
    fn set(&mut self, i: usize, v: u32) {
        // SAFETY: `&mut self.0[i]` is a valid, aligned, bounds-checked, exclusive reference
        // to a `u32`, which is all `write_volatile` requires.
        unsafe { core::ptr::write_volatile(&mut self.0[i], v) }
    }
}

/// The block's sixteen little-endian words.
#[inline(always)]
fn words(block: &[u8]) -> [u32; 16] {
    core::array::from_fn(|i| u32::from_le_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes")))
}

impl State {
    /// Processes the whole 64-byte blocks of `data` on local copies of `A`, `B`, `C`, two
    /// blocks per iteration: instead of exchanging `B` and `C` after each block, the second
    /// block of a pair runs with their roles swapped, so no copying is needed.
    ///
    /// On x86-64 with BMI1 and BMI2 (detected at run time; std caches the answer) the loop
    /// is compiled a second time with those extensions: `b9 & !b6` becomes one `andn`, and
    /// `rorx` can rotate a word straight out of memory into a fresh register.
    fn blocks(&mut self, data: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2") {
            // SAFETY: the CPU supports BMI1 and BMI2, the only features `blocks_bmi` enables.
            unsafe { self.blocks_bmi(data) };
            return;
        }
        self.blocks_body(data);
    }

    /// `blocks_body` compiled with BMI1 and BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2")]
    fn blocks_bmi(&mut self, data: &[u8]) {
        self.blocks_body(data);
    }

    #[inline(always)]
    fn blocks_body(&mut self, data: &[u8]) {
        let (mut a, mut b, mut c, mut w) = (self.a, self.b, self.c, self.w);
        let mut pairs = data.chunks_exact(2 * BLOCK);
        for pair in &mut pairs {
            let m = words(&pair[..BLOCK]);
            perm(&mut a, &mut b, &c, &m, w);
            for (x, &y) in c.iter_mut().zip(&m) {
                *x = x.wrapping_sub(y);
            }
            w = w.wrapping_add(1);
            // Now `c` plays B and `b` plays C.
            let m = words(&pair[BLOCK..]);
            perm(&mut a, &mut c, &b, &m, w);
            for (x, &y) in b.iter_mut().zip(&m) {
                *x = x.wrapping_sub(y);
            }
            w = w.wrapping_add(1);
        }
        (self.a, self.b, self.c, self.w) = (a, b, c, w);
        let rest = pairs.remainder();
        if !rest.is_empty() {
            self.block(rest);
        }
    }
}

/// A state, plus whether `update_bits` already placed the padding bit.
#[derive(Clone)]
struct Hasher {
    s: State,
    padded: bool,
}

impl State {
    fn absorb(&mut self, mut data: &[u8]) {
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
        let whole = data.len() - data.len() % BLOCK;
        self.blocks(&data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }
}

impl crate::State for Hasher {
    fn update(&mut self, data: &[u8]) {
        self.s.absorb(data);
    }
    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        // The len < BLOCK invariant holds, so the partial byte (with its padding bit) fits.
        let mask = 0xFFu8 << (8 - bits);
        self.s.buf[self.s.len] = (last & mask) | (0x80 >> bits);
        self.s.len += 1;
        self.padded = true;
        Ok(())
    }
    fn finish(self: Box<Self>, out: &mut [u8; 32]) {
        self.s.close(out, self.padded);
    }
    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// The BMI build of the block loop agrees with the portable one on pseudo-random data
    /// (both are also checked against the KAT files, but only one of them runs there).
    #[test]
    fn bmi_matches_portable() {
        if !(std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2")) {
            cryptoscope_testkit::skip("this CPU has no BMI1/BMI2");
            return;
        }
        let mut next = crate::testutil::rng(0x9E37_79B9_7F4A_7C15);
        let data: Vec<u8> = (0..64 * 37).map(|_| next() as u8).collect();
        for blocks in [1, 2, 3, 36, 37] {
            let mut p = State::new();
            let mut v = p.clone();
            p.blocks_body(&data[..64 * blocks]);
            // SAFETY: BMI1 and BMI2 were detected above.
            unsafe { v.blocks_bmi(&data[..64 * blocks]) };
            assert_eq!((p.a, p.b, p.c, p.w), (v.a, v.b, v.c, v.w), "{blocks} blocks");
        }
    }
}
