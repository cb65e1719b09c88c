//! PQClean as a cryptoscope provider, through the `pqcrypto-*` crates, which compile
//! PQClean's C code with the `cc` crate: KEMs here, signatures in [`sigs`]. Each PQClean
//! implementation is its own subject: the portable "clean" code and, on x86_64, the "avx2"
//! code (called directly, not through the crates' run-time dispatch, so both are measured
//! on the same machine).
//!
//! Randomness: PQClean's `randombytes` is `#define`d to `PQCRYPTO_RUST_randombytes`
//! (crate `pqcrypto-internals`). This crate defines that symbol itself, routing it to the
//! harness, so KATs are reproducible. The override relies on ordinary (non-LTO) linking:
//! the workspace's release profile keeps LTO off for that reason.
//!
//! This provider must never share a process image with liboqs: both define the same
//! `PQCLEAN_*` symbols for Classic McEliece, HQC, Falcon and SPHINCS+. It runs in its own
//! worker binary.

use cryptoscope_catalogue::descriptor::{require_cpu, Availability, Descriptor, KatRef, Randomness, Sizes};
use cryptoscope_catalogue::traits::{check_len, Decapsulator, Kem, OpError, Subject};
use libc::c_int;

mod sigs;

/// Canonical provider name.
pub const PROVIDER: &str = "pqclean";

/// PQClean's randomness entry point, routed to the harness. Replaces the definition in
/// `pqcrypto-internals` (which would call `getrandom` directly).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes, as PQClean guarantees.
#[no_mangle]
pub unsafe extern "C" fn PQCRYPTO_RUST_randombytes(buf: *mut u8, len: libc::size_t) -> c_int {
    if !buf.is_null() && len > 0 {
        // SAFETY: per the contract above.
        let out = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        cryptoscope_catalogue::rng::fill(out);
    }
    0
}

type KeypairFn = unsafe extern "C" fn(*mut u8, *mut u8) -> c_int;
type EncFn = unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> c_int;
type DecFn = unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> c_int;

struct PqKem {
    desc: Descriptor,
    keypair: KeypairFn,
    enc: EncFn,
    dec: DecFn,
}

fn rc(op: &'static str, r: c_int) -> Result<(), OpError> {
    if r == 0 {
        Ok(())
    } else {
        Err(OpError::failed(op, format!("PQClean returned {r}")))
    }
}

impl Kem for PqKem {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        // SAFETY: lengths match the implementation's CRYPTO_* constants.
        rc("keypair", unsafe { (self.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()) })
    }

    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
        self.desc.sizes.check_encaps(ct, ss, pk)?;
        // SAFETY: as above.
        rc("encaps", unsafe {
            (self.enc)(ct.as_mut_ptr(), ss.as_mut_ptr(), pk.as_ptr())
        })
    }

    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
        check_len("decaps", "sk", sk.len(), self.desc.sizes.secret_key)?;
        Ok(Box::new(PqDecaps {
            kem: self,
            sk: sk.to_vec(),
        }))
    }
}

struct PqDecaps<'a> {
    kem: &'a PqKem,
    sk: Vec<u8>,
}

impl Decapsulator for PqDecaps<'_> {
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
        self.kem.desc.sizes.check_decaps(ss, ct)?;
        // SAFETY: as above.
        let r = unsafe { (self.kem.dec)(ss.as_mut_ptr(), ct.as_ptr(), self.sk.as_ptr()) };
        // Decapsulation's status depends on the secret key (HQC returns -1 for a rejected
        // ciphertext), so it is tested once and never formatted: printing it would branch on
        // a secret in our own code, which the constant-time audit would rightly report.
        if r == 0 {
            Ok(())
        } else {
            Err(OpError::failed("decaps", "PQClean returned an error"))
        }
    }
}

struct Entry {
    alg: &'static str,
    imp: &'static str,
    crate_name: &'static str,
    sizes: Sizes,
    keypair: KeypairFn,
    enc: EncFn,
    dec: DecFn,
}

macro_rules! entry {
    ($v:ident, $alg:literal, $imp:literal, $krate:ident, $prefix:ident) => {
        paste::paste! {
            $v.push(Entry {
                alg: $alg,
                imp: $imp,
                crate_name: stringify!($krate),
                sizes: Sizes {
                    public_key: $krate::ffi::[<$prefix _CRYPTO_PUBLICKEYBYTES>],
                    secret_key: $krate::ffi::[<$prefix _CRYPTO_SECRETKEYBYTES>],
                    ciphertext: $krate::ffi::[<$prefix _CRYPTO_CIPHERTEXTBYTES>],
                    shared_secret: $krate::ffi::[<$prefix _CRYPTO_BYTES>],
                },
                keypair: $krate::ffi::[<$prefix _crypto_kem_keypair>],
                enc: $krate::ffi::[<$prefix _crypto_kem_enc>],
                dec: $krate::ffi::[<$prefix _crypto_kem_dec>],
            });
        }
    };
}

