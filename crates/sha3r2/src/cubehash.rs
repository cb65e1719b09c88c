//! CubeHash16/32-256 as submitted to the second round of the SHA-3 competition
//! (D. J. Bernstein, "CubeHash specification (2.B.1)", round-2 tweak): a 1024-bit state of
//! 32 words, 32-byte message blocks each followed by 16 rounds, 10r = 160 initial rounds
//! and 10r = 160 final rounds. Bit-level messages are supported (the padding appends a 1
//! bit right after the message).

/// Rounds per block (r).
const R: usize = 16;
/// Bytes per block (b).
const B: usize = 32;
/// Output bits (h).
const H: u32 = 256;

/// One CubeHash round over the 32 words x[ijklm] (index bits i=16, j=8, k=4, l=2, m=1):
/// the ten steps of the specification, the swaps folded into the indexing. `lo` holds
/// x[0jklm], `hi` x[1jklm].
#[inline(always)]
fn round(lo: &mut [u32; 16], hi: &mut [u32; 16]) {
    // 1: x[1jklm] += x[0jklm]; 2, 3, 4: rotate x[0jklm] by 7, swap j, xor x[1jklm] in.
    let h1: [u32; 16] = core::array::from_fn(|i| hi[i].wrapping_add(lo[i]));
    let l1: [u32; 16] = core::array::from_fn(|i| lo[i ^ 8].rotate_left(7) ^ h1[i]);
    // 5: swap l in x[1jklm]; 6: add x[0jklm].
    let h2: [u32; 16] = core::array::from_fn(|i| h1[i ^ 2].wrapping_add(l1[i]));
    // 7, 8, 9: rotate x[0jklm] by 11, swap k, xor x[1jklm] in; 10: swap m in x[1jklm].
    *lo = core::array::from_fn(|i| l1[i ^ 4].rotate_left(11) ^ h2[i]);
    *hi = core::array::from_fn(|i| h2[i ^ 1]);
}

/// Portable rounds.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn rounds_portable(x: &mut [u32; 32], n: usize) {
    let (l, h) = x.split_at_mut(16);
    let mut lo: [u32; 16] = l.try_into().expect("16 words");
    let mut hi: [u32; 16] = h.try_into().expect("16 words");
    for _ in 0..n {
        round(&mut lo, &mut hi);
    }
    l.copy_from_slice(&lo);
    h.copy_from_slice(&hi);
}

/// Portable absorption of whole blocks.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn absorb_portable(x: &mut [u32; 32], data: &[u8]) {
    for block in data.chunks_exact(B) {
        for (w, c) in x.iter_mut().zip(block.chunks_exact(4)) {
            *w ^= u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        rounds_portable(x, R);
    }
}

/// `n` rounds: the vector version on x86-64, the portable one elsewhere.
fn rounds(x: &mut [u32; 32], n: usize) {
    #[cfg(target_arch = "x86_64")]
    x86::run(x, &[], n);
    #[cfg(not(target_arch = "x86_64"))]
    rounds_portable(x, n);
}

/// Absorbs the whole blocks of `data` (a multiple of 32 bytes long), each followed by R
/// rounds.
fn absorb(x: &mut [u32; 32], data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    x86::run(x, data, 0);
    #[cfg(not(target_arch = "x86_64"))]
    absorb_portable(x, data);
}

/// The state after the 10r initial rounds from (h/8, b, r, 0, ...), the same for every
/// message: computed at compile time instead of per hash.
const IV: [u32; 32] = {
    let mut x = [0u32; 32];
    x[0] = H / 8;
    x[1] = B as u32;
    x[2] = R as u32;
    let mut n = 0;
    while n < 10 * R {
        // The round of `round`, on the whole state (`i` indexes x[0jklm], `i + 16` x[1jklm]).
        let mut y = [0u32; 32];
        let mut i = 0;
        while i < 16 {
            y[16 + i] = x[16 + i].wrapping_add(x[i]);
            i += 1;
        }
        i = 0;
        while i < 16 {
            y[i] = x[i ^ 8].rotate_left(7) ^ y[16 + i];
            i += 1;
        }
        i = 0;
        while i < 16 {
            x[16 + i] = y[16 + (i ^ 2)].wrapping_add(y[i]);
            i += 1;
        }
        i = 0;
        while i < 16 {
            x[i] = y[i ^ 4].rotate_left(11) ^ x[16 + i];
            i += 1;
        }
        i = 0;
        while i < 16 {
            y[16 + i] = x[16 + (i ^ 1)];
            i += 1;
        }
        i = 0;
        while i < 16 {
            x[16 + i] = y[16 + i];
            i += 1;
        }
        n += 1;
    }
    x
};

