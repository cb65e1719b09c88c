//! Compiles the small C shim for FFDHE (OpenSSL's EVP API is C; the `openssl` crate does
//! not expose named FFDHE groups).
fn main() {
    println!("cargo:rerun-if-changed=shim/ffdhe.c");
    cc::Build::new()
        .file("shim/ffdhe.c")
        .warnings(true)
        .compile("cryptoscope_openssl_shim");
    println!("cargo:rustc-link-lib=crypto");
}
