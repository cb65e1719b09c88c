//! OpenSSL's ML-KEM-512/768/1024 (FIPS 203, OpenSSL 3.5 and later) through the EVP API
//! (`shim/pq.c`), and the key plumbing the post-quantum signatures (`pqsigs`) share.
//!
//! The randomness is the harness's, drawn exactly as RustCrypto's `ml-kem` subjects draw it,
//! so that both reproduce the liboqs KAT digests: the 64-byte seed d ‖ z per key pair and
//! the 32-byte message m per encapsulation, each in one draw, handed to OpenSSL as the
//! `seed` key generation parameter and the `ikme` encapsulation parameter. Secret keys are
//! FIPS 203's expanded decapsulation keys.
//!
//! `decapsulator` reads the secret key into an EVP_PKEY, untimed (OpenSSL checks H(ek) and,
//! by default, runs an encapsulation and decapsulation with a random message of its own).
//! `encaps` reads the public key from bytes as a TLS client reads a key share, the modulus
//! check included. Each operation makes, uses and frees its EVP_PKEY_CTX, as OpenSSL's TLS
//! code does (ssl/s3_lib.c).
//!
//! A libcrypto without these algorithms (OpenSSL 3.0, or 3.5 built without them) has no
//! subjects here: this module must never list one it could not fetch.

use std::ffi::CStr;

use cryptoscope_catalogue::descriptor::{Descriptor, KatPrngKind, KatRef, Randomness, Sizes};
use cryptoscope_catalogue::rng;
use cryptoscope_catalogue::traits::{check_len, Decapsulator, Kem, OpError, Subject};
use libc::c_void;

pub(crate) mod shim {
    use libc::c_void;
    use std::ffi::c_char;
    extern "C" {
        pub fn cs_pq_available(name: *const c_char, kind: i32) -> i32;
        pub fn cs_pq_keypair(
            name: *const c_char,
            seed: *const u8,
            seed_len: usize,
            pk: *mut u8,
            pk_len: usize,
            sk: *mut u8,
            sk_len: usize,
        ) -> i32;
        pub fn cs_pq_private(name: *const c_char, sk: *const u8, len: usize) -> *mut c_void;
        pub fn cs_pq_public(name: *const c_char, pk: *const u8, len: usize) -> *mut c_void;
        pub fn cs_pq_encaps(pkey: *mut c_void, m: *const u8, ct: *mut u8, ct_len: usize, ss: *mut u8) -> i32;
        pub fn cs_pq_decaps(pkey: *mut c_void, ct: *const u8, ct_len: usize, ss: *mut u8) -> i32;
        pub fn cs_pq_free(pkey: *mut c_void);
    }
}

/// What [`available`] looks for beside the key management, as the shim numbers it.
#[derive(Clone, Copy)]
#[repr(i32)]
pub(crate) enum Kind {
    Kem = 0,
    Sig = 1,
}

/// Whether this libcrypto has the algorithm `name` as a KEM or a signature, fetched now.
pub(crate) fn available(name: &CStr, kind: Kind) -> bool {
    // SAFETY: a NUL-terminated name; the shim only fetches and frees.
    unsafe { shim::cs_pq_available(name.as_ptr(), kind as i32) == 1 }
}

/// A key pair of `name` from `seed` (all of key generation's randomness) into `pk` and
/// `sk`, which must have exactly the lengths OpenSSL writes.
pub(crate) fn keypair(name: &CStr, seed: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
    // SAFETY: every buffer is valid for the length passed with it; the shim writes pk and
    // sk only when their lengths are exactly the key's.
    let ok = unsafe {
        shim::cs_pq_keypair(
            name.as_ptr(),
            seed.as_ptr(),
            seed.len(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        )
    };
    if ok == 1 {
        Ok(())
    } else {
        Err(OpError::failed(
            "keypair",
            "OpenSSL could not generate the key from its seed",
        ))
    }
}

/// An EVP_PKEY of a post-quantum scheme, owned here and freed once.
pub(crate) struct PqKey(*mut c_void);

impl PqKey {
    /// The expanded secret key `sk` of `name`, or `None` if OpenSSL refuses it.
    pub(crate) fn private(name: &CStr, sk: &[u8]) -> Option<PqKey> {
        // SAFETY: `sk` is valid for its length; the shim returns an owned key or NULL.
        let p = unsafe { shim::cs_pq_private(name.as_ptr(), sk.as_ptr(), sk.len()) };
        (!p.is_null()).then_some(PqKey(p))
    }

    /// The encoded public key `pk` of `name`, or `None` if OpenSSL refuses it.
    pub(crate) fn public(name: &CStr, pk: &[u8]) -> Option<PqKey> {
        // SAFETY: `pk` is valid for its length; the shim returns an owned key or NULL.
        let p = unsafe { shim::cs_pq_public(name.as_ptr(), pk.as_ptr(), pk.len()) };
        (!p.is_null()).then_some(PqKey(p))
    }

    /// The EVP_PKEY, live as long as `self`.
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.0
    }
}

