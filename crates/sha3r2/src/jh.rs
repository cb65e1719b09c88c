//! JH-256, round-2 version: E8 of 35.5 rounds (35 rounds of R8, then a last half round
//! of S-boxes only; round 3 raised it to 42 full rounds), written from the round-2 JH
//! specification (Hongjun Wu, "The Hash Function JH", 2009).
//!
//! The 1024-bit state is kept bit-sliced as eight 128-bit planes: the specification's
//! grouping puts bit `p` of the 16-byte slice `H[16k..16k+16]` into bit `3 - k/2` of the
//! even (`k` even) or odd (`k` odd) nibble of nibble pair `p`, so the S-box layer and the
//! linear transform `L` become word-wide Boolean operations between planes. The
//! permutation `P8` is a rotation of the 7-bit pair index (plus an exchange of adjacent
//! odd nibbles); instead of moving the planes, the index frame is tracked, so round `r`
//! only swaps odd-plane bits at distance `2^(r mod 7)`, and the round constants are
//! generated (by `R6` from `C_0`, as the specification defines them) and laid out in the
//! frame of their round at compile time. After 35 rounds the frame is the identity again.
//!
//! **A finding about the round-2 ExtremelyLongMsgKAT_256.** This implementation passes all
//! 5,122 entries of the round-2 ShortMsgKAT_256 and LongMsgKAT_256 (bit-level ones too),
//! but gives `F26C9CDF…` for the 1 GiB message where the round-2 file says `A2E77849…`.
//! The same code with E8 at 42 rounds (round 3's only change) gives the published round-3
//! digests of the empty message and of that 1 GiB message (`tests` below), so the
//! streaming, padding and 128-bit length field are right. No length-field mistake we could
//! think of (32-bit or byte counts, little-endian, off-by-one block counts) reproduces the
//! round-2 value, so we take the file's entry to be wrong; `vectors/README.md` records the
//! dispute and the gate reports that entry without gating on it.

/// Block size in bytes.
const BLOCK: usize = 64;

/// The two S-boxes (JH specification, section 2.2).
const SBOX: [[u8; 16]; 2] = [
    [9, 0, 4, 11, 13, 12, 3, 15, 1, 10, 2, 6, 7, 5, 8, 14],
    [3, 12, 6, 13, 5, 7, 1, 9, 15, 2, 0, 4, 11, 10, 14, 8],
];

/// `C_0`, the first round constant as 64 nibbles: the integer part of
/// `(sqrt(2) - 1) * 2^256` (JH specification, section 2.5).
const C0: [u8; 64] = [
    0x6, 0xa, 0x0, 0x9, 0xe, 0x6, 0x6, 0x7, 0xf, 0x3, 0xb, 0xc, 0xc, 0x9, 0x0, 0x8, //
    0xb, 0x2, 0xf, 0xb, 0x1, 0x3, 0x6, 0x6, 0xe, 0xa, 0x9, 0x5, 0x7, 0xd, 0x3, 0xe, //
    0x3, 0xa, 0xd, 0xe, 0xc, 0x1, 0x7, 0x5, 0x1, 0x2, 0x7, 0x7, 0x5, 0x0, 0x9, 0x9, //
    0xd, 0xa, 0x2, 0xf, 0x5, 0x9, 0x0, 0xb, 0x0, 0x6, 0x6, 0x7, 0x3, 0x2, 0x2, 0xa,
];

/// The nibble form of the linear transform `L` on a pair `(a, b)`.
const fn l_nibbles(mut a: u8, mut b: u8) -> (u8, u8) {
    b ^= ((a << 1) ^ (a >> 3) ^ ((a >> 2) & 2)) & 0xf;
    a ^= ((b << 1) ^ (b >> 3) ^ ((b >> 2) & 2)) & 0xf;
    (a, b)
}

/// `C_{r+1} = R6(C_r)` with all-zero round constants (S-box `S0` everywhere).
const fn next_constant(c: [u8; 64]) -> [u8; 64] {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        let (a, b) = l_nibbles(SBOX[0][c[i] as usize], SBOX[0][c[i + 1] as usize]);
        t[i] = a;
        t[i + 1] = b;
        i += 2;
    }
    // Pi_6: exchange the last two elements of every four.
    let mut i = 0;
    while i < 64 {
        let x = t[i + 2];
        t[i + 2] = t[i + 3];
        t[i + 3] = x;
        i += 4;
    }
    // P'_6, then Phi_6 (exchange of adjacent elements in the second half).
    let mut out = [0u8; 64];
    let mut i = 0;
    while i < 32 {
        out[i] = t[2 * i];
        out[32 + (i ^ 1)] = t[2 * i + 1];
        i += 1;
    }
    out
}

