//! Small helpers: UTC timestamps and run ids, the vectors directory.

use crate::context::Env;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Civil date from days since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Milliseconds since the Unix epoch, now (0 on a clock set before 1970).
pub fn unix_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// (RFC 3339 timestamp with milliseconds, compact form for ids) of now, UTC.
pub fn now_utc() -> (String, String) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let ms = now.subsec_millis();
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    let (h, mi, s) = (t / 3600, t % 3600 / 60, t % 60);
    (
        // Milliseconds, so runs started within one second still order by time.
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z"),
        format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z"),
    )
}

/// A run id: UTC time plus 4 hex digits of entropy ("20261122T140501Z-3fa2").
pub fn run_id() -> String {
    let mut b = [0u8; 2];
    cryptoscope_catalogue::rng::fill(&mut b);
    format!("{}-{:02x}{:02x}", now_utc().1, b[0], b[1])
}

/// The vectors directory: `--vectors`, `$CRYPTOSCOPE_VECTORS`, next to the build tree,
/// or the source tree this binary was built from.
pub fn vectors_dir(env: &Env, flag: Option<&Path>) -> Result<PathBuf> {
    let dir = find_vectors(env, flag)?;
    cryptoscope_catalogue::vectors::validate_dir(&dir).map_err(|e| crate::ui::UsageError(e.to_string()))?;
    Ok(dir)
}

fn find_vectors(env: &Env, flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        if !p.exists() {
            // `--vectors` takes a vector file or the vectors directory: say which is missing.
            let hint = match p.file_name().and_then(|n| n.to_str()) {
                Some(n) if n.contains('.') => {
                    " (vector files of the repository are under vectors/, e.g. vectors/hash/cavp/)"
                }
                _ => "",
            };
            bail!(crate::ui::UsageError(format!(
                "--vectors {}: no such file or directory{hint}",
                p.display()
            )));
        }
        if !p.join("kem").is_dir() {
            bail!(crate::ui::UsageError(format!(
                "{} is not a vectors directory (no kem/ inside)",
                p.display()
            )));
        }
        return Ok(p.to_path_buf());
    }
    let mut candidates = Vec::new();
    if let Some(p) = env.path("CRYPTOSCOPE_VECTORS") {
        candidates.push(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            candidates.push(dir.join("../../vectors"));
            candidates.push(dir.join("../share/cryptoscope/vectors"));
        }
    }
    candidates.push(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors")));
    for c in candidates {
        if c.join("kem").is_dir() {
            return Ok(c.canonicalize().unwrap_or(c));
        }
    }
    bail!(crate::ui::UsageError(
        "known-answer vectors not found; pass --vectors DIR (the repository's vectors/ directory)".into()
    ))
}

/// Checks that `path` can be written (creating its directory), without leaving an empty
/// file behind; the message is a one-line usage error.
pub fn check_writable(path: &Path) -> std::result::Result<PathBuf, String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil(0), (1970, 1, 1));
        // 2000-03-01 is day 11,017 since the epoch; 2024-02-29 is day 19,782.
        assert_eq!(super::civil(11_017), (2000, 3, 1));
        assert_eq!(super::civil(19_782), (2024, 2, 29));
    }
}

/// A private temporary directory: mode 0700, a name no other process can predict, removed
/// with everything in it when dropped (keys, certificates and tool output never outlive the
/// command, and other users cannot read them while it runs, even when we run as root).
pub struct PrivateDir {
    pub path: PathBuf,
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        zero_files(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Overwrites every regular file under `dir` with zeros (keys, certificates' private
/// halves, key material for the audit), so their bytes do not survive in freed disk blocks
/// or the page cache after removal. Symbolic links are not followed.
fn zero_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let p = e.path();
        if t.is_dir() {
            zero_files(&p);
        } else if t.is_file() {
            if let (Ok(meta), Ok(mut f)) = (e.metadata(), std::fs::OpenOptions::new().write(true).open(&p)) {
                use std::io::Write;
                let zeros = vec![0u8; 64 * 1024];
                let mut left = meta.len();
                while left > 0 {
                    let n = left.min(zeros.len() as u64) as usize;
                    if f.write_all(&zeros[..n]).is_err() {
                        break;
                    }
                    left -= n as u64;
                }
                let _ = f.sync_data();
            }
        }
    }
}

/// Creates a [`PrivateDir`] under the system temporary directory.
pub fn private_temp_dir(what: &str) -> Result<PrivateDir> {
    use std::os::unix::fs::DirBuilderExt;
    let mut r = [0u8; 8];
    cryptoscope_catalogue::rng::fill(&mut r);
    let path = std::env::temp_dir().join(format!(
        "cryptoscope-{what}-{}-{}",
        std::process::id(),
        r.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&path)
        .with_context(|| format!("cannot create a private temporary directory {}", path.display()))?;
    Ok(PrivateDir { path })
}

/// Where a network driver keeps keys, configurations and logs: the directory the user
/// names (`--workdir`, created 0700 if missing, kept afterwards), or a fresh
/// [`PrivateDir`] that is wiped and removed when the returned guard drops. Hold the guard
/// for as long as the path is used.
pub fn work_dir(named: Option<&Path>, what: &str) -> Result<(PathBuf, Option<PrivateDir>)> {
    match named {
        Some(d) => {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", d.display()))?;
            Ok((d.to_path_buf(), None))
        }
        None => {
            let p = private_temp_dir(what)?;
            Ok((p.path.clone(), Some(p)))
        }
    }
}

#[cfg(test)]
mod private_dir_tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_directories_are_0700_unique_and_wiped() {
        let a = private_temp_dir("test").unwrap();
        let b = private_temp_dir("test").unwrap();
        assert_ne!(a.path, b.path);
        let mode = std::fs::metadata(&a.path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let key = a.path.join("sub").join("key.pem");
        std::fs::create_dir_all(key.parent().unwrap()).unwrap();
        std::fs::write(&key, b"secret key bytes").unwrap();
        // A hard link outside lets the test see what became of the file's bytes.
        let outside = std::env::temp_dir().join(format!("cs-wipe-check-{}", std::process::id()));
        let _ = std::fs::remove_file(&outside);
        std::fs::hard_link(&key, &outside).unwrap();
        let path = a.path.clone();
        drop(a);
        assert!(!path.exists());
        assert_eq!(
            std::fs::read(&outside).unwrap(),
            vec![0u8; 16],
            "the key's bytes were zeroed"
        );
        std::fs::remove_file(&outside).unwrap();
    }
}
