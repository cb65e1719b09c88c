//! The AES round shared by the AES-based candidates (Grøstl, SHAvite-3, ECHO).
//!
//! The S-box is generated at compile time from its definition in FIPS-197 §5.1.1
//! (multiplicative inverse in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, then the affine map
//! with constant 0x63), and the round tables from the S-box and MixColumns.
//!
//! The AES state is held as four `u32` columns, normally little-endian: byte `r` of column `c`
//! (row `r`) is bits `8r..8r+8` of `state[c]`, i.e. the usual byte order of a 16-byte block
//! read with `u32::from_le_bytes`. [`round_nokey_be`] takes big-endian columns instead.

/// Multiplication by x in GF(2^8) with the AES polynomial.
pub(crate) const fn xtime(a: u8) -> u8 {
    (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 }
}

/// Multiplication in GF(2^8) with the AES polynomial.
pub(crate) const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    p
}

/// The AES S-box (built at compile time): inversion in GF(2^8) (0 maps to 0) followed by the affine map.
pub(crate) const fn sbox() -> [u8; 256] {
    let mut s = [0u8; 256];
    let mut x = 0usize;
    while x < 256 {
        // x^254 = x^-1 for x != 0 (and 0 for x = 0).
        let mut inv = 1u8;
        let mut e = 0;
        while e < 254 {
            inv = gmul(inv, x as u8);
            e += 1;
        }
        if x == 0 {
            inv = 0;
        }
        s[x] = inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63;
        x += 1;
    }
    s
}

/// The four AES round tables: `TE[k][x]` is the MixColumns image of `S[x]` standing in
/// row `k` of a column (row 0 table: `02·s, 01·s, 01·s, 03·s` in rows 0..3).
static TE: [[u32; 256]; 4] = TE_CONST;

const TE_CONST: [[u32; 256]; 4] = {
    let s = sbox();
    let mut t = [[0u32; 256]; 4];
    let mut x = 0;
    while x < 256 {
        let v = s[x];
        let w = (gmul(v, 2) as u32) | (v as u32) << 8 | (v as u32) << 16 | (gmul(v, 3) as u32) << 24;
        t[0][x] = w;
        t[1][x] = w.rotate_left(8);
        t[2][x] = w.rotate_left(16);
        t[3][x] = w.rotate_left(24);
        x += 1;
    }
    t
};

/// One AES round without the key addition: SubBytes, ShiftRows, MixColumns.
#[inline(always)]
pub(crate) fn round_nokey(x: [u32; 4]) -> [u32; 4] {
    let col = |c: usize| {
        TE[0][(x[c] & 0xff) as usize]
            ^ TE[1][((x[(c + 1) & 3] >> 8) & 0xff) as usize]
            ^ TE[2][((x[(c + 2) & 3] >> 16) & 0xff) as usize]
            ^ TE[3][(x[(c + 3) & 3] >> 24) as usize]
    };
    [col(0), col(1), col(2), col(3)]
}

/// `TE` with each entry byte-swapped: the tables for big-endian columns.
static TE_BE: [[u32; 256]; 4] = {
    let mut t = TE_CONST;
    let mut k = 0;
    while k < 4 {
        let mut x = 0;
        while x < 256 {
            t[k][x] = t[k][x].swap_bytes();
            x += 1;
        }
        k += 1;
    }
    t
};

/// [`round_nokey`] on big-endian columns (row 0 in the most significant byte of each
/// `u32`): the byte order SHAvite-3's round-2 reference code (and so its KATs) used.
#[inline(always)]
pub(crate) fn round_nokey_be(x: [u32; 4]) -> [u32; 4] {
    let col = |c: usize| {
        TE_BE[0][(x[c] >> 24) as usize]
            ^ TE_BE[1][((x[(c + 1) & 3] >> 16) & 0xff) as usize]
            ^ TE_BE[2][((x[(c + 2) & 3] >> 8) & 0xff) as usize]
            ^ TE_BE[3][(x[(c + 3) & 3] & 0xff) as usize]
    };
    [col(0), col(1), col(2), col(3)]
}

/// One full AES round: SubBytes, ShiftRows, MixColumns, AddRoundKey `k`.
#[inline(always)]
pub(crate) fn round(x: [u32; 4], k: [u32; 4]) -> [u32; 4] {
    let y = round_nokey(x);
    [y[0] ^ k[0], y[1] ^ k[1], y[2] ^ k[2], y[3] ^ k[3]]
}

/// Run-time CPU feature detection for the x86-64 fast paths, each answer computed once.
///
/// `is_x86_feature_detected!` already caches CPUID in std, but each query still costs a
/// few loads and branches; the hashes ask once per message, so we keep the combined answer.
#[cfg(target_arch = "x86_64")]
pub(crate) mod cpu {
    use std::sync::OnceLock;

    /// AES-NI with SSSE3 (`pshufb`): the 128-bit paths of ECHO, SHAvite-3 and Grøstl.
    pub(crate) fn has_aesni() -> bool {
        static ANSWER: OnceLock<bool> = OnceLock::new();
        *ANSWER.get_or_init(|| is_x86_feature_detected!("aes") && is_x86_feature_detected!("ssse3"))
    }

    /// AVX-512 F/BW with VAES and GFNI, and AES-NI with SSSE3 for its rare fallback to
    /// the 128-bit path: ECHO's four-words-per-register path.
    pub(crate) fn has_vaes512() -> bool {
        static ANSWER: OnceLock<bool> = OnceLock::new();
        *ANSWER.get_or_init(|| {
            has_aesni()
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("vaes")
                && is_x86_feature_detected!("gfni")
        })
    }

    /// AVX-512 F/BW/VBMI with GFNI: Grøstl's one-register-per-state path.
    pub(crate) fn has_avx512_gfni() -> bool {
        static ANSWER: OnceLock<bool> = OnceLock::new();
        *ANSWER.get_or_init(|| {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vbmi")
                && is_x86_feature_detected!("gfni")
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sbox_spot_values() {
        // FIPS-197 figure 7.
        let s = super::sbox();
        assert_eq!(s[0x00], 0x63);
        assert_eq!(s[0x53], 0xed);
        assert_eq!(s[0xff], 0x16);
    }

    #[test]
    fn fips197_round() {
        // FIPS-197 appendix B, round 1: start of round → after MixColumns.
        let h = |s: &str| -> [u32; 4] {
            let b: Vec<u8> = (0..16)
                .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            core::array::from_fn(|c| u32::from_le_bytes([b[4 * c], b[4 * c + 1], b[4 * c + 2], b[4 * c + 3]]))
        };
        let input = h("193de3bea0f4e22b9ac68d2ae9f84808");
        let mixed = h("046681e5e0cb199a48f8d37a2806264c");
        assert_eq!(super::round_nokey(input), mixed);
    }
}
