//! The memory pass (`cryptoscope memory`, `run --memory`): heap and stack of every
//! operation, measured in the worker with the heap-counting preload library and a painted
//! stack, apart from timing; and the code size of an implementation where its functions
//! can be told apart in the worker binary.

use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_model::{GateStatus, ResultRow};
use cryptoscope_worker::{Event, OpMemory};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::context::Env;
use crate::workers::Outcome;

/// The memory figures of one operation, or why there are none.
pub type OpOutcome = std::result::Result<OpMemory, (GateStatus, String)>;

/// Writes the embedded preload library where workers can load it (a per-user cache
/// directory, rewritten when its content differs).
pub fn preload_library(env: &Env) -> Result<PathBuf> {
    let dir = env.cache_home().unwrap_or_else(std::env::temp_dir).join("cryptoscope");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let bytes = cryptoscope_worker::memory::HEAP_PRELOAD;
    let path = dir.join(format!("libcryptoscope-heap-{:016x}.so", fnv1a(bytes)));
    if std::fs::read(&path).ok().as_deref() != Some(bytes) {
        let tmp = dir.join(format!(".heap-{}.so", std::process::id()));
        std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(path)
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Runs the memory pass of one gated subject in its worker; one outcome per operation.
pub fn measure(
    cat: &Catalogue,
    d: &Descriptor,
    preload: &Path,
    calls: usize,
    timeout: Duration,
) -> Result<BTreeMap<String, OpOutcome>> {
    let bin = cat.worker(&d.provider).context("worker vanished")?;
    let request = cryptoscope_model::protocol::Request::Memory {
        subject: d.id.clone(),
        calls,
        ops: None,
    };
    let mut out: BTreeMap<String, OpOutcome> = BTreeMap::new();
    let outcome = cat.transport.call_env(
        bin,
        &request,
        &[("LD_PRELOAD", preload.as_os_str())],
        timeout,
        &mut |ev| match ev {
            Event::Memory(m) => {
                out.insert(m.operation.as_str().to_string(), Ok(m));
            }
            Event::OpFailed { operation, error, .. } => {
                out.insert(
                    operation.as_str().to_string(),
                    Err((GateStatus::Fail, format!("failed in the memory pass: {error}"))),
                );
            }
            _ => {}
        },
    );
    if outcome != Outcome::Completed {
        let (status, detail) = match &outcome {
            Outcome::TimedOut(t) => (
                GateStatus::Timeout,
                format!("timed out after {} s in the memory pass", t.as_secs()),
            ),
            Outcome::Crashed(sig) => (GateStatus::Crashed, format!("crashed in the memory pass: {sig}")),
            o => (GateStatus::Crashed, format!("memory pass: {}", o.describe())),
        };
        for o in d.operations() {
            out.entry(o.as_str().to_string())
                .or_insert_with(|| Err((status, detail.clone())));
        }
    }
    Ok(out)
}

/// Puts an operation's memory figures into its row; a failure of the pass makes the row
/// a failure (nothing is reported for a subject that misbehaves).
pub fn apply(row: &mut ResultRow, outcome: Option<&OpOutcome>, code: Option<&(u64, String)>) {
    if let Some((bytes, how)) = code {
        row.code_bytes = Some(*bytes);
        row.code_bytes_method = Some(how.clone());
    }
    match outcome {
        Some(Ok(m)) => {
            row.memory_calls = Some(m.calls);
            row.stack_bytes = Some(m.stack_bytes);
            row.heap_allocations = Some(m.heap.allocations);
            row.heap_frees = Some(m.heap.frees);
            row.heap_bytes = Some(m.heap.bytes_requested);
            row.heap_peak_bytes = Some(m.heap.peak_live);
            row.heap_retained_bytes = Some(m.heap.live_at_end);
        }
        Some(Err((status, detail))) if row.gate == GateStatus::Pass => {
            *row = ResultRow::without_numbers_like(row, *status, detail.clone());
        }
        _ => {}
    }
}

/// Text symbols of a worker binary: name -> size, read once with `nm`.
#[derive(Default)]
pub struct CodeSizes {
    symbols: BTreeMap<PathBuf, Option<Vec<(String, u64)>>>,
}

impl CodeSizes {
    /// The code size of `d`'s implementation with a label saying what was summed, when its
    /// functions carry a prefix of their own in the worker binary.
    pub fn of(&mut self, bin: &Path, d: &Descriptor) -> Option<(u64, String)> {
        let prefix = code_prefix(d)?;
        let syms = self
            .symbols
            .entry(bin.to_path_buf())
            .or_insert_with(|| read_text_symbols(bin));
        let syms = syms.as_ref()?;
        let (n, bytes) = syms
            .iter()
            .filter(|(name, _)| name.starts_with(&prefix))
            .fold((0usize, 0u64), |(n, b), (_, s)| (n + 1, b + s));
        (n > 0).then(|| {
            (
                bytes,
                format!(
                    "text of the {n} functions named {prefix}* in {} (nm; file-local helpers not counted)",
                    bin.file_name().unwrap_or_default().to_string_lossy()
                ),
            )
        })
    }
}

fn read_text_symbols(bin: &Path) -> Option<Vec<(String, u64)>> {
    let out = std::process::Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(bin)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (_addr, size, kind, name) = (f.next()?, f.next()?, f.next()?, f.next()?);
                matches!(kind, "t" | "T")
                    .then(|| Some((name.to_string(), u64::from_str_radix(size, 16).ok()?)))
                    .flatten()
            })
            .collect(),
    )
}

