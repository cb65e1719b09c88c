//! `cryptoscope tahoe`: the Tahoe-LAFS study. Builds (once) an isolated Python environment
//! with Tahoe-LAFS from PyPI and our Python package, runs the study driver in it
//! (`python -m cryptoscope.tahoe`, which owns the grid), then stores, prints and reports
//! the results like any run.

use anyhow::{bail, Context, Result};
use clap::Args;
use cryptoscope_engine::context::{Ctx, Env};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Tahoe-LAFS release the study runs (what `tahoe.md` checked on our machines).
pub const TAHOE_VERSION: &str = "1.20.0";

#[derive(Args, Clone)]
pub struct TahoeArgs {
    /// Hashes to compare, comma-separated: `sha256d` is Tahoe-LAFS's own (stock, only
    /// timed); any name of cryptoscope.hashlib is swapped in through our package
    /// (sha3-256, blake2b-256, blake3, sha512, k12, ...; `sha256d-ours` is our SHA-256d,
    /// which must give stock's caps), including the 2010 study's SHA-3 second-round
    /// candidates: blake256_r2, bmw256, cubehash256, echo256, fugue256, groestl256_r2,
    /// hamsi256, jh256_r2, keccak256_r2, luffa256, shabal256, shavite3_256, simd256,
    /// skein512_256.
    #[arg(long, default_value = "sha256d,sha3-256,blake2b-256,blake3", value_name = "LIST")]
    pub hash: String,
    /// quick: 3×1 B, 5×1 KB, 3×1 MB, 1×8 MB; paper: the 2010 study's 100×1 B, 100×1 KB,
    /// 50×1 MB, 5×100 MB, 1×1 GB.
    #[arg(long, default_value = "quick", value_parser = ["quick", "paper"])]
    pub profile: String,
    /// Files instead of the profile's: COUNTxBYTES,... (e.g. 10x1000000,1x50000000).
    #[arg(long, value_name = "LIST")]
    pub vectors: Option<String>,
    /// Repeat every vector N times (fresh files each time); medians are reported.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Storage nodes in the grid.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub storage_nodes: u32,
    /// Erasure coding: shares needed,happy,total.
    #[arg(long, default_value = "2,3,3", value_name = "N,H,T")]
    pub shares: String,
    /// Immutable segment size in bytes (Tahoe-LAFS 1.20: 1 MiB; the 2010 study: 131072).
    #[arg(long, value_name = "BYTES")]
    pub segment_size: Option<u64>,
    /// Storage over Foolscap (the 2010 transport) instead of HTTPS.
    #[arg(long)]
    pub foolscap: bool,
    /// Random file contents from this seed (default: fresh each run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The Python environment (default: $CRYPTOSCOPE_TAHOE_VENV or
    /// ~/.cache/cryptoscope/tahoe-venv); built when missing or out of date.
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    /// Rebuild the environment even if it looks current.
    #[arg(long)]
    pub reinstall: bool,
    /// Keep the grid's directories and logs here (default: a temporary directory, removed).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Also write the driver's full output (every repeat, every process) as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[arg(long = "db", value_name = "PATH|URL", help = cryptoscope_engine::args::DB_HELP, long_help = cryptoscope_engine::args::DB_LONG_HELP)]
    pub db: Option<String>,
}

