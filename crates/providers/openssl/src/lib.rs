//! OpenSSL (the system's libcrypto, OpenSSL 3.0 on Debian 12) as a cryptoscope provider:
//! X25519, ECDH P-256 and FFDHE-2048 through the EVP API as OpenSSL's TLS uses it (`kex`,
//! with a small C shim, `shim/kex.c`); its digests, Camellia and its AEADs (AES-GCM,
//! ChaCha20-Poly1305); its signatures (Ed25519, ECDSA P-256, RSA PKCS#1 v1.5 and PSS:
//! `sigs`, with `shim/sig.c`).

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{OpError, Subject};

mod aeads;
pub mod ciphers;
mod hashes;
mod kex;
mod sigs;

/// Canonical provider name.
pub const PROVIDER: &str = "openssl";

fn err(op: &'static str) -> impl Fn(openssl::error::ErrorStack) -> OpError {
    move |e| OpError::failed(op, format!("OpenSSL: {e}"))
}

fn descriptor(alg: &str, sizes: Sizes) -> Descriptor {
    let version = openssl::version::version().to_string();
    let build = format!("system libcrypto ({version}), {}", openssl::version::built_on());
    Descriptor::catalogued(alg, PROVIDER, "default", version, build, sizes, Randomness::Internal)
}

/// Bytes of an FFDHE-2048 public value, private value and shared secret: the size of p.
const FFDHE_BYTES: usize = 256;

/// OpenSSL's subjects.
pub fn subjects() -> Vec<Subject> {
    let mut v = kex::subjects();
    v.extend(hashes::subjects());
    v.extend(ciphers::subjects());
    v.extend(aeads::subjects());
    v.extend(sigs::subjects());
    v
}
