//! Compiles the EVP shim of cryptoscope-openssl-evp against the system's OpenSSL headers
//! and links the system libcrypto (dynamically, as every program on the machine does).
//! The versions built from vendored sources are crates/providers/openssl-vendored.
use std::path::Path;

fn main() {
    // Read at run time: a build script compiled in another checkout that shares the target
    // directory (CI clones into a temporary directory) must not carry that checkout's path.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let evp = Path::new(&manifest).join("../openssl-evp");
    let mut cc = cc::Build::new();
    // Every C file of the shim, as crates/providers/openssl-vendored/build.rs compiles them.
    println!("cargo:rerun-if-changed={}", evp.join("shim").display());
    for path in shim_files(&evp) {
        println!("cargo:rerun-if-changed={}", path.display());
        cc.file(path);
    }
    cc.define("CS_PROVIDER", "\"openssl\"")
        .define("CS_BUILD", "\"system libcrypto\"")
        .warnings(true)
        .cargo_metadata(false)
        .compile("cryptoscope_openssl_shim");
    // The shim's callers are in cryptoscope-openssl-evp, which the linker meets after this
    // crate: whole, the archive's symbols are there whatever the order. GNU ld (AArch64's
    // default) reads archives once, in order; lld (x86-64's default) would not mind.
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static:+whole-archive=cryptoscope_openssl_shim");
    println!("cargo:rustc-link-lib=crypto");
}

/// The shim's C files (`openssl-evp/shim/*.c`), in name order.
fn shim_files(evp: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(evp.join("shim"))
        .expect("the openssl-evp shim directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v
}
