//! liboqs (Open Quantum Safe) as a cryptoscope provider, through the `oqs-sys` crate
//! (which vendors and builds liboqs with CMake).
//!
//! Every KEM liboqs enables and our catalogue names becomes a subject, and so does every
//! signature scheme of [`sigs`] the build enables. liboqs chooses its
//! implementation at run time (`OQS_DIST_BUILD`): AVX2 code where the CPU has it, portable
//! code otherwise; the subject's implementation is labelled "dispatch".
//!
//! Randomness: liboqs's `OQS_randombytes` is routed to the harness
//! (`OQS_randombytes_custom_algorithm`), which gives OS randomness except while the gate
//! reproduces a KAT. This module is the only place liboqs is called; it never panics across
//! the FFI boundary.

use cryptoscope_catalogue::descriptor::{Availability, Descriptor, Family, KatPrngKind, KatRef, Randomness, Sizes};
use cryptoscope_catalogue::names;
use cryptoscope_catalogue::traits::{check_len, Decapsulator, Kem, OpError, Subject};
use oqs_sys::common::OQS_STATUS;
use oqs_sys::kem::{
    OQS_KEM_alg_count, OQS_KEM_alg_identifier, OQS_KEM_alg_is_enabled, OQS_KEM_free, OQS_KEM_new, OQS_KEM,
};
use std::ffi::CStr;

mod sigs;

/// Canonical provider name.
pub const PROVIDER: &str = "liboqs";

/// liboqs's randomness callback: draw from the harness.
unsafe extern "C" fn harness_randombytes(buf: *mut u8, len: usize) {
    if buf.is_null() || len == 0 {
        return;
    }
    // SAFETY: liboqs passes a writable buffer of `len` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    cryptoscope_catalogue::rng::fill(out);
}

/// The liboqs version string (e.g. "0.13.0").
pub fn version() -> String {
    // SAFETY: OQS_version returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(oqs_sys::common::OQS_version()) }
        .to_string_lossy()
        .into_owned()
}

struct OqsKem {
    kem: *mut OQS_KEM,
    desc: Descriptor,
}

// SAFETY: an OQS_KEM is an immutable table of sizes and function pointers; liboqs KEM
// functions are reentrant and keep no per-object state.
unsafe impl Send for OqsKem {}
unsafe impl Sync for OqsKem {}

impl Drop for OqsKem {
    fn drop(&mut self) {
        // SAFETY: `kem` came from OQS_KEM_new and is freed once.
        unsafe { OQS_KEM_free(self.kem) };
    }
}

fn status(op: &'static str, s: OQS_STATUS) -> Result<(), OpError> {
    if s == OQS_STATUS::OQS_SUCCESS {
        Ok(())
    } else {
        Err(OpError::failed(op, format!("liboqs returned {s:?}")))
    }
}

impl OqsKem {
    fn table(&self) -> &OQS_KEM {
        // SAFETY: non-null (checked at construction) and alive until drop.
        unsafe { &*self.kem }
    }
}

impl Kem for OqsKem {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let f = self
            .table()
            .keypair
            .ok_or_else(|| OpError::failed("keypair", "missing in liboqs table"))?;
        // SAFETY: buffers have the lengths liboqs declares for this algorithm.
        status("keypair", unsafe { f(pk.as_mut_ptr(), sk.as_mut_ptr()) })
    }

    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
        self.desc.sizes.check_encaps(ct, ss, pk)?;
        let f = self
            .table()
            .encaps
            .ok_or_else(|| OpError::failed("encaps", "missing in liboqs table"))?;
        // SAFETY: as above.
        status("encaps", unsafe { f(ct.as_mut_ptr(), ss.as_mut_ptr(), pk.as_ptr()) })
    }

    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
        check_len("decaps", "sk", sk.len(), self.desc.sizes.secret_key)?;
        Ok(Box::new(OqsDecaps {
            kem: self,
            sk: sk.to_vec(),
        }))
    }
}

struct OqsDecaps<'a> {
    kem: &'a OqsKem,
    sk: Vec<u8>,
}

impl Decapsulator for OqsDecaps<'_> {
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
        self.kem.desc.sizes.check_decaps(ss, ct)?;
        let f = self
            .kem
            .table()
            .decaps
            .ok_or_else(|| OpError::failed("decaps", "missing in liboqs table"))?;
        // SAFETY: as above.
        let s = unsafe { f(ss.as_mut_ptr(), ct.as_ptr(), self.sk.as_ptr()) };
        // Decapsulation's status depends on the secret key (HQC reports a rejected
        // ciphertext): tested once, never formatted (see the PQClean provider).
        if s == OQS_STATUS::OQS_SUCCESS {
            Ok(())
        } else {
            Err(OpError::failed("decaps", "liboqs returned an error"))
        }
    }
}

fn build_string() -> String {
    format!(
        "liboqs {} via oqs-sys 0.11 (CMake Release, OQS_DIST_BUILD=ON, OQS_USE_OPENSSL=OFF); {}",
        version(),
        cryptoscope_worker::build_info::C_COMPILER
    )
}

/// Every liboqs KEM and signature scheme our catalogue knows.
pub fn subjects() -> Vec<Subject> {
    // SAFETY: plain library initialisation and a function-pointer registration.
    unsafe {
        oqs_sys::common::OQS_init();
        oqs_sys::rand::OQS_randombytes_custom_algorithm(Some(harness_randombytes));
    }
    let version = version();
    let build = build_string();
    let mut out = Vec::new();
    // SAFETY: index within OQS_KEM_alg_count; identifiers are static strings.
    let count = unsafe { OQS_KEM_alg_count() }.max(0) as usize;
    for i in 0..count {
        let id_ptr = unsafe { OQS_KEM_alg_identifier(i) };
        if id_ptr.is_null() || unsafe { OQS_KEM_alg_is_enabled(id_ptr) } == 0 {
            continue;
        }
        let name = unsafe { CStr::from_ptr(id_ptr) }.to_string_lossy().into_owned();
        let Some(info) = names::algorithm(&name) else { continue };
        let kem = unsafe { OQS_KEM_new(id_ptr) };
        if kem.is_null() {
            continue;
        }
        // SAFETY: non-null table returned by liboqs.
        let t = unsafe { &*kem };
        let prng = if info.name.starts_with("HQC") {
            KatPrngKind::Shake256 { domain: 1 }
        } else {
            KatPrngKind::AesCtrDrbg
        };
        let desc = Descriptor {
            id: Descriptor::make_id(info.name, PROVIDER, "dispatch"),
            algorithm: info.name.to_string(),
            family: Family::Kem,
            provider: PROVIDER.into(),
            provider_version: version.clone(),
            implementation: "dispatch".into(),
            algorithm_version: unsafe { CStr::from_ptr(t.alg_version) }.to_string_lossy().into_owned(),
            build: build.clone(),
            nist_level: Some(t.claimed_nist_level),
            classical_bits: None,
            sizes: Sizes {
                public_key: t.length_public_key,
                secret_key: t.length_secret_key,
                ciphertext: t.length_ciphertext,
                shared_secret: t.length_shared_secret,
            },
            availability: Availability::Available,
            randomness: Randomness::Harness,
            kat: Some(KatRef {
                file: "liboqs-0.13.0-kats.json".into(),
                name: name.clone(),
                prng,
            }),
            cipher: None,
            aead: None,
            sig: None,
        };
        out.push(Subject::Kem(Box::new(OqsKem { kem, desc })));
    }
    out.extend(sigs::subjects(&version, &build));
    out
}
