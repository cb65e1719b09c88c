//! OpenSSL 4.0's `openssl-src` (400.x) under the version openssl-sys's `vendored` feature
//! accepts (300.x): the build API of both is the same, so a re-export is all there is.
pub use openssl_src_400::*;
