//! Camellia-128 and Camellia-256 (RFC 3713), one file per implementation strategy:
//!
//! - `naive`: the RFC transcribed (S-boxes as byte tables, F, FL, key schedule);
//! - `table`: the S- and P-functions merged into eight 256-entry `u64` tables;
//! - `aesni_avx` / `vaes_avx2` / `gfni_avx512` (x86-64 only): 16, 32 or 64 blocks
//!   byte-sliced, the S-boxes computed without tables through the AES instructions (or
//!   GFNI) and affine maps (`affine`).
//!
//! Conventions shared by all strategies (what [`crate::Keyed::call`] exposes):
//! - the block is `D1 || D2`, two big-endian 64-bit halves;
//! - [`crate::Func::Feistel`] with `round = r` (0-based) is RFC round `r + 1` with subkey
//!   `k(r+1)`: for even `r`, `D2 ^= F(D1, k(r+1))`; for odd `r`, `D1 ^= F(D2, k(r+1))`;
//! - [`crate::Func::Fl`] with `round = l` is the `l`-th FL layer (0-based):
//!   `D1 = FL(D1, ke(2l+1))`, `D2 = FL⁻¹(D2, ke(2l+2))`;
//! - an encryption is: `D1 ^= kw1`, `D2 ^= kw2` (not exposed), the Feistel rounds with an
//!   FL layer after every sixth round but the last, then `C = (D2 ^ kw3) || (D1 ^ kw4)`
//!   (not exposed). Since `kw1 || kw2` is the key's first 16 bytes, the pre-whitening is
//!   known to a caller, which lets tests compose whole encryptions from inner functions.

use crate::{Func, Info, Strategy};

#[cfg(target_arch = "x86_64")]
mod aesni_avx;
#[cfg(target_arch = "x86_64")]
mod affine;
#[cfg(target_arch = "x86_64")]
mod bytesliced;
#[cfg(target_arch = "x86_64")]
mod gfni_avx512;
mod naive;
mod table;
#[cfg(target_arch = "x86_64")]
mod vaes_avx2;

/// The two key sizes implemented (Camellia-192 is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    /// 16-byte key, 18 rounds, 2 FL layers.
    K128,
    /// 32-byte key, 24 rounds, 3 FL layers.
    K256,
}

impl Size {
    pub(crate) const ALL: [Size; 2] = [Size::K128, Size::K256];

    pub(crate) fn cipher(self) -> &'static str {
        match self {
            Size::K128 => "Camellia-128",
            Size::K256 => "Camellia-256",
        }
    }

    pub(crate) fn key_bytes(self) -> usize {
        match self {
            Size::K128 => 16,
            Size::K256 => 32,
        }
    }

    pub(crate) fn rounds(self) -> usize {
        match self {
            Size::K128 => 18,
            Size::K256 => 24,
        }
    }

    /// Number of FL/FL⁻¹ layers (one after every sixth round but the last).
    pub(crate) fn fl_layers(self) -> usize {
        self.rounds() / 6 - 1
    }

    /// Checks that `func` with `round` is an inner function Camellia has at this size.
    fn check_call(self, func: Func, round: usize) {
        match func {
            Func::Feistel => assert!(round < self.rounds(), "{} has {} rounds", self.cipher(), self.rounds()),
            Func::Fl => assert!(
                round < self.fl_layers(),
                "{} has {} FL layers",
                self.cipher(),
                self.fl_layers()
            ),
            _ => panic!("Camellia has no {}", func.name()),
        }
    }

    /// Checks the key length (the contract panics on a wrong one).
    fn check_key(self, key: &[u8]) {
        assert_eq!(
            key.len(),
            self.key_bytes(),
            "{} takes a {}-byte key",
            self.cipher(),
            self.key_bytes()
        );
    }
}

/// The [`Info`] of one strategy of one size.
fn info(
    size: Size,
    strategy: &'static str,
    batch: usize,
    secret_indexing: bool,
    features: &'static [&'static str],
    about: &'static str,
) -> Info {
    Info {
        cipher: size.cipher(),
        strategy,
        block_bytes: 16,
        key_bytes: size.key_bytes(),
        batch,
        secret_indexing,
        features,
        about,
    }
}

/// The RFC's key-schedule constants Sigma1..Sigma6.
const SIGMA: [u64; 6] = [
    0xA09E_667F_3BCC_908B,
    0xB67A_E858_4CAA_73B2,
    0xC6EF_372F_E94F_82BE,
    0x54FF_53A5_F1D3_6F1C,
    0x10E5_27FA_DE68_2D1D,
    0xB056_88C2_B3E6_C1FD,
];

/// Expanded subkeys, numbered as in RFC 3713 but 0-based: `kw[0]` is kw1, `k[0]` is k1,
/// `ke[0]` is ke1. Camellia-128 uses `k[..18]` and `ke[..4]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Subkeys {
    pub kw: [u64; 4],
    pub k: [u64; 24],
    pub ke: [u64; 6],
}

