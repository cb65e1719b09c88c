//! Compiles the EVP shim of cryptoscope-openssl-evp against the system's OpenSSL headers
//! and links the system libcrypto (dynamically, as every program on the machine does).
//! The versions built from vendored sources are crates/providers/openssl-vendored.
use std::path::Path;

fn main() {
    let evp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../openssl-evp");
    let mut cc = cc::Build::new();
    // The same list as crates/providers/openssl-vendored/build.rs.
    for f in ["shim/base.c", "shim/kex.c", "shim/sig.c", "shim/pq.c"] {
        let path = evp.join(f);
        println!("cargo:rerun-if-changed={}", path.display());
        cc.file(path);
    }
    cc.define("CS_PROVIDER", "\"openssl\"")
        .define("CS_BUILD", "\"system libcrypto\"")
        .warnings(true)
        .compile("cryptoscope_openssl_shim");
    println!("cargo:rustc-link-lib=crypto");
}