/// The vector version: the 32 words as eight 128-bit vectors, `lo[v]` = x[0jklm] and
/// `hi[v]` = x[1jklm] for `v = 2j + k`, lanes `2l + m`. The swaps of the j and k bits are
/// then only a renaming of vectors (`v ^ 2`, `v ^ 1`), and the swaps of l and m are
/// in-vector shuffles; the additions, rotations and XORs act on four words at once.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{B, R};
    use core::arch::x86_64::*;

    /// Whether the CPU has AVX-512F and AVX-512VL (the detection is cached by `std`).
    #[inline]
    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
    }

    /// Absorbs the whole blocks of `data` (R rounds each), then runs `extra` rounds.
    pub(super) fn run(x: &mut [u32; 32], data: &[u8], extra: usize) {
        if has_avx512() {
            // SAFETY: the CPU has AVX-512F and AVX-512VL, the features this function needs.
            unsafe { run_avx512(x, data, extra) }
        } else {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { run_sse2(x, data, extra) }
        }
    }

    macro_rules! run_body {
        ($x:ident, $data:ident, $extra:ident, $rotl:ident) => {{
            let p = $x.as_mut_ptr();
            // SAFETY: `x` has 32 words; the loads at words 0, 4, ..., 28 stay inside it.
            let (mut lo, mut hi) = unsafe {
                (
                    [0, 4, 8, 12].map(|i| _mm_loadu_si128(p.add(i).cast())),
                    [16, 20, 24, 28].map(|i| _mm_loadu_si128(p.add(i).cast())),
                )
            };
            macro_rules! round {
                () => {
                    let h1 = [0, 1, 2, 3].map(|v| _mm_add_epi32(hi[v], lo[v]));
                    let l1 = [0, 1, 2, 3].map(|v| _mm_xor_si128($rotl!(lo[v ^ 2], 7), h1[v]));
                    let h2 = [0, 1, 2, 3].map(|v| _mm_add_epi32(_mm_shuffle_epi32::<0x4E>(h1[v]), l1[v]));
                    lo = [0, 1, 2, 3].map(|v| _mm_xor_si128($rotl!(l1[v ^ 1], 11), h2[v]));
                    hi = [0, 1, 2, 3].map(|v| _mm_shuffle_epi32::<0xB1>(h2[v]));
                };
            }
            for block in $data.chunks_exact(B) {
                // SAFETY: `block` has 32 bytes; the loads at bytes 0 and 16 stay inside it.
                let (m0, m1) = unsafe {
                    (
                        _mm_loadu_si128(block.as_ptr().cast()),
                        _mm_loadu_si128(block.as_ptr().add(16).cast()),
                    )
                };
                lo[0] = _mm_xor_si128(lo[0], m0);
                lo[1] = _mm_xor_si128(lo[1], m1);
                for _ in 0..R / 4 {
                    round!();
                    round!();
                    round!();
                    round!();
                }
            }
            for _ in 0..$extra {
                round!();
            }
            // SAFETY: as for the loads.
            unsafe {
                for (v, i) in [0, 4, 8, 12].into_iter().enumerate() {
                    _mm_storeu_si128(p.add(i).cast(), lo[v]);
                    _mm_storeu_si128(p.add(16 + i).cast(), hi[v]);
                }
            }
        }};
    }

    /// Rotate left by a constant with two shifts (SSE2).
    macro_rules! rotl_sse2 {
        ($x:expr, $n:literal) => {{
            let x = $x;
            _mm_or_si128(_mm_slli_epi32::<$n>(x), _mm_srli_epi32::<{ 32 - $n }>(x))
        }};
    }

    /// Rotate left by a constant with the AVX-512VL `vprold`.
    macro_rules! rotl_avx512 {
        ($x:expr, $n:literal) => {
            _mm_rol_epi32::<$n>($x)
        };
    }

    /// The vector rounds with SSE2 only.
    #[target_feature(enable = "sse2")]
    pub(super) fn run_sse2(x: &mut [u32; 32], data: &[u8], extra: usize) {
        run_body!(x, data, extra, rotl_sse2)
    }

    /// The vector rounds with AVX-512VL rotates.
    ///
    /// # Safety
    /// Needs AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn run_avx512(x: &mut [u32; 32], data: &[u8], extra: usize) {
        run_body!(x, data, extra, rotl_avx512)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Both vector versions agree with the portable code on pseudo-random states,
        /// messages of 0..4 blocks and extra round counts.
        #[test]
        fn vector_matches_portable() {
            let mut next = crate::testutil::rng(0xDEAD_BEEF_CAFE_F00Du64);
            for n in 0..40 {
                let x: [u32; 32] = core::array::from_fn(|_| next() as u32);
                let data: Vec<u8> = (0..B * (n % 4)).map(|_| next() as u8).collect();
                let extra = n % 7;
                let mut want = x;
                super::super::absorb_portable(&mut want, &data);
                super::super::rounds_portable(&mut want, extra);
                let mut got = x;
                // SAFETY: SSE2 is part of the x86-64 baseline.
                unsafe { run_sse2(&mut got, &data, extra) };
                assert_eq!(got, want);
                if has_avx512() {
                    let mut got = x;
                    // SAFETY: the CPU has AVX-512F and AVX-512VL.
                    unsafe { run_avx512(&mut got, &data, extra) };
                    assert_eq!(got, want);
                }
            }
        }
    }
}

