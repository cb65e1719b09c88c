//! The fixsliced representation shared by `fixsliced` (one block in general-purpose
//! registers) and the `bitsliced-avx2`/`bitsliced-avx512` strategies (one block per
//! vector lane), written once over [`Lane`].
//!
//! A block is held as four bit slices `Sj` (bit `i` of `Sj` = bit `j` of nibble `i`):
//! 16-bit slices for GIFT-64, 32-bit for GIFT-128. SubCells is then the specification's
//! bitsliced S-box. PermBits moves bit `j` of nibble `i` to bit `j` of nibble
//! `π_j(i)`, a different position permutation per slice, which would be expensive; as in
//! Adomnicai, Najm and Peyrin's fixslicing (TCHES 2020), the slices are instead kept in a
//! moving *frame* `Q_r` (actual position `Q_r[p]` is stored at position `p`), the same
//! for all four slices so that the S-box still works slice-wise. Choosing the frames well
//! leaves each round only cheap per-slice moves (rotations of nibbles, bytes, halfwords
//! or words, a few SWAPMOVEs), and the frame returns to the identity every 4 rounds
//! (GIFT-64) or 5 rounds (GIFT-128). The frames and moves used here were found by a
//! search over such cheap moves (it finds the paper's 5-round structure for GIFT-128);
//! round keys and constants are stored pre-moved into the frame of their round.

use super::{round_keys_128, round_keys_64, RC, ROUNDS_128, ROUNDS_64};
use std::ops::{BitAnd, BitOr, BitXor, Not};

/// A word of bit-slice lanes: a `u16`/`u32`, or a vector of them (one block per lane).
pub(crate) trait Lane:
    Copy + BitXor<Output = Self> + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self>
{
    /// Bits per lane (16 or 32).
    const BITS: u32;
    /// `x` (truncated to the lane width) in every lane.
    fn splat(x: u32) -> Self;
    /// Shifts every lane left by `n` (`0 < n < BITS`).
    fn shl(self, n: u32) -> Self;
    /// Shifts every lane right by `n` (`0 < n < BITS`).
    fn shr(self, n: u32) -> Self;
    /// Rotates every lane left by `n` (`0 < n < BITS`).
    #[inline(always)]
    fn rotl(self, n: u32) -> Self {
        self.shl(n) | self.shr(Self::BITS - n)
    }
    /// Rotates every `w`-bit field (`w` = 4, 8, 16 or `BITS`) of every lane left by `k`.
    #[inline(always)]
    fn rot_field(self, w: u32, k: u32) -> Self {
        rot_field_masked(self, w, k)
    }
}

/// [`Lane::rot_field`] by shifts and masks.
#[inline(always)]
pub(crate) fn rot_field_masked<W: Lane>(x: W, w: u32, k: u32) -> W {
    if w == W::BITS {
        return x.rotl(k);
    }
    let low = ((1u32 << k) - 1) * (u32::MAX / ((1u32 << w) - 1));
    (x.shl(k) & W::splat(!low)) | (x.shr(w - k) & W::splat(low))
}

/// `WORD_ORDER[w / 32]`: the byte shuffle (within each 16-byte lane) from big-endian
/// blocks to native words, pairing the blocks of a lane: 32-bit words (`w` = 32) are just
/// byte-swapped; of the two 8-byte GIFT-64 blocks `A`, `B` of a lane, the 16-bit words
/// are byte-swapped and ordered `A0 B0 A1 B1 A2 B2 A3 B3`, so that 32-bit element `k`
/// holds word `k` of both blocks. A 4x4 transpose of 32-bit elements then gathers word
/// `k` of every block into vector `k`.
#[cfg(target_arch = "x86_64")]
pub(crate) const WORD_ORDER: [[u8; 16]; 2] = [
    [1, 0, 9, 8, 3, 2, 11, 10, 5, 4, 13, 12, 7, 6, 15, 14],
    [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12],
];

/// The inverse shuffles of [`WORD_ORDER`].
#[cfg(target_arch = "x86_64")]
pub(crate) const WORD_ORDER_INVERSE: [[u8; 16]; 2] = [invert(&WORD_ORDER[0]), invert(&WORD_ORDER[1])];

#[cfg(target_arch = "x86_64")]
const fn invert(p: &[u8; 16]) -> [u8; 16] {
    let mut q = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        q[p[i] as usize] = i as u8;
        i += 1;
    }
    q
}

#[cfg(target_arch = "x86_64")]
/// `BYTE_ROTATIONS[w / 32][k / 8]`: the byte-shuffle indices (within each 16-byte lane,
/// little-endian) rotating every `w`-bit field (16 or 32) left by `k` bits, `k` a
/// multiple of 8 (for vector types with a byte shuffle).
pub(crate) const BYTE_ROTATIONS: [[[u8; 16]; 4]; 2] = [
    [
        byte_rotation(16, 0),
        byte_rotation(16, 8),
        byte_rotation(16, 0),
        byte_rotation(16, 8),
    ],
    [
        byte_rotation(32, 0),
        byte_rotation(32, 8),
        byte_rotation(32, 16),
        byte_rotation(32, 24),
    ],
];

#[cfg(target_arch = "x86_64")]
const fn byte_rotation(w: u32, k: u32) -> [u8; 16] {
    let fb = (w / 8) as usize;
    let s = (k / 8) as usize;
    let mut idx = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        idx[i] = (i - i % fb + (i % fb + fb - s) % fb) as u8;
        i += 1;
    }
    idx
}

impl Lane for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn splat(x: u32) -> Self {
        x
    }
    #[inline(always)]
    fn shl(self, n: u32) -> Self {
        self << n
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        self >> n
    }
    #[inline(always)]
    fn rotl(self, n: u32) -> Self {
        self.rotate_left(n)
    }
}

impl Lane for u16 {
    const BITS: u32 = 16;
    #[inline(always)]
    fn splat(x: u32) -> Self {
        x as u16
    }
    #[inline(always)]
    fn shl(self, n: u32) -> Self {
        self << n
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        self >> n
    }
    #[inline(always)]
    fn rotl(self, n: u32) -> Self {
        self.rotate_left(n)
    }
}

