//! Compiles the small C shim for key exchange and signatures (OpenSSL's EVP API is C; the
//! `openssl` crate does not expose named FFDHE groups, an encoded public key or a
//! public-key check, and the signatures use EVP as OpenSSL's TLS code does).
fn main() {
    println!("cargo:rerun-if-changed=shim/kex.c");
    println!("cargo:rerun-if-changed=shim/sig.c");
    cc::Build::new()
        .file("shim/kex.c")
        .file("shim/sig.c")
        .warnings(true)
        .compile("cryptoscope_openssl_shim");
    println!("cargo:rustc-link-lib=crypto");
}
