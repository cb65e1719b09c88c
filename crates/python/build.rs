//! Records, for the extension module: the exact versions of the hash crates it links beside
//! the catalogue (from the workspace's Cargo.lock), and where this build put its outputs
//! (so `cryptoscope.suite` can find the `cryptoscope` binary built next to it); and the
//! target interpreter's version as cfgs (`Py_3_10`: immutable types).

use std::path::Path;

/// Crate name and the version prefix of the requirement in Cargo.toml.
const WANTED: &[(&str, &str)] = &[
    ("md-5", "0.11."),
    ("sha1", "0.11."),
    ("sha2", "0.11."),
    ("sha3", "0.12."),
    ("blake2b_simd", "1."),
    ("blake2s_simd", "1."),
];

fn locked_versions(lock: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = lock.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("name = \"").and_then(|s| s.strip_suffix('"')) else {
            continue;
        };
        let Some(version) = lines
            .peek()
            .and_then(|l| l.strip_prefix("version = \""))
            .and_then(|s| s.strip_suffix('"'))
        else {
            continue;
        };
        if WANTED.iter().any(|(n, p)| *n == name && version.starts_with(p)) {
            out.push(format!("{name}={version}"));
        }
    }
    out
}

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let lock = Path::new(&manifest).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let versions = std::fs::read_to_string(&lock)
        .map(|l| locked_versions(&l))
        .unwrap_or_default();
    println!("cargo:rustc-env=CRYPTOSCOPE_PY_CRATE_VERSIONS={}", versions.join(","));
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out: the profile directory is
    // where cargo puts the workspace's binaries when built with the same target directory.
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let profile = Path::new(&out)
        .ancestors()
        .nth(3)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=CRYPTOSCOPE_PY_PROFILE_DIR={profile}");
}