/// Swaps the bits of `x` at positions `p` in `mask` with those at `p + n`.
#[inline(always)]
fn swapmove<W: Lane>(x: W, mask: u32, n: u32) -> W {
    let t = (x.shr(n) ^ x) & W::splat(mask);
    x ^ t ^ t.shl(n)
}

/// Swaps the bits of `b` at positions `p` in `mask` with the bits of `a` at `p + n`.
#[inline(always)]
fn swapmove2<W: Lane>(a: &mut W, b: &mut W, mask: u32, n: u32) {
    let t = (a.shr(n) ^ *b) & W::splat(mask);
    *b = *b ^ t;
    *a = *a ^ t.shl(n);
}

/// Mask of the positions (of `bits`) whose index has bit `a` set and bit `b` clear: the
/// lower halves of the position pairs a swap of index bits `a < b` exchanges. (Evaluated
/// at compile time.)
const fn index_swap_mask(a: u32, b: u32, bits: u32) -> u32 {
    let mut m = 0u32;
    let mut p = 0;
    while p < bits {
        if (p >> a) & 1 == 1 && (p >> b) & 1 == 0 {
            m |= 1 << p;
        }
        p += 1;
    }
    m
}

/// Exchanges bits `A < B` of every bit position's index.
#[inline(always)]
fn swap_index_bits<W: Lane, const A: u32, const B: u32>(x: W) -> W {
    swapmove(x, const { index_swap_mask(A, B, W::BITS) }, (1 << B) - (1 << A))
}

/// The bitsliced GIFT S-box on slices `[S0, S1, S2, S3]`: the specification's circuit
/// (§2.4: `S1 ^= S0 & S2; S0 ^= S1 & S3; S2 ^= S0 | S1; S3 ^= S2; S1 ^= S3; S3 = ~S3;
/// S2 ^= S0 & S1`, then S0 and S3 swapped), 11 operations and a NOT in a dependency chain
/// of 10, shortened to depth 6 by one identity: after the first two steps
/// `S0 | S1 = x0 | x1`, so the third step is `S2 = x2 ^ (x0 | x1)`, computable at once.
/// (Checked exhaustively against the S-box by the tests.)
#[inline(always)]
pub(crate) fn sbox<W: Lane>([x0, x1, x2, x3]: [W; 4]) -> [W; 4] {
    let a1 = x1 ^ (x0 & x2);
    let a0 = x0 ^ (a1 & x3);
    let a2 = x2 ^ (x0 | x1);
    let a3 = x3 ^ a2;
    let b1 = a1 ^ a3;
    let b2 = a2 ^ (a0 & b1);
    [!a3, b1, b2, a0]
}

/// Block words (`w[k]` = big-endian word `k` of the block: GIFT-128 `u32`s, GIFT-64
/// `u16`s) to bit slices. Within each word, nibble `i` bit `j` goes to byte (GIFT-128) or
/// nibble (GIFT-64) `j`, bit `i` (a rotation of the bit index, done as swaps of index
/// bits); then a byte/nibble transpose across the four words.
#[inline(always)]
pub(crate) fn pack<W: Lane>(w: [W; 4]) -> [W; 4] {
    // No closures here (a closure would lose the caller's target features).
    let mut u = [w[3], w[2], w[1], w[0]];
    for x in &mut u {
        if W::BITS == 32 {
            // (i2 i1 i0 j1 j0) -> (j1 j0 i2 i1 i0)
            *x = swap_index_bits::<W, 1, 3>(*x);
            *x = swap_index_bits::<W, 0, 2>(*x);
            *x = swap_index_bits::<W, 2, 4>(*x);
            *x = swap_index_bits::<W, 3, 4>(*x);
        } else {
            // (i1 i0 j1 j0) -> (j1 j0 i1 i0)
            *x = swap_index_bits::<W, 0, 2>(*x);
            *x = swap_index_bits::<W, 1, 3>(*x);
        }
    }
    transpose(&mut u);
    u
}

/// Inverse of [`pack`].
#[inline(always)]
pub(crate) fn unpack<W: Lane>(s: [W; 4]) -> [W; 4] {
    let mut u = s;
    transpose(&mut u);
    for x in &mut u {
        if W::BITS == 32 {
            *x = swap_index_bits::<W, 3, 4>(*x);
            *x = swap_index_bits::<W, 2, 4>(*x);
            *x = swap_index_bits::<W, 0, 2>(*x);
            *x = swap_index_bits::<W, 1, 3>(*x);
        } else {
            *x = swap_index_bits::<W, 1, 3>(*x);
            *x = swap_index_bits::<W, 0, 2>(*x);
        }
    }
    [u[3], u[2], u[1], u[0]]
}

/// Transposes the 4x4 matrix of quarter-lanes (bytes or nibbles) of `u`: quarter `j` of
/// `u[m]` becomes quarter `m` of `u[j]`. An involution.
#[inline(always)]
fn transpose<W: Lane>(u: &mut [W; 4]) {
    let q = W::BITS / 4;
    let (m1, m2) = if q == 8 {
        (0x00ff_00ff, 0x0000_ffff)
    } else {
        (0x0f0f, 0x00ff)
    };
    let [u0, u1, u2, u3] = u;
    swapmove2(u0, u1, m1, q);
    swapmove2(u2, u3, m1, q);
    swapmove2(u0, u2, m2, 2 * q);
    swapmove2(u1, u3, m2, 2 * q);
}

/// [`pack`] for one GIFT-128 block in general-purpose registers, two 32-bit words per
/// `u64` (halving the SWAPMOVEs): `w` as in [`pack`]. Also the GIFTb-128 conversion.
pub(crate) fn pack128(w: [u32; 4]) -> [u32; 4] {
    // a = (u0, u1) = (w3, w2), b = (u2, u3) = (w1, w0), low half first.
    let mut a = u64::from(w[3]) | u64::from(w[2]) << 32;
    let mut b = u64::from(w[1]) | u64::from(w[0]) << 32;
    for x in [&mut a, &mut b] {
        *x = swap_index_bits64::<1, 3>(*x);
        *x = swap_index_bits64::<0, 2>(*x);
        *x = swap_index_bits64::<2, 4>(*x);
        *x = swap_index_bits64::<3, 4>(*x);
    }
    transpose64(&mut a, &mut b);
    [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]
}

