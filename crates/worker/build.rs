//! Records which compilers built this tool, for the environment section of every result.
use std::process::Command;

fn first_line(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

fn main() {
    // Valgrind client requests for `cryptoscope ct` (memcheck's header ships with the
    // valgrind package, which setup installs; without it the requests compile to nothing
    // and the audit says the build cannot mark secrets).
    let mut b = cc::Build::new();
    b.file("csrc/ct.c").warnings(true);
    if std::path::Path::new("/usr/include/valgrind/memcheck.h").exists() {
        b.define("CRYPTOSCOPE_HAVE_MEMCHECK_H", None);
    }
    b.compile("cryptoscope_ct");
    println!("cargo:rerun-if-changed=csrc/ct.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!(
        "cargo:rustc-env=CRYPTOSCOPE_C_COMPILER={}",
        first_line(&cc, &["--version"])
    );
    println!("cargo:rustc-env=CRYPTOSCOPE_RUSTC={}", first_line(&rustc, &["-V"]));
    println!(
        "cargo:rustc-env=CRYPTOSCOPE_OPT_LEVEL={}",
        std::env::var("OPT_LEVEL").unwrap_or_default()
    );
    println!(
        "cargo:rustc-env=CRYPTOSCOPE_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
    println!("cargo:rerun-if-env-changed=CC");
    build_heap_preload(&cc);
    println!(
        "cargo:rustc-env=CRYPTOSCOPE_CRATE_VERSIONS={}",
        locked_versions().join(",")
    );
}

/// `name=version` of the provider crates, read from the workspace Cargo.lock, so results
/// name the exact library versions they measured.
fn locked_versions() -> Vec<String> {
    const WANTED: &[&str] = &[
        "oqs-sys",
        "sha2",
        "sha3",
        "blake2",
        "ascon-hash",
        "shake",
        "k12",
        "blake3",
        "pqcrypto-mlkem",
        "pqcrypto-classicmceliece",
        "pqcrypto-ntru",
        "pqcrypto-hqc",
        "pqcrypto-internals",
        "pqcrypto-mldsa",
        "pqcrypto-falcon",
        "pqcrypto-sphincsplus",
        "aws-lc-rs",
        "aws-lc-sys",
        "ml-kem",
        "x25519-dalek",
        "p256",
        "ml-dsa",
        "slh-dsa",
        "ed25519-dalek",
        "rsa",
        "openssl",
        "openssl-sys",
        "camellia",
        "gift-cipher",
        "aes-gcm",
        "chacha20poly1305",
    ];
    let lock = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut found = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if WANTED.contains(&n.as_str()) {
                found.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    // A crate locked at two versions (sha2 0.10 for a dependency, 0.11 for us): the
    // providers use the newest, which Cargo.lock lists last.
    let mut out: Vec<String> = Vec::new();
    for (n, v) in &found {
        if found
            .iter()
            .rev()
            .find(|(m, _)| m == n)
            .is_some_and(|(_, last)| last == v)
        {
            out.push(format!("{n}={v}"));
        }
    }
    out
}

/// Builds the heap-counting preload library of the memory pass (`shim/heapcount.c`) into
/// OUT_DIR; the tool embeds it and writes it out when `cryptoscope memory` runs.
fn build_heap_preload(cc: &str) {
    // The manifest directory at run time: a build script binary can be reused by another
    // checkout that shares the target directory, so a compile-time path would be stale.
    let src = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("shim/heapcount.c");
    println!("cargo:rerun-if-changed={}", src.display());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("libcryptoscope-heap.so");
    let status = Command::new(cc)
        .args(["-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(status.success(), "building {} failed", src.display());
}
