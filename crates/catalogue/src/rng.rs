//! The randomness every harness-randomised implementation draws from.
//!
//! Normally [`fill`] returns operating-system randomness (`getrandom`). For known-answer
//! tests the gate installs a deterministic KAT generator with [`install_kat`]; providers
//! route their C libraries' `randombytes` here (liboqs through
//! `OQS_randombytes_custom_algorithm`, PQClean through `PQCRYPTO_RUST_randombytes`), and
//! Rust implementations with seed-taking APIs draw their seeds here.
//!
//! The switch is process-global: the gate runs single-threaded, never while timing. Timing
//! always runs with OS randomness.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes256;
use sha3::digest::{ExtendableOutput, Update, XofReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::descriptor::KatPrngKind;

/// A deterministic generator used by KAT procedures.
pub trait KatPrng: Send {
    /// Fills `out` with the next bytes.
    fn fill(&mut self, out: &mut [u8]);
}

/// NIST's AES-256 CTR_DRBG without derivation function and without prediction resistance,
/// as in the `rng.c` shipped with the NIST PQC submission packages (SP 800-90A §10.2.1).
pub struct CtrDrbg {
    key: [u8; 32],
    v: [u8; 16],
    /// AES-256 keyed with `key` (the key schedule is expanded once per key, not per block).
    cipher: Aes256,
}

impl CtrDrbg {
    /// Instantiates from a 48-byte seed (entropy input; no personalisation string).
    pub fn new(seed: &[u8; 48]) -> CtrDrbg {
        let mut d = CtrDrbg {
            key: [0; 32],
            v: [0; 16],
            cipher: Aes256::new(&[0u8; 32].into()),
        };
        d.update(Some(seed));
        d
    }

    fn increment_v(&mut self) {
        for b in self.v.iter_mut().rev() {
            let (nb, carry) = b.overflowing_add(1);
            *b = nb;
            if !carry {
                break;
            }
        }
    }

    fn block(&self, input: &[u8; 16]) -> [u8; 16] {
        let mut blk = (*input).into();
        self.cipher.encrypt_block(&mut blk);
        blk.into()
    }

    /// CTR_DRBG_Update: three counter blocks, XORed with the provided data.
    fn update(&mut self, provided: Option<&[u8; 48]>) {
        let mut temp = [0u8; 48];
        for i in 0..3 {
            self.increment_v();
            let out = self.block(&self.v);
            temp[16 * i..16 * i + 16].copy_from_slice(&out);
        }
        if let Some(p) = provided {
            for (t, x) in temp.iter_mut().zip(p.iter()) {
                *t ^= x;
            }
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..]);
        self.cipher = Aes256::new(&self.key.into());
    }
}

impl KatPrng for CtrDrbg {
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(16) {
            self.increment_v();
            let blk = self.block(&self.v);
            chunk.copy_from_slice(&blk[..chunk.len()]);
        }
        self.update(None);
    }
}

/// HQC's KAT PRNG: SHAKE-256 absorbing the 48-byte seed and one domain byte, then squeezed
/// continuously across calls.
pub struct ShakePrng {
    reader: sha3::Shake256Reader,
}

impl ShakePrng {
    pub fn new(seed: &[u8; 48], domain: u8) -> ShakePrng {
        let mut h = sha3::Shake256::default();
        h.update(seed);
        h.update(&[domain]);
        ShakePrng {
            reader: h.finalize_xof(),
        }
    }
}

impl KatPrng for ShakePrng {
    fn fill(&mut self, out: &mut [u8]) {
        self.reader.read(out);
    }
}

/// A KAT generator of the given kind, seeded with 48 bytes.
pub fn kat_prng(kind: KatPrngKind, seed: &[u8; 48]) -> Box<dyn KatPrng> {
    match kind {
        KatPrngKind::AesCtrDrbg => Box::new(CtrDrbg::new(seed)),
        KatPrngKind::Shake256 { domain } => Box::new(ShakePrng::new(seed, domain)),
    }
}

static KAT_ACTIVE: AtomicBool = AtomicBool::new(false);
static KAT: Mutex<Option<Box<dyn KatPrng>>> = Mutex::new(None);

/// Fills `out` with randomness: the installed KAT generator's bytes, or the OS's.
///
/// Never panics across FFI: if the OS generator fails (it does not on Linux), the process
/// aborts rather than return predictable bytes.
pub fn fill(out: &mut [u8]) {
    if KAT_ACTIVE.load(Ordering::Acquire) {
        let mut g = KAT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(prng) = g.as_mut() {
            prng.fill(out);
            return;
        }
    }
    if getrandom::fill(out).is_err() {
        std::process::abort();
    }
}

/// While the guard lives, [`fill`] returns the KAT generator's bytes.
pub struct KatGuard(());

impl Drop for KatGuard {
    fn drop(&mut self) {
        KAT_ACTIVE.store(false, Ordering::Release);
        *KAT.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// Installs a KAT generator process-wide until the guard drops.
pub fn install_kat(prng: Box<dyn KatPrng>) -> KatGuard {
    *KAT.lock().unwrap_or_else(|p| p.into_inner()) = Some(prng);
    KAT_ACTIVE.store(true, Ordering::Release);
    KatGuard(())
}

/// Held by a unit test that draws harness randomness or installs a KAT generator: the
/// generator is process-wide, so such tests run one at a time.
#[cfg(test)]
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first `seed` line of every NIST PQC KAT file (`count = 0`), produced by the NIST
    /// DRBG seeded with bytes 0..47: a published value (e.g. any round-3 `PQCkemKAT_*.rsp`).
    const NIST_COUNT0_SEED: &str =
        "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7056A8C266F9EF97ED08541DBD2E1FFA1";

    #[test]
    fn ctr_drbg_reproduces_nist_kat_seed() {
        let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
        let mut d = CtrDrbg::new(&entropy);
        let mut seed = [0u8; 48];
        d.fill(&mut seed);
        assert_eq!(hex::encode_upper(seed), NIST_COUNT0_SEED);
    }

    #[test]
    fn kat_guard_switches_back_to_os() {
        let _serial = serial();
        let entropy = [7u8; 48];
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        {
            let _g = install_kat(Box::new(CtrDrbg::new(&entropy)));
            fill(&mut a);
        }
        {
            let _g = install_kat(Box::new(CtrDrbg::new(&entropy)));
            fill(&mut b);
        }
        assert_eq!(a, b, "same seed, same bytes");
        let mut c = [0u8; 32];
        fill(&mut c);
        assert_ne!(a, c, "OS randomness after the guard dropped");
    }
}