/// Inverse of [`pack128`].
pub(crate) fn unpack128(s: [u32; 4]) -> [u32; 4] {
    let mut a = u64::from(s[0]) | u64::from(s[1]) << 32;
    let mut b = u64::from(s[2]) | u64::from(s[3]) << 32;
    transpose64(&mut a, &mut b);
    for x in [&mut a, &mut b] {
        *x = swap_index_bits64::<3, 4>(*x);
        *x = swap_index_bits64::<2, 4>(*x);
        *x = swap_index_bits64::<0, 2>(*x);
        *x = swap_index_bits64::<1, 3>(*x);
    }
    [(b >> 32) as u32, b as u32, (a >> 32) as u32, a as u32]
}

/// [`swap_index_bits`] on both 32-bit halves of `x`.
#[inline(always)]
fn swap_index_bits64<const A: u32, const B: u32>(x: u64) -> u64 {
    let m = const { index_swap_mask(A, B, 32) as u64 };
    let n = (1 << B) - (1 << A);
    let t = ((x >> n) ^ x) & (m | m << 32);
    x ^ t ^ (t << n)
}

/// [`transpose`] of `[u0, u1, u2, u3]` held as `a = (u0, u1)`, `b = (u2, u3)`.
#[inline(always)]
fn transpose64(a: &mut u64, b: &mut u64) {
    // Odd bytes of u0 <-> even bytes of u1 (24 bits up), and likewise in b.
    for x in [&mut *a, &mut *b] {
        let t = ((*x >> 24) ^ *x) & 0x0000_0000_ff00_ff00;
        *x ^= t ^ (t << 24);
    }
    // Upper halves of u0, u1 <-> lower halves of u2, u3.
    let t = ((*a >> 16) ^ *b) & 0x0000_ffff_0000_ffff;
    *b ^= t;
    *a ^= t << 16;
}

/// Where PermBits sends position `i` of slice `j` (`n`-bit slices):
/// nibble `4a + b` goes to nibble `(n/4) ((j - b) mod 4) + a`.
const fn perm_slice(j: usize, i: usize, n: usize) -> usize {
    (n / 4) * ((j + 4 - (i & 3)) & 3) + (i >> 2)
}

/// `FRAMES128[l]`: the frame after round `l` of each group of 5 GIFT-128 rounds.
/// Slice 3's move is a rotation by 16 in rounds 2 and 4 and nothing otherwise, so
/// `Q_{l+1}[p] = P_3(Q_l[rot16^(-1)(p)])` or `P_3(Q_l[p])`; `Q_5` is the identity.
const FRAMES128: [[u8; 32]; 5] = {
    let mut f = [[0u8; 32]; 5];
    let mut q = [0u8; 32];
    let mut p = 0;
    while p < 32 {
        q[p] = p as u8;
        p += 1;
    }
    let mut l = 0;
    while l < 5 {
        let mut p = 0;
        while p < 32 {
            let src = if l == 2 || l == 4 { (p + 16) % 32 } else { p };
            f[l][p] = perm_slice(3, q[src] as usize, 32) as u8;
            p += 1;
        }
        q = f[l];
        l += 1;
    }
    f
};

/// `FRAMES64[l]`: the frame after round `l` of each group of 4 GIFT-64 rounds. Slice 0
/// never moves, so `Q_{l+1} = P_0 Q_l`; `Q_4` is the identity.
const FRAMES64: [[u8; 16]; 4] = {
    let mut f = [[0u8; 16]; 4];
    let mut q = [0u8; 16];
    let mut p = 0;
    while p < 16 {
        q[p] = p as u8;
        p += 1;
    }
    let mut l = 0;
    while l < 4 {
        let mut p = 0;
        while p < 16 {
            f[l][p] = perm_slice(0, q[p] as usize, 16) as u8;
            p += 1;
        }
        q = f[l];
        l += 1;
    }
    f
};

/// `KEY_FRAMES[l][j]`: the frame in which round `l` (of a group of `L`) adds its key to
/// slice `j`. Keys are added right after the S-box, before the slices' moves: slice `j`
/// is then in frame `Q_l` with PermBits still to apply, i.e. in frame `P_j Q_l`. (Added
/// there, the key XOR can merge into the S-box's last XORs, off the critical path.)
const fn key_frames<const N: usize, const L: usize>(frames: &[[u8; N]; L]) -> [[[u8; N]; 4]; L] {
    let mut k = [[[0u8; N]; 4]; L];
    let mut l = 0;
    while l < L {
        let mut j = 0;
        while j < 4 {
            let mut p = 0;
            while p < N {
                // Q_0 is the identity; Q_l is the frame after round l - 1.
                let q = if l == 0 { p } else { frames[l - 1][p] as usize };
                k[l][j][p] = perm_slice(j, q, N) as u8;
                p += 1;
            }
            j += 1;
        }
        l += 1;
    }
    k
}

const KEY_FRAMES128: [[[u8; 32]; 4]; 5] = key_frames(&FRAMES128);
const KEY_FRAMES64: [[[u8; 16]; 4]; 4] = key_frames(&FRAMES64);

/// `x` (a slice in the standard frame) moved into frame `q`: stored bit `p` is bit `q[p]`.
const fn to_frame(x: u32, q: &[u8]) -> u32 {
    let mut y = 0;
    let mut p = 0;
    while p < q.len() {
        y |= ((x >> q[p]) & 1) << p;
        p += 1;
    }
    y
}

/// The GIFT-128 constant as slice 3: `c5..c0` at nibbles 5..0, and nibble 31.
const fn const_slice128(r: usize) -> u32 {
    RC[r] as u32 | 1 << 31
}

/// The GIFT-64 constant as slice 3: `c5..c0` at nibbles 5..0, and nibble 15.
const fn const_slice64(r: usize) -> u32 {
    RC[r] as u32 | 1 << 15
}

/// The GIFT-128 constants in the frames of their rounds.
const RC128_FRAMED: [u32; ROUNDS_128] = {
    let mut c = [0u32; ROUNDS_128];
    let mut r = 0;
    while r < ROUNDS_128 {
        c[r] = to_frame(const_slice128(r), &KEY_FRAMES128[r % 5][3]);
        r += 1;
    }
    c
};