/// Clean and AVX2 entries of one algorithm.
macro_rules! both {
    ($v:ident, $alg:literal, $krate:ident, $ns:ident) => {
        paste::paste! {
            entry!($v, $alg, "clean", $krate, [<PQCLEAN_ $ns _CLEAN>]);
            #[cfg(target_arch = "x86_64")]
            entry!($v, $alg, "avx2", $krate, [<PQCLEAN_ $ns _AVX2>]);
        }
    };
}

// Pushes come from macros, some behind `cfg(target_arch)`, so a `vec![]` literal does not fit.
#[allow(clippy::vec_init_then_push)]
fn entries() -> Vec<Entry> {
    let mut v = Vec::new();
    both!(v, "ML-KEM-512", pqcrypto_mlkem, MLKEM512);
    both!(v, "ML-KEM-768", pqcrypto_mlkem, MLKEM768);
    both!(v, "ML-KEM-1024", pqcrypto_mlkem, MLKEM1024);
    both!(v, "Classic-McEliece-348864", pqcrypto_classicmceliece, MCELIECE348864);
    both!(v, "Classic-McEliece-348864f", pqcrypto_classicmceliece, MCELIECE348864F);
    both!(v, "Classic-McEliece-460896", pqcrypto_classicmceliece, MCELIECE460896);
    both!(v, "Classic-McEliece-460896f", pqcrypto_classicmceliece, MCELIECE460896F);
    both!(v, "Classic-McEliece-6688128", pqcrypto_classicmceliece, MCELIECE6688128);
    both!(
        v,
        "Classic-McEliece-6688128f",
        pqcrypto_classicmceliece,
        MCELIECE6688128F
    );
    both!(v, "Classic-McEliece-6960119", pqcrypto_classicmceliece, MCELIECE6960119);
    both!(
        v,
        "Classic-McEliece-6960119f",
        pqcrypto_classicmceliece,
        MCELIECE6960119F
    );
    both!(v, "Classic-McEliece-8192128", pqcrypto_classicmceliece, MCELIECE8192128);
    both!(
        v,
        "Classic-McEliece-8192128f",
        pqcrypto_classicmceliece,
        MCELIECE8192128F
    );
    both!(v, "NTRU-HPS-2048-509", pqcrypto_ntru, NTRUHPS2048509);
    both!(v, "NTRU-HPS-2048-677", pqcrypto_ntru, NTRUHPS2048677);
    both!(v, "NTRU-HPS-4096-821", pqcrypto_ntru, NTRUHPS4096821);
    entry!(
        v,
        "NTRU-HPS-4096-1229",
        "clean",
        pqcrypto_ntru,
        PQCLEAN_NTRUHPS40961229_CLEAN
    );
    both!(v, "NTRU-HRSS-701", pqcrypto_ntru, NTRUHRSS701);
    entry!(v, "NTRU-HRSS-1373", "clean", pqcrypto_ntru, PQCLEAN_NTRUHRSS1373_CLEAN);
    entry!(v, "HQC-128", "clean", pqcrypto_hqc, PQCLEAN_HQC128_CLEAN);
    entry!(v, "HQC-192", "clean", pqcrypto_hqc, PQCLEAN_HQC192_CLEAN);
    entry!(v, "HQC-256", "clean", pqcrypto_hqc, PQCLEAN_HQC256_CLEAN);
    v
}

/// What an implementation needs and how it was built: the AVX2 code is compiled (by the
/// `pqcrypto-*` build scripts) with the flags below and runs only where the CPU has all of
/// them. Returns the availability, the build string and the crate's version.
fn implementation(imp: &str, crate_name: &str) -> (Availability, String, String) {
    let cc = cryptoscope_worker::build_info::C_COMPILER;
    let opt = cryptoscope_worker::build_info::OPT_LEVEL;
    let (availability, flags) = if imp == "avx2" {
        (
            require_cpu(&["avx2", "bmi1", "bmi2", "aes", "popcnt", "pclmulqdq"]),
            " -mavx2 -mbmi2 -mbmi -maes -mpopcnt -mpclmul",
        )
    } else {
        (Availability::Available, "")
    };
    (
        availability,
        format!("cc crate: {cc} -O{opt}{flags}"),
        cryptoscope_worker::build_info::crate_version(&crate_name.replace('_', "-")),
    )
}

/// Every PQClean subject: the KEMs, then the signatures of [`sigs`].
pub fn subjects() -> Vec<Subject> {
    let mut out: Vec<Subject> = entries()
        .into_iter()
        .map(|e| {
            let (availability, build, version) = implementation(e.imp, e.crate_name);
            Subject::Kem(Box::new(PqKem {
                desc: Descriptor {
                    availability,
                    algorithm_version: format!("PQClean as vendored in {version}"),
                    kat: Some(KatRef::liboqs_digest(e.alg)),
                    ..Descriptor::catalogued(
                        e.alg,
                        PROVIDER,
                        e.imp,
                        version.clone(),
                        build,
                        e.sizes,
                        Randomness::Harness,
                    )
                },
                keypair: e.keypair,
                enc: e.enc,
                dec: e.dec,
            })) as Subject
        })
        .collect();
    out.extend(sigs::subjects());
    out
}