impl Drop for PqKey {
    fn drop(&mut self) {
        // SAFETY: a non-null EVP_PKEY this value owns.
        unsafe { shim::cs_pq_free(self.0) };
    }
}

/// Bytes of ML-KEM's key generation seed d ‖ z (FIPS 203 Algorithm 19).
const SEED: usize = 64;
/// Bytes of the encapsulation message m (FIPS 203 Algorithm 20).
const M: usize = 32;

struct MlKem {
    desc: Descriptor,
    name: &'static CStr,
}

impl Kem for MlKem {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let mut seed = [0u8; SEED];
        rng::fill(&mut seed);
        keypair(self.name, &seed, pk, sk)
    }

    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
        self.desc.sizes.check_encaps(ct, ss, pk)?;
        let key = PqKey::public(self.name, pk).ok_or_else(|| OpError::failed("encaps", "public key rejected"))?;
        // Drawn once the key is taken, as RustCrypto draws it.
        let mut m = [0u8; M];
        rng::fill(&mut m);
        // SAFETY: a live EVP_PKEY; `m` holds M bytes, `ct` and `ss` the sizes checked above.
        let ok = unsafe { shim::cs_pq_encaps(key.ptr(), m.as_ptr(), ct.as_mut_ptr(), ct.len(), ss.as_mut_ptr()) };
        if ok == 1 {
            Ok(())
        } else {
            Err(OpError::failed("encaps", "OpenSSL could not encapsulate"))
        }
    }

    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
        check_len("decaps", "sk", sk.len(), self.desc.sizes.secret_key)?;
        let key = PqKey::private(self.name, sk).ok_or_else(|| OpError::failed("decaps", "secret key rejected"))?;
        Ok(Box::new(MlKemDec {
            key,
            ct_len: self.desc.sizes.ciphertext,
            ss_len: self.desc.sizes.shared_secret,
        }))
    }
}

struct MlKemDec {
    key: PqKey,
    ct_len: usize,
    ss_len: usize,
}

impl Decapsulator for MlKemDec {
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
        check_len("decaps", "ss", ss.len(), self.ss_len)?;
        if ct.len() != self.ct_len {
            return Err(OpError::failed("decaps", "ciphertext has the wrong length"));
        }
        // SAFETY: a live EVP_PKEY; `ct` is valid for its length, `ss` holds the 32 bytes
        // written (checked above).
        if unsafe { shim::cs_pq_decaps(self.key.ptr(), ct.as_ptr(), ct.len(), ss.as_mut_ptr()) } == 1 {
            Ok(())
        } else {
            Err(OpError::failed("decaps", "OpenSSL could not decapsulate"))
        }
    }
}

/// OpenSSL's ML-KEM subjects, those this libcrypto has (3.5 and later).
pub fn subjects() -> Vec<Subject> {
    // FIPS 203 Table 3 sizes: public key, expanded secret key, ciphertext.
    let table: [(&'static CStr, [usize; 3]); 3] = [
        (c"ML-KEM-512", [800, 1632, 768]),
        (c"ML-KEM-768", [1184, 2400, 1088]),
        (c"ML-KEM-1024", [1568, 3168, 1568]),
    ];
    let mut v = Vec::new();
    for (name, [pk, sk, ct]) in table {
        let Ok(alg) = name.to_str() else { continue };
        if !available(name, Kind::Kem) {
            continue;
        }
        let sizes = Sizes {
            public_key: pk,
            secret_key: sk,
            ciphertext: ct,
            shared_secret: 32,
        };
        let mut desc = Descriptor::catalogued(
            alg,
            crate::provider(),
            "default",
            crate::version(),
            crate::build(),
            sizes,
            Randomness::Harness,
        );
        desc.algorithm_version = "FIPS 203".into();
        desc.kat = Some(KatRef {
            file: "liboqs-kats.json".into(),
            name: alg.into(),
            prng: KatPrngKind::AesCtrDrbg,
        });
        v.push(Subject::Kem(Box::new(MlKem { desc, name })));
    }
    v
}