/// The GIFT-64 constants in the frames of their rounds.
const RC64_FRAMED: [u32; ROUNDS_64] = {
    let mut c = [0u32; ROUNDS_64];
    let mut r = 0;
    while r < ROUNDS_64 {
        c[r] = to_frame(const_slice64(r), &KEY_FRAMES64[r % 4][3]);
        r += 1;
    }
    c
};

/// GIFT-128 round keys as slices: `[S1 ^= V, S2 ^= U, S3 ^= constant]` per round, both in
/// the frame of their round (for encryption) and in the standard frame (for the exposed
/// AddRoundKey, which works on the standard representation).
#[derive(Clone)]
pub(crate) struct Keys128 {
    pub(crate) framed: [[u32; 3]; ROUNDS_128],
    pub(crate) plain: [[u32; 3]; ROUNDS_128],
    /// `framed` with the slice 1 key and slice 3 constant complemented in odd rounds,
    /// for [`rounds128_alternating`].
    pub(crate) alternating: [[u32; 3]; ROUNDS_128],
}

impl Keys128 {
    pub(crate) fn new(key: &[u8]) -> Self {
        let mut k = Keys128 {
            framed: [[0; 3]; ROUNDS_128],
            plain: [[0; 3]; ROUNDS_128],
            alternating: [[0; 3]; ROUNDS_128],
        };
        k.rekey(key);
        k
    }

    pub(crate) fn rekey(&mut self, key: &[u8]) {
        for (r, (u, v)) in round_keys_128(key).into_iter().enumerate() {
            let q = &KEY_FRAMES128[r % 5];
            self.plain[r] = [v, u, const_slice128(r)];
            self.framed[r] = [to_frame(v, &q[1]), to_frame(u, &q[2]), RC128_FRAMED[r]];
            let [k1, k2, k3] = self.framed[r];
            self.alternating[r] = if r % 2 == 1 { [!k1, k2, !k3] } else { [k1, k2, k3] };
        }
    }
}

/// GIFT-64 round keys as slices: `[S0 ^= V, S1 ^= U, S3 ^= constant]` per round (16-bit
/// values), framed and plain as in [`Keys128`].
#[derive(Clone)]
pub(crate) struct Keys64 {
    pub(crate) framed: [[u32; 3]; ROUNDS_64],
    pub(crate) plain: [[u32; 3]; ROUNDS_64],
}

impl Keys64 {
    pub(crate) fn new(key: &[u8]) -> Self {
        let mut k = Keys64 {
            framed: [[0; 3]; ROUNDS_64],
            plain: [[0; 3]; ROUNDS_64],
        };
        k.rekey(key);
        k
    }

    pub(crate) fn rekey(&mut self, key: &[u8]) {
        for (r, (u, v)) in round_keys_64(key).into_iter().enumerate() {
            let (u, v) = (u32::from(u), u32::from(v));
            let q = &KEY_FRAMES64[r % 4];
            self.plain[r] = [v, u, const_slice64(r)];
            self.framed[r] = [to_frame(v, &q[0]), to_frame(u, &q[1]), RC64_FRAMED[r]];
        }
    }
}

/// AddRoundKey of GIFT-128 in the standard frame (or any frame, given its keys).
#[inline(always)]
pub(crate) fn add_key128<W: Lane>(s: &mut [W; 4], k: &[u32; 3]) {
    s[1] = s[1] ^ W::splat(k[0]);
    s[2] = s[2] ^ W::splat(k[1]);
    s[3] = s[3] ^ W::splat(k[2]);
}

/// AddRoundKey of GIFT-64 in the standard frame (or any frame, given its keys).
#[inline(always)]
pub(crate) fn add_key64<W: Lane>(s: &mut [W; 4], k: &[u32; 3]) {
    s[0] = s[0] ^ W::splat(k[0]);
    s[1] = s[1] ^ W::splat(k[1]);
    s[3] = s[3] ^ W::splat(k[2]);
}

/// The 40 GIFT-128 rounds on packed slices, five at a time: S-box, the framed round key
/// and constant, then the slices' moves to the next frame.
/// (The x86 vector strategies; one block uses [`rounds128_alternating`].)
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn rounds128<W: Lane>(mut s: [W; 4], keys: &Keys128) -> [W; 4] {
    for k in keys.framed.chunks_exact(5) {
        s = sbox(s);
        add_key128(&mut s, &k[0]);
        let [s0, s1, s2, s3] = s;
        s = [s0.rot_field(4, 3), s1.rot_field(4, 2), s2.rot_field(4, 1), s3];
        s = sbox(s);
        add_key128(&mut s, &k[1]);
        let [s0, s1, s2, s3] = s;
        s = [s0.rot_field(16, 12), s1.rot_field(16, 8), s2.rot_field(16, 4), s3];
        s = sbox(s);
        add_key128(&mut s, &k[2]);
        let [s0, s1, s2, s3] = s;
        s = [
            swapmove(s0, 0x0000_5555, 1),
            swapmove(s1, 0x5555_5555, 1).rotl(16),
            swapmove(s2, 0x5555_0000, 1),
            s3.rotl(16),
        ];
        s = sbox(s);
        add_key128(&mut s, &k[3]);
        let [s0, s1, s2, s3] = s;
        s = [s0.rot_field(8, 2), s1.rot_field(8, 4), s2.rot_field(8, 6), s3];
        s = sbox(s);
        add_key128(&mut s, &k[4]);
        let [s0, s1, s2, s3] = s;
        s = [s0.rotl(24), s1, s2.rotl(8), s3.rotl(16)];
    }
    s
}

/// [`rounds128`] for one block in general-purpose registers, without the S-box's NOT.
/// Even rounds leave slice 0 complemented (the S-box's final NOT dropped); odd rounds
/// take it complemented and, with `!x0` folded into AND-NOTs and the complements pushed
/// through the circuit, return every slice uncomplemented but slices 1 and 3 before
/// their key, whose complement is stored in [`Keys128::alternating`]. The slices' moves
/// are bit permutations, which commute with complementing. One operation fewer per round
/// (the NOT, on slice 0's path into the next round), and an AND-NOT with BMI1.
#[inline(always)]
pub(crate) fn rounds128_alternating(mut s: [u32; 4], keys: &Keys128) -> [u32; 4] {
    let (pairs, []) = keys.alternating.as_chunks::<10>() else {
        unreachable!("40 rounds are 4 pairs of 5-round groups")
    };
    for k in pairs {
        let (even, odd) = k.split_at(5);
        s = group128_alternating::<false>(s, even.try_into().expect("5 rounds"));
        s = group128_alternating::<true>(s, odd.try_into().expect("5 rounds"));
    }
    s
}