/// The RFC 3713 key schedule (section 2.2), with the F-function `f(input, subkey)` of the
/// calling strategy (so a constant-time strategy keeps a constant-time key schedule).
pub(crate) fn key_schedule(size: Size, key: &[u8], f: impl Fn(u64, u64) -> u64, sk: &mut Subkeys) {
    size.check_key(key);
    let kl = u128::from_be_bytes(key[..16].try_into().expect("16 bytes"));
    let kr = match size {
        Size::K128 => 0,
        Size::K256 => u128::from_be_bytes(key[16..32].try_into().expect("16 bytes")),
    };
    let hi = |x: u128| (x >> 64) as u64;
    let lo = |x: u128| x as u64;
    let (mut d1, mut d2) = (hi(kl ^ kr), lo(kl ^ kr));
    d2 ^= f(d1, SIGMA[0]);
    d1 ^= f(d2, SIGMA[1]);
    d1 ^= hi(kl);
    d2 ^= lo(kl);
    d2 ^= f(d1, SIGMA[2]);
    d1 ^= f(d2, SIGMA[3]);
    let ka = (u128::from(d1) << 64) | u128::from(d2);
    // (K <<< n) split into its two 64-bit halves, as the RFC's subkey table does.
    let halves = |x: u128, n: u32| {
        let r = x.rotate_left(n);
        (hi(r), lo(r))
    };
    match size {
        Size::K128 => {
            (sk.kw[0], sk.kw[1]) = halves(kl, 0);
            (sk.k[0], sk.k[1]) = halves(ka, 0);
            (sk.k[2], sk.k[3]) = halves(kl, 15);
            (sk.k[4], sk.k[5]) = halves(ka, 15);
            (sk.ke[0], sk.ke[1]) = halves(ka, 30);
            (sk.k[6], sk.k[7]) = halves(kl, 45);
            sk.k[8] = halves(ka, 45).0;
            sk.k[9] = halves(kl, 60).1;
            (sk.k[10], sk.k[11]) = halves(ka, 60);
            (sk.ke[2], sk.ke[3]) = halves(kl, 77);
            (sk.k[12], sk.k[13]) = halves(kl, 94);
            (sk.k[14], sk.k[15]) = halves(ka, 94);
            (sk.k[16], sk.k[17]) = halves(kl, 111);
            (sk.kw[2], sk.kw[3]) = halves(ka, 111);
        }
        Size::K256 => {
            let (mut d1, mut d2) = (hi(ka ^ kr), lo(ka ^ kr));
            d2 ^= f(d1, SIGMA[4]);
            d1 ^= f(d2, SIGMA[5]);
            let kb = (u128::from(d1) << 64) | u128::from(d2);
            (sk.kw[0], sk.kw[1]) = halves(kl, 0);
            (sk.k[0], sk.k[1]) = halves(kb, 0);
            (sk.k[2], sk.k[3]) = halves(kr, 15);
            (sk.k[4], sk.k[5]) = halves(ka, 15);
            (sk.ke[0], sk.ke[1]) = halves(kr, 30);
            (sk.k[6], sk.k[7]) = halves(kb, 30);
            (sk.k[8], sk.k[9]) = halves(kl, 45);
            (sk.k[10], sk.k[11]) = halves(ka, 45);
            (sk.ke[2], sk.ke[3]) = halves(kl, 60);
            (sk.k[12], sk.k[13]) = halves(kr, 60);
            (sk.k[14], sk.k[15]) = halves(kb, 60);
            (sk.k[16], sk.k[17]) = halves(kl, 77);
            (sk.ke[4], sk.ke[5]) = halves(ka, 77);
            (sk.k[18], sk.k[19]) = halves(kr, 94);
            (sk.k[20], sk.k[21]) = halves(ka, 94);
            (sk.k[22], sk.k[23]) = halves(kl, 111);
            (sk.kw[2], sk.kw[3]) = halves(kb, 111);
        }
    }
}

/// RFC 3713's FL on a 64-bit half.
pub(crate) fn fl(x: u64, ke: u64) -> u64 {
    let (mut x1, mut x2) = ((x >> 32) as u32, x as u32);
    let (k1, k2) = ((ke >> 32) as u32, ke as u32);
    x2 ^= (x1 & k1).rotate_left(1);
    x1 ^= x2 | k2;
    (u64::from(x1) << 32) | u64::from(x2)
}

/// RFC 3713's FL⁻¹ on a 64-bit half.
pub(crate) fn fl_inv(y: u64, ke: u64) -> u64 {
    let (mut y1, mut y2) = ((y >> 32) as u32, y as u32);
    let (k1, k2) = ((ke >> 32) as u32, ke as u32);
    y1 ^= y2 | k2;
    y2 ^= (y1 & k1).rotate_left(1);
    (u64::from(y1) << 32) | u64::from(y2)
}

/// Every Camellia strategy, available on this CPU or not.
pub fn strategies() -> Vec<Box<dyn Strategy>> {
    let mut v: Vec<Box<dyn Strategy>> = Vec::new();
    for size in Size::ALL {
        v.push(Box::new(naive::Naive::new(size)));
        v.push(Box::new(table::Table::new(size)));
        #[cfg(target_arch = "x86_64")]
        {
            v.push(Box::new(aesni_avx::Strat::new(size)));
            v.push(Box::new(vaes_avx2::Strat::new(size)));
            v.push(Box::new(gfni_avx512::Strat::new(size)));
        }
    }
    v
}