/// The 42 round constants (round 2 uses the first 36) as (even, odd) 128-bit planes, each in its round's index frame:
/// plane bit `127 - q` holds constant bit `2p` (even) or `2p + 1` (odd) for the logical
/// pair `p = q` rotated right by `r mod 7` places (as a 7-bit number).
const RC: [[u128; 2]; 42] = {
    let mut out = [[0u128; 2]; 42];
    let mut c = C0;
    let mut r = 0;
    while r < 42 {
        let s = (r % 7) as u32;
        let mut q = 0u32;
        while q < 128 {
            let p = ((q >> s) | (q << (7 - s))) & 127;
            // Constant bits 2p and 2p + 1: the two top or bottom bits of nibble p / 2.
            let nib = c[(p >> 1) as usize] >> (2 - 2 * (p & 1));
            out[r][0] |= (((nib >> 1) & 1) as u128) << (127 - q);
            out[r][1] |= ((nib & 1) as u128) << (127 - q);
            q += 1;
        }
        c = next_constant(c);
        r += 1;
    }
    out
};

/// Masks selecting, for `j` in `0..7`, the plane bits whose index has bit `j` clear.
const SWAP_MASK: [u128; 7] = {
    let mut m = [0u128; 7];
    let mut j = 0;
    while j < 7 {
        let mut q = 0;
        while q < 128 {
            if q & (1 << j) == 0 {
                m[j] |= 1u128 << q;
            }
            q += 1;
        }
        j += 1;
    }
    m
};

/// The S-box layer on one nibble set (`m0` the top bit plane), `c` the selecting constant:
/// a bit-sliced evaluation of `S0` where `c` is 0 and `S1` where it is 1. Generic over the
/// plane type, so the same circuit serves `u128` and the vector planes.
#[inline(always)]
fn sbox<T: Plane>(m: &mut [T; 4], c: T) {
    let [mut m0, mut m1, mut m2, mut m3] = *m;
    m3 = !m3;
    m0 = m0 ^ (!m2 & c);
    let t = c ^ (m0 & m1);
    m0 = m0 ^ (m2 & m3);
    m3 = m3 ^ (!m1 & m2);
    m1 = m1 ^ (m0 & m2);
    m2 = m2 ^ (m0 & !m3);
    m0 = m0 ^ (m1 | m3);
    m3 = m3 ^ (m1 & m2);
    m1 = m1 ^ (t & m0);
    m2 = m2 ^ t;
    *m = [m0, m1, m2, m3];
}

/// What the S-box layer and `L` need of a plane: the Boolean operations.
trait Plane:
    Copy
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::Not<Output = Self>
{
}

impl Plane for u128 {}

/// The linear transform `L` between the even (`a`) and odd (`b`) nibble planes.
#[inline(always)]
fn linear<T: Plane>(a: &mut [T; 4], b: &mut [T; 4]) {
    b[0] = b[0] ^ a[1];
    b[1] = b[1] ^ a[2];
    b[2] = b[2] ^ a[3] ^ a[0];
    b[3] = b[3] ^ a[0];
    a[0] = a[0] ^ b[1];
    a[1] = a[1] ^ b[2];
    a[2] = a[2] ^ b[3] ^ b[0];
    a[3] = a[3] ^ b[0];
}

/// E8 on the planes (`even[k]` is `H[32k..32k+16]`, `odd[k]` is `H[32k+16..32k+32]`):
/// `FULL` rounds of R8, then, for round 2, the last half round (S-boxes only).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn e8<const FULL: usize>(even: &mut [u128; 4], odd: &mut [u128; 4]) {
    for (r, c) in RC.iter().enumerate().take(FULL) {
        sbox(even, c[0]);
        sbox(odd, c[1]);
        linear(even, odd);
        let j = r % 7;
        let (m, d) = (SWAP_MASK[j], 1u32 << j);
        for x in odd.iter_mut() {
            *x = ((*x & m) << d) | ((*x >> d) & m);
        }
    }
    if FULL == 35 {
        sbox(even, RC[35][0]);
        sbox(odd, RC[35][1]);
    }
}

