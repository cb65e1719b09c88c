//! Camellia's S-boxes as GF(2^8) inversion (the AES field, polynomial 0x11b) between
//! affine maps over GF(2), for the table-free byte-sliced strategies.
//!
//! Both S-boxes are inversion in GF(2^8) up to affine maps (Camellia computes it in the
//! composite field GF((2^4)^2), isomorphic to the AES field). Solving offline for linear
//! `A`, `B` with `SBOX1(x) = B·inv(A·(x ⊕ 0xc5)) ⊕ 0x6e` (0xc5 and 0x6e are the input and
//! output constants of Camellia's S-box design; the solution was found by fixing `A·1 = 1`
//! and searching the images of the other basis vectors while checking that the induced `B`
//! stays linear) gave [`CAM_IN`] and [`CAM_OUT`]. The strategies' results against
//! RFC 3713's vectors check them. SBOX2..SBOX4 are rotations of SBOX1 on its output or
//! input, so they only change the affine maps. With the AES instructions, AESENCLAST's
//! SubBytes is `M·inv(u) ⊕ 0x63`, undone afterwards by [`AES_UNDO`]; AESDECLAST's
//! InvSubBytes is `inv(M⁻¹·(u ⊕ 0x63))`, prepared for beforehand by [`AES_FWD`].

/// An affine map on bytes over GF(2): `x ↦ M·x ⊕ c`, where `M·(1 << i) = cols[i]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Affine {
    cols: [u8; 8],
    c: u8,
}

impl Affine {
    /// `M·x`, without the constant.
    const fn linear(&self, x: u8) -> u8 {
        let mut y = 0;
        let mut i = 0;
        while i < 8 {
            if x >> i & 1 == 1 {
                y ^= self.cols[i];
            }
            i += 1;
        }
        y
    }

    /// `M·x ⊕ c`.
    const fn apply(&self, x: u8) -> u8 {
        self.linear(x) ^ self.c
    }

    /// `outer ∘ self`.
    const fn then(self, outer: Affine) -> Affine {
        let mut cols = [0; 8];
        let mut i = 0;
        while i < 8 {
            cols[i] = outer.linear(self.cols[i]);
            i += 1;
        }
        Affine {
            cols,
            c: outer.apply(self.c),
        }
    }

    /// Rotation left by `n` bits.
    const fn rotl(n: u32) -> Affine {
        let mut cols = [0; 8];
        let mut i = 0;
        while i < 8 {
            cols[i] = (1u8 << i).rotate_left(n);
            i += 1;
        }
        Affine { cols, c: 0 }
    }

    /// The map as two 16-entry tables for byte shuffles: `apply(x) = lo[x & 15] ^ hi[x >> 4]`.
    pub(super) const fn nibble_tables(&self) -> [[u8; 16]; 2] {
        let mut t = [[0; 16]; 2];
        let mut n = 0;
        while n < 16 {
            t[0][n] = self.apply(n as u8);
            t[1][n] = self.linear((n as u8) << 4);
            n += 1;
        }
        t
    }

    /// The matrix in GF2P8AFFINEQB's layout: byte `7 - i` of the qword is row `i` (the
    /// input bits that make output bit `i`).
    pub(super) const fn gfni_matrix(&self) -> i64 {
        let mut m = 0u64;
        let mut i = 0;
        while i < 8 {
            let mut row = 0u8;
            let mut j = 0;
            while j < 8 {
                row |= (self.cols[j] >> i & 1) << j;
                j += 1;
            }
            m |= (row as u64) << (8 * (7 - i));
            i += 1;
        }
        m as i64
    }

    /// The constant, as GF2P8AFFINEQB's immediate.
    pub(super) const fn constant(&self) -> i32 {
        self.c as i32
    }
}

/// `x ↦ A·(x ⊕ 0xc5) = A·x ⊕ 0x08`: into the AES field.
const CAM_IN: Affine = Affine {
    cols: [0x01, 0x19, 0xb1, 0xab, 0xa7, 0x93, 0x61, 0xd9],
    c: 0x08,
};

/// `z ↦ B·z ⊕ 0x6e`: from an inverse in the AES field to SBOX1's output.
const CAM_OUT: Affine = Affine {
    cols: [0xf1, 0xbb, 0x8e, 0x09, 0xfa, 0xd7, 0x21, 0xe1],
    c: 0x6e,
};

/// `u ↦ M⁻¹·u ⊕ 0x05`, turning SubBytes' output `M·inv(x) ⊕ 0x63` back into `inv(x)`
/// (`M⁻¹·u = (u <<< 1) ⊕ (u <<< 3) ⊕ (u <<< 6)`, AES's inverse affine map).
const AES_UNDO: Affine = {
    let mut cols = [0; 8];
    let mut i = 0;
    while i < 8 {
        let e = 1u8 << i;
        cols[i] = e.rotate_left(1) ^ e.rotate_left(3) ^ e.rotate_left(6);
        i += 1;
    }
    Affine { cols, c: 0x05 }
};

/// `u ↦ M·u ⊕ 0x63`, AES's affine map (`M·u = u ⊕ (u <<< 1) ⊕ ... ⊕ (u <<< 4)`).
const AES_FWD: Affine = {
    let mut cols = [0; 8];
    let mut i = 0;
    while i < 8 {
        let e = 1u8 << i;
        cols[i] = e ^ e.rotate_left(1) ^ e.rotate_left(2) ^ e.rotate_left(3) ^ e.rotate_left(4);
        i += 1;
    }
    Affine { cols, c: 0x63 }
};

/// Input maps of SBOX1..SBOX4 (index 0..3) into the AES field (SBOX4 rotates its input).
pub(super) const PRE: [Affine; 4] = [CAM_IN, CAM_IN, CAM_IN, Affine::rotl(1).then(CAM_IN)];

/// Output maps of SBOX1..SBOX4 from an inverse (SBOX2, SBOX3 rotate their output).
pub(super) const POST_INV: [Affine; 4] = [
    CAM_OUT,
    CAM_OUT.then(Affine::rotl(1)),
    CAM_OUT.then(Affine::rotl(7)),
    CAM_OUT,
];

/// Output maps of SBOX1..SBOX4 from AES SubBytes' output (after AESENCLAST).
pub(super) const POST_ENC: [Affine; 4] = [
    AES_UNDO.then(POST_INV[0]),
    AES_UNDO.then(POST_INV[1]),
    AES_UNDO.then(POST_INV[2]),
    AES_UNDO.then(POST_INV[3]),
];

/// Input maps of SBOX1..SBOX4 into InvSubBytes (before AESDECLAST).
pub(super) const PRE_DEC: [Affine; 4] = [
    PRE[0].then(AES_FWD),
    PRE[1].then(AES_FWD),
    PRE[2].then(AES_FWD),
    PRE[3].then(AES_FWD),
];