/// Five rounds of [`rounds128_alternating`], the first one odd (`ODD`) or even.
#[inline(always)]
fn group128_alternating<const ODD: bool>(mut s: [u32; 4], k: &[[u32; 3]; 5]) -> [u32; 4] {
    s = sbox_key128_alternating(s, &k[0], ODD);
    let [s0, s1, s2, s3] = s;
    s = [s0.rot_field(4, 3), s1.rot_field(4, 2), s2.rot_field(4, 1), s3];
    s = sbox_key128_alternating(s, &k[1], !ODD);
    let [s0, s1, s2, s3] = s;
    s = [s0.rot_field(16, 12), s1.rot_field(16, 8), s2.rot_field(16, 4), s3];
    s = sbox_key128_alternating(s, &k[2], ODD);
    let [s0, s1, s2, s3] = s;
    s = [
        swapmove(s0, 0x0000_5555, 1),
        swapmove(s1, 0x5555_5555, 1).rotl(16),
        swapmove(s2, 0x5555_0000, 1),
        s3.rotl(16),
    ];
    s = sbox_key128_alternating(s, &k[3], !ODD);
    let [s0, s1, s2, s3] = s;
    s = [s0.rot_field(8, 2), s1.rot_field(8, 4), s2.rot_field(8, 6), s3];
    s = sbox_key128_alternating(s, &k[4], ODD);
    let [s0, s1, s2, s3] = s;
    [s0.rotl(24), s1, s2.rotl(8), s3.rotl(16)]
}

/// [`sbox`] and [`add_key128`] of one round of [`rounds128_alternating`]. Even rounds
/// take `x0` and return `!S0`; odd rounds take `!x0` (in `x0`) and return `S0`, their
/// circuit computing `!S1` and `!S3`, to which the stored keys `!k1`, `!k3` are added.
/// (Checked exhaustively by the tests.)
#[inline(always)]
fn sbox_key128_alternating([x0, x1, x2, x3]: [u32; 4], k: &[u32; 3], odd: bool) -> [u32; 4] {
    let [k1, k2, k3] = *k;
    if odd {
        // x0 here is the complement of the specification's x0.
        let a1 = x1 ^ (!x0 & x2);
        let a0c = x0 ^ (a1 & x3); // !a0
        let a2c = x2 ^ (!x1 & x0); // !a2
        let y0 = x3 ^ a2c; // !a3
        let b1c = a1 ^ y0; // !b1
        let b2 = a2c ^ (a0c | b1c);
        [y0, b1c ^ k1, b2 ^ k2, a0c ^ k3]
    } else {
        let a1 = x1 ^ (x0 & x2);
        let a0 = x0 ^ (a1 & x3);
        let a2 = x2 ^ (x0 | x1);
        let a3 = x3 ^ a2;
        let b1 = a1 ^ a3;
        let b2 = a2 ^ (a0 & b1);
        [a3, b1 ^ k1, b2 ^ k2, a0 ^ k3]
    }
}

/// The 28 GIFT-64 rounds on packed slices, four at a time (slice 0 never moves).
#[inline(always)]
pub(crate) fn rounds64<W: Lane>(mut s: [W; 4], keys: &Keys64) -> [W; 4] {
    for k in keys.framed.chunks_exact(4) {
        s = sbox(s);
        add_key64(&mut s, &k[0]);
        let [s0, s1, s2, s3] = s;
        s = [s0, s1.rot_field(4, 3), s2.rot_field(4, 2), s3.rot_field(4, 1)];
        s = sbox(s);
        add_key64(&mut s, &k[1]);
        let [s0, s1, s2, s3] = s;
        s = [s0, s1.rotl(12), s2.rotl(8), s3.rotl(4)];
        s = sbox(s);
        add_key64(&mut s, &k[2]);
        let [s0, s1, s2, s3] = s;
        s = [s0, s1.rot_field(4, 1), s2.rot_field(4, 2), s3.rot_field(4, 3)];
        s = sbox(s);
        add_key64(&mut s, &k[3]);
        let [s0, s1, s2, s3] = s;
        s = [s0, s1.rotl(4), s2.rotl(8), s3.rotl(12)];
    }
    s
}

/// A [`Lane`] word that can be moved to and from memory: raw (the internal state, native
/// lanes) or gathered from blocks.
pub(crate) trait Vector: Lane {
    /// Size in bytes.
    const BYTES: usize;
    fn from_bytes(b: &[u8]) -> Self;
    fn to_bytes(self, b: &mut [u8]);
    /// The big-endian `BITS`-bit words of `BYTES / (BITS / 8)` blocks (in the cipher's
    /// byte order), word `k` of every block into vector `k`, one block per lane (in an
    /// order of the implementation's choosing, undone by [`Vector::store_words`]).
    fn load_words(blocks: &[u8]) -> [Self; 4];
    /// Inverse of [`Vector::load_words`].
    fn store_words(w: [Self; 4], blocks: &mut [u8]);
}

impl Vector for u32 {
    const BYTES: usize = 4;
    #[inline(always)]
    fn from_bytes(b: &[u8]) -> Self {
        u32::from_ne_bytes(b[..4].try_into().unwrap())
    }
    #[inline(always)]
    fn to_bytes(self, b: &mut [u8]) {
        b[..4].copy_from_slice(&self.to_ne_bytes());
    }
    #[inline(always)]
    fn load_words(block: &[u8]) -> [Self; 4] {
        let w = |k: usize| u32::from_be_bytes(block[4 * k..4 * k + 4].try_into().unwrap());
        [w(0), w(1), w(2), w(3)]
    }
    #[inline(always)]
    fn store_words(w: [Self; 4], block: &mut [u8]) {
        for (k, w) in w.iter().enumerate() {
            block[4 * k..4 * k + 4].copy_from_slice(&w.to_be_bytes());
        }
    }
}

