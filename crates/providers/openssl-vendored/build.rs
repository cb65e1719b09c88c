//! Builds each vendored OpenSSL (openssl-src: `Configure no-shared`, `make build_libs`,
//! about 1.5 min per version on 2 cores) into OUT_DIR, compiles cryptoscope-openssl-evp's
//! shim against its headers, and links each worker binary to its own pair alone
//! (`rustc-link-arg-bin`), so the versions never meet in one process.
//!
//! A version already built with the same sources is reused (a stamp beside it), so a change
//! to the shim recompiles the shim only; so is one that another build of this package in
//! the same build directory made (`cargo clippy` runs this script in an OUT_DIR of its own). A version whose build fails does not stop the
//! others: its worker is linked to the system libcrypto instead, marked unbuilt, and answers
//! every request with the reason (`cryptoscope` reports that provider as failed).
use std::path::{Path, PathBuf};

/// A vendored version: its worker binary, provider name, openssl-src's version, and a
/// function that builds it into a directory, giving (include dir, lib dir).
struct Version {
    bin: &'static str,
    provider: &'static str,
    source: &'static str,
    build: fn(&Path) -> Result<(PathBuf, PathBuf), String>,
}

macro_rules! version {
    ($krate:ident, $bin:literal, $provider:literal) => {
        Version {
            bin: $bin,
            provider: $provider,
            source: $krate::version(),
            build: |dir| {
                let a = $krate::Build::new()
                    .out_dir(dir)
                    // Nothing under the build tree is read at run time: no openssl.cnf
                    // of the machine's (Debian's 3.0 one) is loaded by another version.
                    .openssl_dir(dir.join("no-config"))
                    .try_build()?;
                Ok((a.include_dir().to_path_buf(), a.lib_dir().to_path_buf()))
            },
        }
    };
}

/// The versions, one line each.
fn versions() -> Vec<Version> {
    vec![
        version!(openssl_src_35, "cryptoscope-worker-openssl35", "openssl-3.5"),
        version!(openssl_src_40, "cryptoscope-worker-openssl40", "openssl-4.0"),
    ]
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    // Read at run time: a build script compiled in another checkout that shares the target
    // directory (CI clones into a temporary directory) must not carry that checkout's path.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let evp = Path::new(&manifest).join("../openssl-evp");
    println!("cargo:rerun-if-changed={}", evp.join("shim").display());
    let shim = shim_files(&evp);
    for f in &shim {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    for v in &versions() {
        let dir = out.join(v.provider);
        match cached_or_build(v, &dir) {
            Ok((include, lib)) => {
                let lib_shim = compile_shim(v, &shim, &dir, Some(&include), "vendored static libcrypto", "");
                link(v.bin, &[lib_shim, lib.join("libcrypto.a")], &[]);
            }
            Err(e) => {
                let reason = e
                    .lines()
                    .rfind(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_string();
                println!("cargo:warning={} ({}) did not build: {reason}", v.provider, v.source);
                let lib_shim = compile_shim(
                    v,
                    &shim,
                    &dir,
                    None,
                    "system libcrypto (vendored build failed)",
                    &reason,
                );
                link(v.bin, &[lib_shim], &["-lcrypto"]);
            }
        }
    }
}

/// The version's install directory, built unless a stamp says these sources already were.
fn cached_or_build(v: &Version, dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let (include, lib) = (dir.join("install/include"), dir.join("install/lib"));
    let stamp = dir.join("built-from");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == v.source) && lib.join("libcrypto.a").is_file() {
        return Ok((include, lib));
    }
    let built = match built_beside(v, dir) {
        Some(other) => {
            copy_tree(&other.join("install"), &dir.join("install"))
                .map_err(|e| format!("copying {}: {e}", other.display()))?;
            (include, lib)
        }
        None => (v.build)(dir)?,
    };
    std::fs::write(&stamp, v.source).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(built)
}

/// The same version built from the same sources by another build of this package in the
/// same build directory (so for the same target and profile): `cargo clippy` and
/// `cargo check` run this script in an OUT_DIR of their own, and need not compile OpenSSL
/// again (minutes) when `cargo build` already did.
fn built_beside(v: &Version, dir: &Path) -> Option<PathBuf> {
    let builds = dir.parent()?.parent()?.parent()?;
    let prefix = format!("{}-", std::env::var("CARGO_PKG_NAME").ok()?);
    std::fs::read_dir(builds)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path().join("out").join(v.provider))
        .filter(|d| d != dir)
        .find(|d| {
            std::fs::read_to_string(d.join("built-from")).is_ok_and(|s| s == v.source)
                && d.join("install/lib/libcrypto.a").is_file()
        })
}

/// Copies a directory tree (files and directories; links as what they point to).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)?;
        }
    }
    Ok(())
}

/// Compiles the shim for one version into its own static library; its path.
fn compile_shim(
    v: &Version,
    files: &[PathBuf],
    dir: &Path,
    include: Option<&Path>,
    how: &str,
    unbuilt: &str,
) -> PathBuf {
    let shim_dir = dir.join("shim");
    std::fs::create_dir_all(&shim_dir).expect("shim dir");
    let name = format!("cs_{}", v.provider.replace(['-', '.'], "_"));
    let mut cc = cc::Build::new();
    cc.files(files)
        .define("CS_PROVIDER", format!("\"{}\"", v.provider).as_str())
        .define("CS_BUILD", format!("\"{how}, openssl-src {}\"", v.source).as_str())
        .out_dir(&shim_dir)
        .cargo_metadata(false)
        .warnings(true);
    if let Some(i) = include {
        cc.include(i);
    }
    if !unbuilt.is_empty() {
        cc.define(
            "CS_UNBUILT",
            format!("\"{}\"", unbuilt.replace(['"', '\\'], "'")).as_str(),
        );
    }
    cc.compile(&name);
    shim_dir.join(format!("lib{name}.a"))
}

/// Links `bin` to these archives (in order) and libraries.
fn link(bin: &str, archives: &[PathBuf], libs: &[&str]) {
    for a in archives {
        println!("cargo:rustc-link-arg-bin={bin}={}", a.display());
    }
    for l in libs {
        println!("cargo:rustc-link-arg-bin={bin}={l}");
    }
}

/// cryptoscope-openssl-evp's C files (`shim/*.c`), in name order: the same set
/// crates/providers/openssl/build.rs compiles.
fn shim_files(evp: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(evp.join("shim"))
        .expect("the openssl-evp shim directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v
}
