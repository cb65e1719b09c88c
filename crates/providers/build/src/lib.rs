//! The `build` provider: implementations this machine compiled with `cryptoscope build`
//! (PQClean sources from the pqcrypto crates, through a compiler/flags/variant matrix) and
//! `cryptoscope add` (a user's directory with the NIST/SUPERCOP KEM API). Each is a shared
//! library loaded with `RTLD_LOCAL`; its only visible symbols are the shim's `cs_*`
//! functions, so two builds of the same code never resolve to each other.
//!
//! Randomness: the shim's `randombytes` calls back into the harness (`cs_set_rng`), so the
//! NIST KAT DRBG drives every build and KATs are reproducible.

use cryptoscope_catalogue::descriptor::{
    require_cpu, Availability, Descriptor, KatPrngKind, KatRef, Randomness, Sizes,
};
use cryptoscope_catalogue::traits::{check_len, Decapsulator, Kem, OpError, Subject};
use cryptoscope_worker::builds::{self, Manifest};
use libc::c_int;
use std::ffi::{CStr, CString};
use std::path::Path;

/// Canonical provider name.
pub const PROVIDER: &str = "build";

type KeypairFn = unsafe extern "C" fn(*mut u8, *mut u8) -> c_int;
type EncFn = unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> c_int;
type DecFn = unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> c_int;
type RngFn = unsafe extern "C" fn(*mut u8, usize);
type SetRngFn = unsafe extern "C" fn(RngFn);

/// The harness's randomness, as the shim calls it.
unsafe extern "C" fn harness_rng(buf: *mut u8, len: usize) {
    if !buf.is_null() && len > 0 {
        // SAFETY: the shim passes the caller's buffer and its length.
        let out = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        cryptoscope_catalogue::rng::fill(out);
    }
}

type ProbeCountFn = unsafe extern "C" fn() -> c_int;
type ProbeNameFn = unsafe extern "C" fn(c_int) -> *const libc::c_char;
type ProbeReadFn = unsafe extern "C" fn(*mut u64, *mut u64);
type ProbeOverheadFn = unsafe extern "C" fn() -> u64;
type ProbeTscFn = unsafe extern "C" fn() -> c_int;

struct Library {
    keypair: KeypairFn,
    enc: EncFn,
    dec: DecFn,
    probes: Option<LibProbes>,
}

/// The probe counters of a library built with timing wrappers.
struct LibProbes {
    names: Vec<String>,
    read: ProbeReadFn,
    overhead: u64,
    tsc: bool,
}

impl cryptoscope_catalogue::Probes for LibProbes {
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn read(&self) -> Vec<(u64, u64)> {
        let n = self.names.len();
        let (mut calls, mut ticks) = (vec![0u64; n], vec![0u64; n]);
        // SAFETY: the probe library writes exactly cs_probe_count() entries to each array.
        unsafe { (self.read)(calls.as_mut_ptr(), ticks.as_mut_ptr()) };
        calls.into_iter().zip(ticks).collect()
    }

    fn overhead(&self) -> u64 {
        self.overhead
    }

    fn unit(&self) -> &'static str {
        if self.tsc {
            "TSC"
        } else {
            "ns"
        }
    }
}

