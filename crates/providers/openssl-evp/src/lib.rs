//! OpenSSL as cryptoscope subjects, through the EVP API alone so that one source serves
//! every OpenSSL it is compiled against: Debian's system libcrypto (3.0 on Debian 12,
//! provider `openssl`) and the versions built from vendored sources (`openssl-3.5`,
//! `openssl-4.0`: crates/providers/openssl-vendored).
//!
//! - key exchange: X25519, ECDH P-256 and FFDHE-2048 as OpenSSL's TLS runs them (`kex`,
//!   `shim/kex.c`);
//! - signatures: Ed25519, ECDSA P-256, RSA PKCS#1 v1.5 and PSS (`sigs`, `shim/sig.c`);
//! - digests, Camellia and the AEADs (AES-GCM, ChaCha20-Poly1305) (`hashes`, `ciphers`,
//!   `aeads`, `shim/base.c`);
//! - from 3.5 on, ML-KEM (`kems`), ML-DSA and SLH-DSA (`pqsigs`), `shim/pq.c`.
//!
//! A version offers what it has (each algorithm is fetched at run time); where versions
//! are measured side by side, the engine lists what one lacks as unavailable.
//!
//! This crate links nothing: the crate that builds a worker compiles every `shim/*.c`
//! against one libcrypto's headers with `CS_PROVIDER` (the provider's name) and `CS_BUILD`
//! (how that libcrypto was obtained) defined, and links the two (the build.rs of
//! crates/providers/openssl and crates/providers/openssl-vendored).

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::Subject;
use std::ffi::{c_char, CStr};
use std::sync::OnceLock;

mod aeads;
pub mod ciphers;
mod hashes;
mod kems;
mod kex;
mod pqsigs;
mod sigs;

mod ident {
    use std::ffi::c_char;
    extern "C" {
        pub fn cs_provider() -> *const c_char;
        pub fn cs_unbuilt() -> *const c_char;
        pub fn cs_build() -> *const c_char;
        pub fn cs_version() -> *const c_char;
        pub fn cs_built_on() -> *const c_char;
    }
}

fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the shim returns NUL-terminated static strings (its own or libcrypto's).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// This worker's provider name and the descriptor's version and build lines, read once.
struct Ident {
    provider: String,
    version: String,
    build: String,
}

fn ident() -> &'static Ident {
    static ID: OnceLock<Ident> = OnceLock::new();
    ID.get_or_init(|| {
        // SAFETY: argument-less functions returning static strings.
        let (provider, build, version, built_on) = unsafe {
            (
                c_str(ident::cs_provider()),
                c_str(ident::cs_build()),
                c_str(ident::cs_version()),
                c_str(ident::cs_built_on()),
            )
        };
        Ident {
            provider,
            build: format!("{build} ({version}), {built_on}"),
            version,
        }
    })
}

/// The canonical provider name this worker was built as (`openssl`, `openssl-3.5`, …).
pub fn provider() -> &'static str {
    &ident().provider
}

/// Why this worker was linked without its own libcrypto (the vendored build failed), if
/// it was: such a worker measures nothing and says so.
pub fn unbuilt() -> Option<String> {
    // SAFETY: an argument-less function returning a static string or NULL.
    let p = unsafe { ident::cs_unbuilt() };
    (!p.is_null()).then(|| c_str(p))
}

/// The library's version string, as OpenSSL gives it at run time.
fn version() -> String {
    ident().version.clone()
}

/// How this libcrypto was obtained and built.
fn build() -> String {
    ident().build.clone()
}

fn descriptor(alg: &str, sizes: Sizes) -> Descriptor {
    Descriptor::catalogued(
        alg,
        provider(),
        "default",
        version(),
        build(),
        sizes,
        Randomness::Internal,
    )
}

/// Bytes of an FFDHE-2048 public value, private value and shared secret: the size of p.
const FFDHE_BYTES: usize = 256;

/// This libcrypto's subjects.
pub fn subjects() -> Vec<Subject> {
    let mut v = kex::subjects();
    v.extend(hashes::subjects());
    v.extend(ciphers::subjects());
    v.extend(aeads::subjects());
    v.extend(sigs::subjects());
    v.extend(kems::subjects());
    v.extend(pqsigs::subjects());
    v
}
