//! Implementations compiled by `cryptoscope build` and `cryptoscope add`: each is a shared
//! library in its own directory under the builds directory, with a manifest saying what it
//! is. The `build` provider's worker loads each library with `RTLD_LOCAL`; every symbol
//! but the shim's `cs_*` entry points is hidden, so builds cannot see one another.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Name of the manifest file in each build directory.
pub const MANIFEST: &str = "build.json";
/// Name of the library in each build directory.
pub const LIBRARY: &str = "libkem.so";
/// The same code with timing probes around the monitored internal functions.
pub const PROBES_LIBRARY: &str = "libkem-probes.so";
/// Set to 1 in a worker's environment to load the probed libraries instead.
pub const PROBES_ENV: &str = "CRYPTOSCOPE_PROBES";

/// What one build is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Catalogue name of the algorithm it claims to implement.
    pub algorithm: String,
    /// Implementation label, unique per algorithm: `<variant>-<cc><major>-<flags>`.
    pub label: String,
    /// "pqclean" (sources shipped in a pqcrypto crate) or "user" (`cryptoscope add`).
    pub origin: String,
    /// Source directory compiled.
    pub source: String,
    /// clean, avx2, or the user's directory name.
    pub variant: String,
    /// Compiler command and its first `--version` line.
    pub cc: String,
    pub cc_version: String,
    pub flags: Vec<String>,
    /// `CRYPTO_ALGNAME` from api.h.
    pub algname: String,
    pub public_key: usize,
    pub secret_key: usize,
    pub ciphertext: usize,
    pub shared_secret: usize,
    /// CPU features the code needs (e.g. avx2 builds).
    #[serde(default)]
    pub requires: Vec<String>,
    /// Version of the crate or directory the sources came from.
    pub source_version: String,
    /// Monitored functions wrapped by timing probes in [`PROBES_LIBRARY`].
    #[serde(default)]
    pub probes: Vec<String>,
    /// Why other monitored functions found in the sources are not probed.
    #[serde(default)]
    pub probe_notes: Vec<String>,
}

impl Manifest {
    /// The `build` column of results: compiler, version and flags.
    pub fn build_line(&self) -> String {
        let name = std::path::Path::new(&self.cc)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let cc = if self.cc_version.contains(&name) {
            self.cc_version.clone()
        } else {
            format!("{} ({})", self.cc, self.cc_version)
        };
        format!("{cc} {}", self.flags.join(" ")).trim_end().to_string()
    }
}

/// The builds directory: `$CRYPTOSCOPE_BUILDS`, else `~/.local/share/cryptoscope/builds`.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CRYPTOSCOPE_BUILDS") {
        return PathBuf::from(d);
    }
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("cryptoscope/builds")
}

/// Every build with a readable manifest: (directory, manifest), sorted by directory.
pub fn list() -> Vec<(PathBuf, Manifest)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir()) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(text) = std::fs::read_to_string(p.join(MANIFEST)) else {
            continue;
        };
        if let Ok(m) = serde_json::from_str::<Manifest>(&text) {
            out.push((p, m));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