struct Jh256;

/// JH-256 (round 2, 35.5 rounds).
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Jh256))
}

/// The implementation this CPU runs (as `blocks` chooses), reported as the subject's implementation.
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

impl crate::Candidate for Jh256 {
    fn name(&self) -> &'static str {
        "JH-256-r2"
    }
    fn label(&self) -> &'static str {
        "JH-256 round 2 (35.5 rounds)"
    }
    fn kat_dir(&self) -> &'static str {
        "jh"
    }
    fn block_bytes(&self) -> usize {
        BLOCK
    }
    fn path(&self) -> &'static str {
        path_name()
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State::<35>::new())
    }
}

/// The hash state; `FULL` is the number of full rounds of E8 (35 in round 2, 42 in round 3).
#[derive(Clone)]
struct State<const FULL: usize> {
    even: [u128; 4],
    odd: [u128; 4],
    buf: [u8; BLOCK],
    len: usize,
    /// Message length in bits.
    bits: u64,
}

fn plane(b: &[u8]) -> u128 {
    let mut x = [0u8; 16];
    x.copy_from_slice(&b[..16]);
    u128::from_be_bytes(x)
}

impl<const FULL: usize> State<FULL> {
    /// H(-1): the digest size in the first two bytes, then F8 with an all-zero block.
    fn new() -> Self {
        let mut s = State {
            even: [0; 4],
            odd: [0; 4],
            buf: [0; BLOCK],
            len: 0,
            bits: 0,
        };
        s.even[0] = 256u128 << 112;
        s.block(&[0; BLOCK]);
        s
    }

    /// F8: the block into the first half of H, E8, the block into the second half.
    fn block(&mut self, block: &[u8]) {
        blocks::<FULL>(&mut self.even, &mut self.odd, block);
    }
}

/// The block's four 16-byte slices as planes.
#[inline(always)]
fn message_planes(block: &[u8]) -> [u128; 4] {
    [
        plane(&block[0..]),
        plane(&block[16..]),
        plane(&block[32..]),
        plane(&block[48..]),
    ]
}

/// Portable F8 over whole blocks.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn blocks_portable<const FULL: usize>(even: &mut [u128; 4], odd: &mut [u128; 4], data: &[u8]) {
    for block in data.chunks_exact(BLOCK) {
        let m = message_planes(block);
        even[0] ^= m[0];
        odd[0] ^= m[1];
        even[1] ^= m[2];
        odd[1] ^= m[3];
        e8::<FULL>(even, odd);
        even[2] ^= m[0];
        odd[2] ^= m[1];
        even[3] ^= m[2];
        odd[3] ^= m[3];
    }
}