impl Vector for u16 {
    const BYTES: usize = 2;
    #[inline(always)]
    fn from_bytes(b: &[u8]) -> Self {
        u16::from_ne_bytes(b[..2].try_into().unwrap())
    }
    #[inline(always)]
    fn to_bytes(self, b: &mut [u8]) {
        b[..2].copy_from_slice(&self.to_ne_bytes());
    }
    #[inline(always)]
    fn load_words(block: &[u8]) -> [Self; 4] {
        let w = |k: usize| u16::from_be_bytes([block[2 * k], block[2 * k + 1]]);
        [w(0), w(1), w(2), w(3)]
    }
    #[inline(always)]
    fn store_words(w: [Self; 4], block: &mut [u8]) {
        for (k, w) in w.iter().enumerate() {
            block[2 * k..2 * k + 2].copy_from_slice(&w.to_be_bytes());
        }
    }
}

/// Two words side by side (twice the blocks, independent instruction streams), for the
/// x86 vector strategies.
#[cfg(target_arch = "x86_64")]
mod pair {
    use super::{Lane, Vector};
    use std::ops::{BitAnd, BitOr, BitXor, Not};

    /// Two words side by side.
    #[derive(Clone, Copy)]
    pub(crate) struct Pair<W>(W, W);

    impl<W: Lane> BitXor for Pair<W> {
        type Output = Self;
        #[inline(always)]
        fn bitxor(self, o: Self) -> Self {
            Pair(self.0 ^ o.0, self.1 ^ o.1)
        }
    }

    impl<W: Lane> BitAnd for Pair<W> {
        type Output = Self;
        #[inline(always)]
        fn bitand(self, o: Self) -> Self {
            Pair(self.0 & o.0, self.1 & o.1)
        }
    }

    impl<W: Lane> BitOr for Pair<W> {
        type Output = Self;
        #[inline(always)]
        fn bitor(self, o: Self) -> Self {
            Pair(self.0 | o.0, self.1 | o.1)
        }
    }

    impl<W: Lane> Not for Pair<W> {
        type Output = Self;
        #[inline(always)]
        fn not(self) -> Self {
            Pair(!self.0, !self.1)
        }
    }

    impl<W: Lane> Lane for Pair<W> {
        const BITS: u32 = W::BITS;
        #[inline(always)]
        fn splat(x: u32) -> Self {
            Pair(W::splat(x), W::splat(x))
        }
        #[inline(always)]
        fn shl(self, n: u32) -> Self {
            Pair(self.0.shl(n), self.1.shl(n))
        }
        #[inline(always)]
        fn shr(self, n: u32) -> Self {
            Pair(self.0.shr(n), self.1.shr(n))
        }
        #[inline(always)]
        fn rotl(self, n: u32) -> Self {
            Pair(self.0.rotl(n), self.1.rotl(n))
        }
        #[inline(always)]
        fn rot_field(self, w: u32, k: u32) -> Self {
            Pair(self.0.rot_field(w, k), self.1.rot_field(w, k))
        }
    }

    impl<W: Vector> Vector for Pair<W> {
        const BYTES: usize = 2 * W::BYTES;
        #[inline(always)]
        fn from_bytes(b: &[u8]) -> Self {
            Pair(W::from_bytes(b), W::from_bytes(&b[W::BYTES..]))
        }
        #[inline(always)]
        fn to_bytes(self, b: &mut [u8]) {
            self.0.to_bytes(b);
            self.1.to_bytes(&mut b[W::BYTES..]);
        }
        #[inline(always)]
        fn load_words(blocks: &[u8]) -> [Self; 4] {
            let [a0, a1, a2, a3] = W::load_words(blocks);
            let [b0, b1, b2, b3] = W::load_words(&blocks[4 * W::BYTES..]);
            [Pair(a0, b0), Pair(a1, b1), Pair(a2, b2), Pair(a3, b3)]
        }
        #[inline(always)]
        fn store_words(w: [Self; 4], blocks: &mut [u8]) {
            let [Pair(a0, b0), Pair(a1, b1), Pair(a2, b2), Pair(a3, b3)] = w;
            W::store_words([a0, a1, a2, a3], blocks);
            W::store_words([b0, b1, b2, b3], &mut blocks[4 * W::BYTES..]);
        }
    }
}
#[cfg(target_arch = "x86_64")]
pub(crate) use pair::Pair;

// The generic memory helpers avoid closures: a closure would lose the caller's target
// features and not be inlined.

/// Four words from consecutive bytes.
#[inline(always)]
fn load4<W: Vector>(b: &[u8]) -> [W; 4] {
    [
        W::from_bytes(b),
        W::from_bytes(&b[W::BYTES..]),
        W::from_bytes(&b[2 * W::BYTES..]),
        W::from_bytes(&b[3 * W::BYTES..]),
    ]
}

#[inline(always)]
fn store4<W: Vector>(w: [W; 4], b: &mut [u8]) {
    for (k, w) in w.into_iter().enumerate() {
        w.to_bytes(&mut b[k * W::BYTES..]);
    }
}

/// Encrypts `BYTES / 4` blocks (in their byte order) in place: gather, pack, 40 rounds,
/// unpack, scatter; GIFTb-128 words are already the slices. (For the vector kernels.)
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn encrypt128<W: Vector>(blocks: &mut [u8], keys: &Keys128, giftb: bool) {
    let w = W::load_words(blocks);
    let s = if giftb {
        rounds128(w, keys)
    } else {
        unpack(rounds128(pack(w), keys))
    };
    W::store_words(s, blocks);
}

/// One GIFT-128 block (in its byte order) in general-purpose registers, packed with
/// [`pack128`] unless it is a GIFTb-128 block.
///
/// On x86-64 with BMI2 (checked at run time, cached by the standard library), packing
/// is [`pack128_bmi2`] and the whole block is compiled with BMI1/BMI2 (ANDN, RORX).
pub(crate) fn encrypt128_block(block: &mut [u8], keys: &Keys128, giftb: bool) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("bmi1") && is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has BMI1 and BMI2, checked just above.
        unsafe { encrypt128_block_bmi2(block, keys, giftb) };
        return;
    }
    let w = u32::load_words(block);
    let s = if giftb {
        rounds128_alternating(w, keys)
    } else {
        unpack128(rounds128_alternating(pack128(w), keys))
    };
    u32::store_words(s, block);
}