/// Loads a build's library and its entry points.
fn load(path: &Path) -> Result<Library, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: dlopen with a valid C string; the handle is kept for the process lifetime.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        // SAFETY: dlerror returns a thread-local C string or null.
        let e = unsafe { libc::dlerror() };
        let msg = if e.is_null() {
            "dlopen failed".to_string()
        } else {
            // SAFETY: non-null C string from dlerror.
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        };
        return Err(msg);
    }
    let sym = |name: &str| -> Result<*mut libc::c_void, String> {
        let n = CString::new(name).expect("no NUL");
        // SAFETY: valid handle and C string.
        let p = unsafe { libc::dlsym(h, n.as_ptr()) };
        if p.is_null() {
            Err(format!("{} has no symbol {name}", path.display()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: the shim defines these with exactly these signatures.
    unsafe {
        let set_rng: SetRngFn = std::mem::transmute::<*mut libc::c_void, SetRngFn>(sym("cs_set_rng")?);
        set_rng(harness_rng);
        let probes = match sym("cs_probe_count") {
            Err(_) => None,
            Ok(count) => {
                let count = std::mem::transmute::<*mut libc::c_void, ProbeCountFn>(count)();
                let name = std::mem::transmute::<*mut libc::c_void, ProbeNameFn>(sym("cs_probe_name")?);
                let names = (0..count)
                    .map(|i| CStr::from_ptr(name(i)).to_string_lossy().into_owned())
                    .collect();
                Some(LibProbes {
                    names,
                    read: std::mem::transmute::<*mut libc::c_void, ProbeReadFn>(sym("cs_probe_read")?),
                    overhead: std::mem::transmute::<*mut libc::c_void, ProbeOverheadFn>(sym("cs_probe_overhead")?)(),
                    tsc: std::mem::transmute::<*mut libc::c_void, ProbeTscFn>(sym("cs_probe_tsc")?)() != 0,
                })
            }
        };
        Ok(Library {
            keypair: std::mem::transmute::<*mut libc::c_void, KeypairFn>(sym("cs_keypair")?),
            enc: std::mem::transmute::<*mut libc::c_void, EncFn>(sym("cs_enc")?),
            dec: std::mem::transmute::<*mut libc::c_void, DecFn>(sym("cs_dec")?),
            probes,
        })
    }
}

struct BuiltKem {
    desc: Descriptor,
    lib: Option<Library>,
}

fn rc(op: &'static str, r: c_int) -> Result<(), OpError> {
    if r == 0 {
        Ok(())
    } else {
        Err(OpError::failed(op, format!("returned {r}")))
    }
}

impl BuiltKem {
    fn lib(&self) -> Result<&Library, OpError> {
        self.lib
            .as_ref()
            .ok_or_else(|| OpError::Unavailable(format!("{} could not be loaded", self.desc.id)))
    }
}

impl Kem for BuiltKem {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<(), OpError> {
        self.desc.sizes.check_keypair(pk, sk)?;
        let l = self.lib()?;
        // SAFETY: buffer lengths match the build's CRYPTO_* constants.
        rc("keypair", unsafe { (l.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()) })
    }

    fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<(), OpError> {
        self.desc.sizes.check_encaps(ct, ss, pk)?;
        let l = self.lib()?;
        // SAFETY: as above.
        rc("encaps", unsafe {
            (l.enc)(ct.as_mut_ptr(), ss.as_mut_ptr(), pk.as_ptr())
        })
    }

    fn probes(&self) -> Option<&dyn cryptoscope_catalogue::Probes> {
        self.lib
            .as_ref()
            .and_then(|l| l.probes.as_ref())
            .map(|p| p as &dyn cryptoscope_catalogue::Probes)
    }

    fn decapsulator<'a>(&'a self, sk: &[u8]) -> Result<Box<dyn Decapsulator + 'a>, OpError> {
        check_len("decaps", "sk", sk.len(), self.desc.sizes.secret_key)?;
        Ok(Box::new(BuiltDecaps {
            kem: self,
            sk: sk.to_vec(),
        }))
    }
}

struct BuiltDecaps<'a> {
    kem: &'a BuiltKem,
    sk: Vec<u8>,
}

impl Decapsulator for BuiltDecaps<'_> {
    fn decaps(&mut self, ss: &mut [u8], ct: &[u8]) -> Result<(), OpError> {
        self.kem.desc.sizes.check_decaps(ss, ct)?;
        let l = self.kem.lib()?;
        // SAFETY: as above.
        rc("decaps", unsafe {
            (l.dec)(ss.as_mut_ptr(), ct.as_ptr(), self.sk.as_ptr())
        })
    }
}

fn subject(dir: &Path, m: &Manifest) -> Option<Subject> {
    let info = cryptoscope_catalogue::names::algorithm(&m.algorithm)?;
    if info.family != cryptoscope_catalogue::Family::Kem {
        return None;
    }
    let needs: Vec<&str> = m.requires.iter().map(String::as_str).collect();
    let mut availability = require_cpu(&needs);
    let lib = if availability == Availability::Available {
        // With CRYPTOSCOPE_PROBES=1 (`cryptoscope micro`), the probed twin of the library.
        let probed = std::env::var_os(builds::PROBES_ENV).is_some_and(|v| v == "1") && !m.probes.is_empty();
        let file = if probed {
            builds::PROBES_LIBRARY
        } else {
            builds::LIBRARY
        };
        match load(&dir.join(file)) {
            Ok(l) => Some(l),
            Err(e) => {
                availability = Availability::Unavailable(format!("cannot load: {e}"));
                None
            }
        }
    } else {
        None
    };
    Some(Subject::Kem(Box::new(BuiltKem {
        desc: Descriptor {
            availability,
            algorithm_version: format!("{} sources: {}", m.origin, m.source_version),
            kat: Some(if m.origin == "liboqs" {
                // liboqs 0.13's own digests (its HQC and FrodoKEM differ from today's).
                KatRef {
                    file: "liboqs-0.13.0-kats.json".into(),
                    name: m.algorithm.clone(),
                    prng: if m.algorithm.starts_with("HQC") {
                        KatPrngKind::Shake256 { domain: 1 }
                    } else {
                        KatPrngKind::AesCtrDrbg
                    },
                }
            } else {
                KatRef::liboqs_digest(&m.algorithm)
            }),
            ..Descriptor::catalogued(
                &m.algorithm,
                PROVIDER,
                &m.label,
                m.source_version.clone(),
                m.build_line(),
                Sizes {
                    public_key: m.public_key,
                    secret_key: m.secret_key,
                    ciphertext: m.ciphertext,
                    shared_secret: m.shared_secret,
                },
                Randomness::Harness,
            )
        },
        lib,
    })))
}

/// Every build in the builds directory whose algorithm is a catalogued KEM.
pub fn subjects() -> Vec<Subject> {
    builds::list().iter().filter_map(|(d, m)| subject(d, m)).collect()
}