/// F8 over the whole blocks of `data` (a multiple of 64 bytes long): 128-bit vector planes
/// on x86-64 (compiled a second time for AVX-512, whose three-input logic instructions
/// shorten the S-box circuit, where the CPU has it), `u128` planes elsewhere.
fn blocks<const FULL: usize>(even: &mut [u128; 4], odd: &mut [u128; 4], data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx512() {
            // SAFETY: the CPU has AVX-512F and AVX-512VL, the features this function needs.
            unsafe { x86::blocks_avx512::<FULL>(even, odd, data) };
        } else {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { x86::blocks_sse2::<FULL>(even, odd, data) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    blocks_portable::<FULL>(even, odd, data);
}

/// The vector planes. A `u128` plane's bit `q` is bit `q mod 64` of 64-bit lane `q / 64`
/// of a 128-bit vector, so the S-boxes and `L` are the same Boolean circuit on vectors,
/// and the odd-plane swap at distance `2^j` is a masked pair of 64-bit lane shifts for
/// `j < 6` (the swapped bits never cross a lane) and an exchange of the two lanes for
/// `j = 6`. The rounds are unrolled in groups of seven so that every distance is a
/// constant.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{linear, message_planes, sbox, Plane, BLOCK, RC, SWAP_MASK};
    use core::arch::x86_64::*;

    /// Whether the CPU has AVX-512F and AVX-512VL (the detection is cached by `std`).
    #[inline]
    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
    }

    /// A plane in a vector register.
    use crate::v128::V;

    impl Plane for V {}

    #[inline(always)]
    fn v(x: u128) -> V {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        V(unsafe { _mm_set_epi64x((x >> 64) as i64, x as i64) })
    }

    #[inline(always)]
    fn u(x: V) -> u128 {
        let mut o = [0u64; 2];
        // SAFETY: `o` is 16 bytes, the size of the unaligned store (SSE2, the baseline).
        unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), x.0) };
        (o[1] as u128) << 64 | o[0] as u128
    }

    /// Round `r` of R8, its odd-plane swap at distance `D` (`D = 2^(r mod 7)`).
    #[inline(always)]
    fn round<const D: i32>(even: &mut [V; 4], odd: &mut [V; 4], r: usize) {
        sbox(even, v(RC[r][0]));
        sbox(odd, v(RC[r][1]));
        linear(even, odd);
        for x in odd.iter_mut() {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            x.0 = unsafe {
                if D == 64 {
                    _mm_shuffle_epi32::<0x4E>(x.0)
                } else {
                    let m = v(SWAP_MASK[D.trailing_zeros() as usize]).0;
                    _mm_or_si128(
                        _mm_slli_epi64::<D>(_mm_and_si128(x.0, m)),
                        _mm_and_si128(_mm_srli_epi64::<D>(x.0), m),
                    )
                }
            };
        }
    }

    /// F8 over whole blocks on vector planes.
    #[inline(always)]
    fn blocks_v<const FULL: usize>(even: &mut [u128; 4], odd: &mut [u128; 4], data: &[u8]) {
        let mut e = even.map(v);
        let mut o = odd.map(v);
        for block in data.chunks_exact(BLOCK) {
            let m = message_planes(block).map(v);
            e[0] = e[0] ^ m[0];
            o[0] = o[0] ^ m[1];
            e[1] = e[1] ^ m[2];
            o[1] = o[1] ^ m[3];
            for g in 0..FULL / 7 {
                let r = 7 * g;
                round::<1>(&mut e, &mut o, r);
                round::<2>(&mut e, &mut o, r + 1);
                round::<4>(&mut e, &mut o, r + 2);
                round::<8>(&mut e, &mut o, r + 3);
                round::<16>(&mut e, &mut o, r + 4);
                round::<32>(&mut e, &mut o, r + 5);
                round::<64>(&mut e, &mut o, r + 6);
            }
            if FULL == 35 {
                sbox(&mut e, v(RC[35][0]));
                sbox(&mut o, v(RC[35][1]));
            }
            e[2] = e[2] ^ m[0];
            o[2] = o[2] ^ m[1];
            e[3] = e[3] ^ m[2];
            o[3] = o[3] ^ m[3];
        }
        *even = e.map(u);
        *odd = o.map(u);
    }

    /// F8 with SSE2 vectors.
    ///
    /// # Safety
    /// Needs SSE2 (always present on x86-64).
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn blocks_sse2<const FULL: usize>(even: &mut [u128; 4], odd: &mut [u128; 4], data: &[u8]) {
        blocks_v::<FULL>(even, odd, data);
    }

    /// F8 with the same vectors, compiled for AVX-512 (three-input logic instructions).
    ///
    /// # Safety
    /// Needs AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn blocks_avx512<const FULL: usize>(even: &mut [u128; 4], odd: &mut [u128; 4], data: &[u8]) {
        blocks_v::<FULL>(even, odd, data);
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn check<const FULL: usize>(seed: u64) {
            let mut next = crate::testutil::rng(seed);
            for n in 0..12 {
                let mut r128 = || (next() as u128) << 64 | next() as u128;
                let even: [u128; 4] = core::array::from_fn(|_| r128());
                let odd: [u128; 4] = core::array::from_fn(|_| r128());
                let data: Vec<u8> = (0..BLOCK * (n % 4)).map(|_| next() as u8).collect();
                let (mut we, mut wo) = (even, odd);
                super::super::blocks_portable::<FULL>(&mut we, &mut wo, &data);
                let (mut ge, mut go) = (even, odd);
                // SAFETY: SSE2 is part of the x86-64 baseline.
                unsafe { blocks_sse2::<FULL>(&mut ge, &mut go, &data) };
                assert_eq!((ge, go), (we, wo));
                if has_avx512() {
                    let (mut ge, mut go) = (even, odd);
                    // SAFETY: the CPU has AVX-512F and AVX-512VL.
                    unsafe { blocks_avx512::<FULL>(&mut ge, &mut go, &data) };
                    assert_eq!((ge, go), (we, wo));
                }
            }
        }

        /// The vector planes agree with the portable `u128` planes on pseudo-random states
        /// and messages, at 35.5 and at 42 rounds.
        #[test]
        fn vector_matches_portable() {
            check::<35>(0x1234_5678_9ABC_DEF1);
            check::<42>(0x0FED_CBA9_8765_4321);
        }
    }
}