/// The environment's directory: `$CRYPTOSCOPE_TAHOE_VENV`, else in the user's cache.
fn default_venv(env: &Env) -> PathBuf {
    if let Some(p) = env.path("CRYPTOSCOPE_TAHOE_VENV") {
        return p;
    }
    let cache = env
        .path("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| env.path("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("cryptoscope/tahoe-venv")
}

/// Our Python package's source: `$CRYPTOSCOPE_PYTHON_SRC`, or the tree this binary was
/// built from.
fn package_source(env: &Env) -> Result<PathBuf> {
    let p = env
        .path("CRYPTOSCOPE_PYTHON_SRC")
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../python")));
    if !p.join("pyproject.toml").is_file() {
        bail!(cryptoscope_engine::ui::UsageError(format!(
            "cryptoscope's Python package not found at {} (set CRYPTOSCOPE_PYTHON_SRC to the repository's crates/python)",
            p.display()
        )));
    }
    Ok(p.canonicalize().unwrap_or(p))
}

/// A fingerprint of the package's sources (relative paths and contents, so another checkout
/// of the same sources shares the environment) and this tool's version: the environment is
/// rebuilt when it changes.
fn stamp(src: &Path) -> String {
    fn walk(base: &Path, dir: &Path, h: &mut std::collections::hash_map::DefaultHasher) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for p in entries {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "__pycache__" || name == "target" || name.ends_with(".so") {
                continue;
            }
            if p.is_dir() {
                walk(base, &p, h);
            } else if let Ok(b) = std::fs::read(&p) {
                p.strip_prefix(base).unwrap_or(&p).hash(h);
                b.hash(h);
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    walk(src, src, &mut h);
    format!(
        "tahoe-lafs=={TAHOE_VERSION} cryptoscope {} sources {:016x}\n",
        env!("CARGO_PKG_VERSION"),
        h.finish()
    )
}

fn run_step(what: &str, cmd: &mut Command) -> Result<()> {
    let out = cmd.output().with_context(|| format!("cannot start {what}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(12).collect();
        bail!(
            "{what} failed ({}):\n{}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Ok(())
}

/// The environment's Python, built or refreshed when needed.
fn ensure_venv(dir: &Path, reinstall: bool, ctx: &Ctx) -> Result<PathBuf> {
    let quiet = ctx.quiet;
    let src = package_source(&ctx.env)?;
    let python = dir.join("bin/python");
    let stamp_file = dir.join(".cryptoscope-stamp");
    let want = stamp(&src);
    let current = std::fs::read_to_string(&stamp_file).ok();
    if !reinstall && python.exists() && current.as_deref() == Some(want.as_str()) {
        return Ok(python);
    }
    let say = |m: &str| {
        if !quiet {
            errln!(ctx, "tahoe: {m}");
        }
    };
    if !python.exists() {
        say(&format!(
            "building the environment {} (Tahoe-LAFS {TAHOE_VERSION} from PyPI and cryptoscope's package; about a minute, once)",
            dir.display()
        ));
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| cryptoscope_engine::ui::usage(format!("cannot create {}: {e}", parent.display())))?;
        }
        run_step(
            "python3 -m venv (Debian: apt-get install python3-venv)",
            Command::new("python3").arg("-m").arg("venv").arg(dir),
        )?;
    } else {
        say(&format!("updating cryptoscope's package in {}", dir.display()));
    }
    let pip = dir.join("bin/pip");
    run_step(
        &format!("pip install tahoe-lafs=={TAHOE_VERSION}"),
        Command::new(&pip).args(["install", "-q", &format!("tahoe-lafs=={TAHOE_VERSION}")]),
    )?;
    run_step(
        "pip install of cryptoscope's Python package (needs cargo)",
        Command::new(&pip)
            .args(["install", "-q", "--force-reinstall", "--no-deps"])
            .arg(&src),
    )?;
    std::fs::write(&stamp_file, want)
        .map_err(|e| cryptoscope_engine::ui::usage(format!("cannot write {}: {e}", stamp_file.display())))?;
    Ok(python)
}

/// A file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the study and returns the driver's output and exit status (0 done, 1 a check
/// failed or interrupted: what was measured is still returned; 2 the driver rejected its
/// arguments and has said why).
pub fn run_driver(a: &TahoeArgs, ctx: &Ctx) -> Result<(serde_json::Value, i32)> {
    let quiet = ctx.quiet;
    if a.repeat == 0 {
        bail!(cryptoscope_engine::ui::UsageError("--repeat must be at least 1".into()));
    }
    if a.storage_nodes == 0 {
        bail!(cryptoscope_engine::ui::UsageError(
            "--storage-nodes must be at least 1".into()
        ));
    }
    let venv = a.venv.clone().unwrap_or_else(|| default_venv(&ctx.env));
    let python = ensure_venv(&venv, a.reinstall, ctx)?;
    let out = TempFile(std::env::temp_dir().join(format!("cryptoscope-tahoe-{}.json", std::process::id())));
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "cryptoscope.tahoe", "--hash", &a.hash, "--profile", &a.profile])
        .args(["--repeat", &a.repeat.to_string()])
        .args(["--storage-nodes", &a.storage_nodes.to_string(), "--shares", &a.shares])
        .arg("--json")
        .arg(&out.0);
    if let Some(v) = &a.vectors {
        cmd.args(["--vectors", v]);
    }
    if let Some(s) = a.segment_size {
        cmd.args(["--segment-size", &s.to_string()]);
    }
    if a.foolscap {
        cmd.arg("--foolscap");
    }
    if let Some(s) = a.seed {
        cmd.args(["--seed", &s.to_string()]);
    }
    if let Some(w) = &a.workdir {
        cmd.arg("--workdir").arg(w);
    }
    if quiet {
        cmd.arg("--quiet");
    }
    // Ctrl-C reaches the driver too (same process group): it stops the grid and writes what
    // it measured; wait for it rather than dying first.
    // SAFETY: ignoring SIGINT has no memory-safety preconditions.
    let old = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = cmd.status();
    // SAFETY: restoring the previous disposition.
    unsafe { libc::signal(libc::SIGINT, old) };
    let status = status.with_context(|| format!("cannot start {}", python.display()))?;
    let code = status.code().unwrap_or(1);
    if code == 2 {
        // The driver has said why, in one line.
        return Ok((serde_json::Value::Null, 2));
    }
    let text = std::fs::read_to_string(&out.0).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|_| anyhow::anyhow!("the Tahoe-LAFS driver ended ({status}) without results"))?;
    Ok((v, if code == 0 { 0 } else { 1 }))
}