/// [`encrypt128_block`] with BMI1/BMI2: [`pack128_bmi2`], [`unpack128_bmi2`].
///
/// # Safety
/// The CPU must have BMI1 and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2")]
unsafe fn encrypt128_block_bmi2(block: &mut [u8], keys: &Keys128, giftb: bool) {
    let block: &mut [u8; 16] = (&mut block[..16]).try_into().expect("16-byte block");
    if giftb {
        let w = u32::load_words(block);
        u32::store_words(rounds128_alternating(w, keys), block);
    } else {
        let (hi, lo) = block.split_at_mut(8);
        let hi_lo = [
            u64::from_be_bytes((&*hi).try_into().expect("8 bytes")),
            u64::from_be_bytes((&*lo).try_into().expect("8 bytes")),
        ];
        // SAFETY: the caller guarantees BMI2.
        let s = unsafe { pack128_bmi2(hi_lo) };
        // SAFETY: as above.
        let [h, l] = unsafe { unpack128_bmi2(rounds128_alternating(s, keys)) };
        hi.copy_from_slice(&h.to_be_bytes());
        lo.copy_from_slice(&l.to_be_bytes());
    }
}

/// Nibble bit 0 of every nibble of a 64-bit word.
#[cfg(target_arch = "x86_64")]
const NIBBLE_BIT0: u64 = 0x1111_1111_1111_1111;

/// [`pack128`] with PEXT, from the block as two big-endian 64-bit halves `[hi, lo]`:
/// slice `j` gathers bit `j` of every nibble, nibbles 0-15 (of `lo`) in its low half.
///
/// # Safety
/// The CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline]
unsafe fn pack128_bmi2([hi, lo]: [u64; 2]) -> [u32; 4] {
    use std::arch::x86_64::_pext_u64;
    let mut s = [0u32; 4];
    for (j, s) in s.iter_mut().enumerate() {
        let m = NIBBLE_BIT0 << j;
        // PEXT/PDEP time does not depend on the data (on AMD before Zen 3, microcoded,
        // it depends on the mask, a constant here, and is slow).
        *s = (_pext_u64(lo, m) | _pext_u64(hi, m) << 16) as u32;
    }
    s
}

/// Inverse of [`pack128_bmi2`], with PDEP.
///
/// # Safety
/// The CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline]
unsafe fn unpack128_bmi2(s: [u32; 4]) -> [u64; 2] {
    use std::arch::x86_64::_pdep_u64;
    let (mut hi, mut lo) = (0, 0);
    for (j, &s) in s.iter().enumerate() {
        let m = NIBBLE_BIT0 << j;
        lo |= _pdep_u64(u64::from(s & 0xffff), m);
        hi |= _pdep_u64(u64::from(s >> 16), m);
    }
    [hi, lo]
}

/// As [`encrypt128`], for GIFT-64 (28 rounds, 16-bit lanes, `BYTES / 2` blocks); with
/// `u16`, one block in general-purpose registers.
#[inline(always)]
pub(crate) fn encrypt64<W: Vector>(blocks: &mut [u8], keys: &Keys64) {
    let s = rounds64(pack(W::load_words(blocks)), keys);
    W::store_words(unpack(s), blocks);
}

/// Blocks to the internal state: the packed slices (GIFTb-128 words as they are).
#[inline(always)]
pub(crate) fn load_state<W: Vector>(blocks: &[u8], state: &mut [u8], giftb: bool) {
    let w = W::load_words(blocks);
    store4(if giftb { w } else { pack(w) }, state);
}

/// Inverse of [`load_state`].
#[inline(always)]
pub(crate) fn store_state<W: Vector>(state: &[u8], blocks: &mut [u8], giftb: bool) {
    let s = load4::<W>(state);
    W::store_words(if giftb { s } else { unpack(s) }, blocks);
}

/// One inner function on packed slices; `k` is the plain round key (see [`Keys128`]).
#[inline(always)]
pub(crate) fn call_bytes<W: Vector>(f: crate::Func, state: &mut [u8], k: &[u32; 3], gift64: bool) {
    let mut s = load4::<W>(state);
    match (f, gift64) {
        (crate::Func::SubCells, _) => s = sbox(s),
        (_, false) => add_key128(&mut s, k),
        (_, true) => add_key64(&mut s, k),
    }
    store4(s, state);
}

/// The target-feature kernels of one vector type: the generic functions above
/// instantiated inside `#[target_feature]` functions (or plain ones for scalars). All take
/// blocks in the cipher's byte order, a whole batch.
pub(crate) trait Kernel: Send + Sync + 'static {
    /// Blocks per GIFT-128 batch (32-bit lanes of the GIFT-128 word type).
    const BATCH_128: usize;
    /// Blocks per GIFT-64 batch (16-bit lanes of the GIFT-64 word type).
    const BATCH_64: usize;
    /// `giftb`: the blocks are GIFTb-128 blocks, whose words are already the slices.
    ///
    /// # Safety
    /// The CPU must have the kernel's features.
    unsafe fn encrypt128(blocks: &mut [u8], keys: &Keys128, giftb: bool);
    /// # Safety
    /// As [`Kernel::encrypt128`].
    unsafe fn encrypt64(blocks: &mut [u8], keys: &Keys64);
    /// [`load_state`] of GIFT-64 (`gift64`) or GIFT-128 blocks.
    ///
    /// # Safety
    /// As [`Kernel::encrypt128`].
    unsafe fn load(blocks: &[u8], state: &mut [u8], gift64: bool, giftb: bool);
    /// [`store_state`] of GIFT-64 (`gift64`) or GIFT-128 blocks.
    ///
    /// # Safety
    /// As [`Kernel::encrypt128`].
    unsafe fn store(state: &[u8], blocks: &mut [u8], gift64: bool, giftb: bool);
    /// # Safety
    /// As [`Kernel::encrypt128`].
    unsafe fn call(f: crate::Func, state: &mut [u8], k: &[u32; 3], gift64: bool);
}

const SLICED_FUNCS: &[crate::Func] = &[crate::Func::SubCells, crate::Func::AddRoundKey];