/// The symbol prefix of an implementation's functions in its worker binary, where the
/// implementation has one: PQClean namespaces every global function
/// (`PQCLEAN_MLKEM768_CLEAN_`); liboqs keeps those of the code it imports. AWS-LC and
/// OpenSSL share their code between algorithms and RustCrypto's is inlined, so none.
pub fn code_prefix(d: &Descriptor) -> Option<String> {
    let alg = d.algorithm.as_str();
    let squash = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_uppercase()
    };
    let pq_name = || squash(&alg.replace("Classic-McEliece-", "MCELIECE"));
    match d.provider.as_str() {
        "pqclean" => Some(format!(
            "PQCLEAN_{}_{}_",
            pq_name(),
            d.implementation.to_ascii_uppercase()
        )),
        "liboqs" => {
            if let Some(n) = alg.strip_prefix("ML-KEM-") {
                Some(format!("PQCP_MLKEM_NATIVE_MLKEM{n}_"))
            } else if let Some(n) = alg.strip_prefix("Kyber") {
                Some(format!("pqcrystals_kyber{n}_"))
            } else if let Some(l) = alg.strip_prefix("BIKE-") {
                Some(format!("OQS_KEM_bike_{}_", l.to_ascii_lowercase()))
            } else if alg.starts_with("Classic-McEliece-") || alg.starts_with("HQC-") || alg == "sntrup761" {
                Some(format!("PQCLEAN_{}_", pq_name()))
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_catalogue::descriptor::{Randomness, Sizes};

    fn d(alg: &str, provider: &str, imp: &str) -> Descriptor {
        let sizes = Sizes {
            public_key: 1,
            secret_key: 1,
            ciphertext: 1,
            shared_secret: 1,
        };
        Descriptor::catalogued(alg, provider, imp, "v".into(), "b".into(), sizes, Randomness::Harness)
    }

    #[test]
    fn prefixes_follow_each_librarys_naming() {
        let p = |a, pr, i| code_prefix(&d(a, pr, i));
        assert_eq!(
            p("ML-KEM-768", "pqclean", "clean").as_deref(),
            Some("PQCLEAN_MLKEM768_CLEAN_")
        );
        assert_eq!(
            p("Classic-McEliece-348864f", "pqclean", "avx2").as_deref(),
            Some("PQCLEAN_MCELIECE348864F_AVX2_")
        );
        assert_eq!(
            p("NTRU-HPS-2048-509", "pqclean", "clean").as_deref(),
            Some("PQCLEAN_NTRUHPS2048509_CLEAN_")
        );
        assert_eq!(
            p("Classic-McEliece-8192128", "liboqs", "dispatch").as_deref(),
            Some("PQCLEAN_MCELIECE8192128_")
        );
        assert_eq!(
            p("ML-KEM-512", "liboqs", "dispatch").as_deref(),
            Some("PQCP_MLKEM_NATIVE_MLKEM512_")
        );
        assert_eq!(p("BIKE-L3", "liboqs", "dispatch").as_deref(), Some("OQS_KEM_bike_l3_"));
        assert_eq!(p("X25519", "openssl", "default"), None);
        assert_eq!(p("FrodoKEM-640-AES", "liboqs", "dispatch"), None);
    }
}
