//! Helpers shared by the fuzz targets: a per-process scratch directory for the parsers
//! that take paths, and the repository's own vector files (compiled in, so a target binary
//! does not depend on where it runs).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const PREFIX: &str = "cryptoscope-fuzz-";

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// This process's scratch directory: `/dev/shm/cryptoscope-fuzz-PID` (memory-backed) when
/// `/dev/shm` exists, else under the system temporary directory. Created on first use;
/// removed at exit (libFuzzer ends with `exit()`); directories left by processes that no
/// longer exist (a crash ends with `_exit`) are removed when the next one starts.
pub fn scratch() -> &'static Path {
    DIR.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        remove_stale(&base);
        let dir = base.join(format!("{PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cannot create the fuzz scratch directory");
        // SAFETY: registering a plain `extern "C" fn` without arguments.
        unsafe { libc::atexit(remove_scratch) };
        dir
    })
}

extern "C" fn remove_scratch() {
    if let Some(d) = DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

fn remove_stale(base: &Path) {
    let Ok(rd) = std::fs::read_dir(base) else { return };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Writes `data` to `path` (relative to the scratch directory), creating its directories.
pub fn put(rel: &str, data: &[u8]) -> PathBuf {
    let p = scratch().join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("cannot create a scratch subdirectory");
    }
    std::fs::write(&p, data).expect("cannot write a scratch file");
    p
}

/// A fresh, empty subdirectory of the scratch directory.
pub fn fresh_dir(rel: &str) -> PathBuf {
    let p = scratch().join(rel);
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).expect("cannot create a scratch subdirectory");
    p
}

/// The JSON files under `vectors/` that `validate_dir` reads, as the repository has them:
/// (path relative to the vectors directory, contents).
pub const VECTOR_FILES: &[(&str, &str)] = &[
    (
        "kem/liboqs-kats.json",
        include_str!("../../vectors/kem/liboqs-kats.json"),
    ),
    (
        "kem/liboqs-0.13.0-kats.json",
        include_str!("../../vectors/kem/liboqs-0.13.0-kats.json"),
    ),
    (
        "kex/x25519-rfc7748.json",
        include_str!("../../vectors/kex/x25519-rfc7748.json"),
    ),
    ("kex/p256-ecdh.json", include_str!("../../vectors/kex/p256-ecdh.json")),
    (
        "kex/ffdhe2048-rfc7919.json",
        include_str!("../../vectors/kex/ffdhe2048-rfc7919.json"),
    ),
    (
        "block-ciphers/gift.json",
        include_str!("../../vectors/block-ciphers/gift.json"),
    ),
    (
        "block-ciphers/camellia.json",
        include_str!("../../vectors/block-ciphers/camellia.json"),
    ),
];

/// Splits fuzz input into its first byte (a selector) and the rest.
pub fn selector(data: &[u8]) -> Option<(u8, &[u8])> {
    data.split_first().map(|(s, rest)| (*s, rest))
}