/// The compile-time IV is the initial rounds run on the initial state.
#[test]
fn iv_matches_initial_rounds() {
    let mut x = [0u32; 32];
    x[0] = H / 8;
    x[1] = B as u32;
    x[2] = R as u32;
    rounds_portable(&mut x, 10 * R);
    assert_eq!(x, IV);
}

struct CubeHash;

/// The catalogue entry for CubeHash16/32-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(CubeHash))
}

/// The implementation this CPU runs (as `x86::run` chooses), reported as the subject's implementation.
#[cfg(target_arch = "x86_64")]
fn path_name() -> &'static str {
    if x86::has_avx512() {
        "avx512vl"
    } else {
        "sse2"
    }
}

/// The implementation this CPU runs: the portable code.
#[cfg(not(target_arch = "x86_64"))]
fn path_name() -> &'static str {
    "portable"
}

impl crate::Candidate for CubeHash {
    fn name(&self) -> &'static str {
        "CubeHash-256-r2"
    }
    fn label(&self) -> &'static str {
        "CubeHash16/32-256 round 2 (160 initial and 160 final rounds)"
    }
    fn kat_dir(&self) -> &'static str {
        "cubehash"
    }
    fn block_bytes(&self) -> usize {
        B
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            x: IV,
            buf: [0; B],
            len: 0,
            done: false,
        })
    }
}

#[derive(Clone)]
struct State {
    x: [u32; 32],
    buf: [u8; B],
    len: usize,
    /// The padding is already in (after `update_bits`).
    done: bool,
}

impl State {
    /// Appends the byte `last` (message bits, then the padding 1 bit) and zeros, absorbs.
    fn pad(&mut self, last: u8) {
        let len = self.len;
        self.buf[len] = last;
        self.buf[len + 1..].fill(0);
        let block = self.buf;
        absorb(&mut self.x, &block);
        self.len = 0;
        self.done = true;
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (B - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < B {
                return;
            }
            let block = self.buf;
            absorb(&mut self.x, &block);
            self.len = 0;
        }
        let whole = data.len() - data.len() % B;
        absorb(&mut self.x, &data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        self.pad((last & (0xFFu8 << (8 - bits))) | (0x80 >> bits));
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if !self.done {
            self.pad(0x80);
        }
        self.x[31] ^= 1;
        rounds(&mut self.x, 10 * R);
        for (o, w) in out.chunks_exact_mut(4).zip(self.x.iter()) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