/// Fixsliced GIFT-128 on `K::BATCH_128` blocks, one per 32-bit lane. The internal state
/// is the four slices (each one vector, one block per lane) in the standard frame. With
/// `GIFTB`, blocks are in the GIFTb-128 convention, whose four words are the slices: no
/// packing at all.
pub(crate) struct Sliced128<K, const GIFTB: bool> {
    keys: Keys128,
    kernel: std::marker::PhantomData<K>,
}

impl<K: Kernel, const GIFTB: bool> super::Core for Sliced128<K, GIFTB> {
    const BLOCK: usize = 16;
    const NATIVE_GIFTB: bool = GIFTB;
    const BATCH: usize = K::BATCH_128;
    const FUNCS: &'static [crate::Func] = SLICED_FUNCS;
    const STATE_BYTES: usize = 16 * K::BATCH_128;

    fn new(key: &[u8]) -> Self {
        Sliced128 {
            keys: Keys128::new(key),
            kernel: std::marker::PhantomData,
        }
    }

    fn rekey(&mut self, key: &[u8]) {
        self.keys.rekey(key);
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        // SAFETY: a Sliced128<K> is only built by Strat::schedule, after available()
        // checked the kernel's features.
        unsafe { K::encrypt128(blocks, &self.keys, GIFTB) };
    }

    /// The scalar fixsliced code, which uses the same round keys.
    fn encrypt_one(&self, block: &mut [u8]) {
        encrypt128_block(block, &self.keys, GIFTB);
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::load(blocks, state, false, GIFTB) };
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::store(state, blocks, false, GIFTB) };
    }

    fn call(&self, f: crate::Func, state: &mut [u8], round: usize) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::call(f, state, &self.keys.plain[round], false) };
    }
}

/// Fixsliced GIFT-64 on `K::BATCH_64` blocks, one per 16-bit lane; state as in
/// [`Sliced128`].
pub(crate) struct Sliced64<K> {
    keys: Keys64,
    kernel: std::marker::PhantomData<K>,
}

impl<K: Kernel> super::Core for Sliced64<K> {
    const BLOCK: usize = 8;
    const BATCH: usize = K::BATCH_64;
    const FUNCS: &'static [crate::Func] = SLICED_FUNCS;
    const STATE_BYTES: usize = 8 * K::BATCH_64;

    fn new(key: &[u8]) -> Self {
        Sliced64 {
            keys: Keys64::new(key),
            kernel: std::marker::PhantomData,
        }
    }

    fn rekey(&mut self, key: &[u8]) {
        self.keys.rekey(key);
    }

    fn encrypt_batch(&self, blocks: &mut [u8]) {
        // SAFETY: a Sliced64<K> is only built by Strat::schedule, after available()
        // checked the kernel's features.
        unsafe { K::encrypt64(blocks, &self.keys) };
    }

    /// The scalar fixsliced code, which uses the same round keys.
    fn encrypt_one(&self, block: &mut [u8]) {
        encrypt64::<u16>(block, &self.keys);
    }

    fn load(&self, blocks: &[u8], state: &mut [u8]) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::load(blocks, state, true, false) };
    }

    fn store(&self, state: &[u8], blocks: &mut [u8]) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::store(state, blocks, true, false) };
    }

    fn call(&self, f: crate::Func, state: &mut [u8], round: usize) {
        // SAFETY: as in encrypt_batch.
        unsafe { K::call(f, state, &self.keys.plain[round], true) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gift::SBOX;

    /// The reorganised S-box circuit is the S-box, on all 16 inputs at once (input `x` in
    /// bit `x` of the slices).
    #[test]
    fn sbox_circuit() {
        let slice = |j: u32| (0..16u32).fold(0u32, |acc, x| acc | ((x >> j) & 1) << x);
        let out = sbox([slice(0), slice(1), slice(2), slice(3)]);
        for (x, &s) in SBOX.iter().enumerate() {
            let y = (0..4).fold(0u8, |acc, j| acc | (((out[j] >> x) & 1) as u8) << j);
            assert_eq!(y, s, "S({x})");
        }
    }

    /// The BMI2 packing is [`pack128`], and its inverse.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn pack_bmi2() {
        if !is_x86_feature_detected!("bmi2") {
            cryptoscope_testkit::skip("this CPU has no BMI2");
            return;
        }
        let mut x = 0x0123_4567_89ab_cdef_u64;
        for _ in 0..1000 {
            // A 64-bit LCG for varied words.
            let mut next = || {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                x
            };
            let (hi, lo) = (next(), next());
            let w = [(hi >> 32) as u32, hi as u32, (lo >> 32) as u32, lo as u32];
            // SAFETY: BMI2 checked above.
            let s = unsafe { pack128_bmi2([hi, lo]) };
            assert_eq!(s, pack128(w));
            // SAFETY: as above.
            assert_eq!(unsafe { unpack128_bmi2(s) }, [hi, lo]);
        }
    }

    /// The alternating S-boxes: an even round then an odd one (slice 0 complemented in
    /// between) is two rounds of the S-box and key, on all 16 inputs, and each alone
    /// is the S-box and key up to the documented complements.
    #[test]
    fn sbox_alternating_circuit() {
        let slice = |j: u32| (0..16u32).fold(0u32, |acc, x| acc | ((x >> j) & 1) << x);
        let x = [slice(0), slice(1), slice(2), slice(3)];
        for k in [[0, 0, 0], [0x1234_5678, 0x9abc_def0, 0x0f0f_3c3c], [!0, !0, !0]] {
            let mut want = sbox(x);
            add_key128(&mut want, &k);
            let [y0, y1, y2, y3] = sbox_key128_alternating(x, &k, false);
            assert_eq!([!y0, y1, y2, y3], want);
            let [z0, z1, z2, z3] = sbox_key128_alternating([!x[0], x[1], x[2], x[3]], &[!k[0], k[1], !k[2]], true);
            assert_eq!([z0, z1, z2, z3], want);
        }
    }

    /// Packing is a bijection that [`pack128`] and the generic [`pack`] agree on.
    #[test]
    fn pack_round_trip() {
        let w = [0x0123_4567, 0x89ab_cdef, 0xfedc_ba98, 0x7654_3210u32];
        assert_eq!(pack128(w), pack(w));
        assert_eq!(unpack128(pack128(w)), w);
        let w16 = [0x0123, 0x4567, 0x89ab, 0xcdefu16];
        assert_eq!(unpack(pack(w16)), w16);
    }
}