impl<const FULL: usize> crate::State for State<FULL> {
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
        let whole = data.len() - data.len() % BLOCK;
        blocks::<FULL>(&mut self.even, &mut self.odd, &data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }
    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        // The partial byte with its padding bit in place; `finish` sees the odd bit count.
        self.buf[self.len] = (last & (0xFFu8 << (8 - bits))) | (0x80 >> bits);
        self.len += 1;
        self.bits = self.bits.wrapping_add(bits as u64);
        Ok(())
    }
    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        // A message of whole blocks gets one block (1 bit, zeros, 128-bit length); any
        // other gets its last block padded with a 1 bit and zeros, then a length block.
        if !self.bits.is_multiple_of(512) {
            if self.bits.is_multiple_of(8) {
                self.buf[self.len] = 0x80;
                self.len += 1;
            }
            self.buf[self.len..].fill(0);
            let blk = self.buf;
            self.block(&blk);
            self.buf = [0; BLOCK];
        } else {
            self.buf = [0; BLOCK];
            self.buf[0] = 0x80;
        }
        self.buf[BLOCK - 8..].copy_from_slice(&self.bits.to_be_bytes());
        let blk = self.buf;
        self.block(&blk);
        out[..16].copy_from_slice(&self.even[3].to_be_bytes());
        out[16..].copy_from_slice(&self.odd[3].to_be_bytes());
    }
    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-sliced S-box layer agrees with the tables, for both constant bits.
    #[test]
    fn sliced_sbox_matches_tables() {
        for (c, table) in SBOX.iter().enumerate() {
            for x in 0..16u8 {
                let plane = |b: u8| if x >> b & 1 == 1 { u128::MAX } else { 0 };
                let mut m = [plane(3), plane(2), plane(1), plane(0)];
                sbox(&mut m, if c == 1 { u128::MAX } else { 0 });
                let y = m.iter().fold(0u8, |acc, &w| (acc << 1) | (w & 1) as u8);
                assert_eq!(y, table[x as usize], "S{c}[{x}]");
                assert!(m.iter().all(|&w| w == 0 || w == u128::MAX));
            }
        }
    }

    fn hex(s: Box<dyn crate::State>) -> String {
        let mut out = [0u8; 32];
        s.finish(&mut out);
        out.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// At 42 rounds the code is round-3 JH-256; its published empty-message digest (the
    /// round-3 ShortMsgKAT_256, `Len = 0`) checks the rounds, constants and padding.
    #[test]
    fn round_three_empty_message() {
        let s: Box<dyn crate::State> = Box::new(State::<42>::new());
        assert_eq!(
            hex(s),
            "46e64619c18bb0a92a5e87185a47eef83ca747b8fcc8e1412921357e326df434"
        );
    }

    /// Round 3's ExtremelyLongMsgKAT_256 digest (1 GiB: the 64-byte text 16,777,216
    /// times), as published in the round-3 KAT files and repeated in independent test
    /// suites. Passing it shows that the 128-bit length field and the whole-block padding
    /// are right for messages of 2^33 bits, the evidence behind the finding in the module
    /// documentation. `cargo test --release -p cryptoscope-sha3r2 -- --ignored`.
    #[test]
    #[ignore = "1 GiB"]
    fn round_three_extremely_long_message() {
        let text = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno";
        let mut s: Box<dyn crate::State> = Box::new(State::<42>::new());
        for _ in 0..16_777_216 {
            s.update(text);
        }
        assert_eq!(
            hex(s),
            "58ffbde520764dfc03b29598acd70655bb2c245a3d73fdd6eb9e1bc221af579b"
        );
    }
}
