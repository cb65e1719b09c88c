//! Compiles the small C shim for key exchange (OpenSSL's EVP API is C; the `openssl` crate
//! does not expose named FFDHE groups, an encoded public key or a public-key check).
fn main() {
    println!("cargo:rerun-if-changed=shim/kex.c");
    cc::Build::new()
        .file("shim/kex.c")
        .warnings(true)
        .compile("cryptoscope_openssl_shim");
    println!("cargo:rustc-link-lib=crypto");
}
