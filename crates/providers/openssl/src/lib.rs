//! The system's OpenSSL (libcrypto as the distribution ships it: 3.0 on Debian 12) as the
//! provider `openssl`. The subjects are cryptoscope-openssl-evp's, compiled here against the
//! system headers (build.rs); other OpenSSL versions are their own providers
//! (`openssl-3.5`, `openssl-4.0`: crates/providers/openssl-vendored).

pub use cryptoscope_openssl_evp::{ciphers, provider, subjects};
