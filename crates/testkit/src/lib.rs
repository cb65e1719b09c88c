//! What cryptoscope's tests share across crates (a dev-dependency only).
//!
//! * [`skip`] and [`needs_setup`]: a test that cannot run says why and is *counted* as
//!   skipped. libtest has no run-time skip, so the test returns early (libtest counts it
//!   as passed) and records one line in the file named by `CRYPTOSCOPE_TEST_SKIPS`;
//!   `scripts/test.sh` moves those from "passed" to "skipped" in its closing line. With
//!   `CI=true`, a prerequisite that `scripts/setup.sh` installs being absent is a failure.
//! * [`replay`]: the recording's command line, a stored run's rows checked whole, and what a
//!   resumed run must keep, for the replay tests in-process and through the binary.
//! * [`Samples`]: seeded sample streams (noise, heavy tails, bimodality, drift, level
//!   shifts) for testing a verdict on samples the test controls.
//! * [`serial`]: the lock a test holds while it binds ports, starts daemons or creates
//!   network namespaces, shared by every test process of the machine.

pub mod replay;

use std::io::Write;

/// Environment variable naming the file where skipped tests are recorded, one per line.
pub const SKIPS_ENV: &str = "CRYPTOSCOPE_TEST_SKIPS";

/// The running test's name (libtest names each test's thread after the test).
fn test_name() -> String {
    std::thread::current().name().unwrap_or("?").to_string()
}

fn on_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

fn record(why: &str) {
    let line = format!("{}: {}", test_name(), why.replace('\n', " "));
    // Not captured by libtest (it captures the print macros only): seen in every run.
    let _ = writeln!(std::io::stderr(), "skipped: {line}");
    if let Ok(path) = std::env::var(SKIPS_ENV) {
        // One short write in append mode: lines from parallel tests do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// Records that the current test is skipped because of something the machine lacks and
/// setup cannot give it (a CPU feature, root in a container): the caller then returns.
pub fn skip(why: &str) {
    record(why);
}

/// Records that the current test is skipped because `what` is missing, something
/// `scripts/setup.sh` installs; on CI (`CI=true`) that is a failure instead.
pub fn needs_setup(what: &str) {
    assert!(
        !on_ci(),
        "{what} is missing, and scripts/setup.sh installs it: on CI (CI=true) this test must run"
    );
    record(&format!("{what} is missing (scripts/setup.sh installs it)"));
}

/// Whether this process runs as root; if not, records the skip (a failure on CI, which
/// runs as root) and the caller returns after checking what a user without root gets.
pub fn needs_root(what: &str) -> bool {
    if is_root() {
        return true;
    }
    assert!(!on_ci(), "{what} needs root, and CI runs as root: this test must run");
    record(&format!("{what} needs root"));
    false
}

/// Whether this process runs as root; a test that needs root and does not have it is
/// skipped off CI (a developer's own account) and fails on CI, which runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { geteuid() == 0 }
}

extern "C" {
    fn geteuid() -> u32;
}

/// Environment variable naming the lock file of [`serial`] (default: `cryptoscope-tests.lock`
/// in the temporary directory).
pub const LOCK_ENV: &str = "CRYPTOSCOPE_TEST_LOCK";

/// Held while a test binds ports, starts daemons or creates network namespaces (one
/// `let _serial = serial();` at its top): such tests run one at a time, within a test binary
/// (a mutex) and across test binaries running at once (an exclusive lock on one file, as
/// `scripts/test.sh` runs them, `scripts/test-binaries.py`), while all other tests run in
/// parallel. A test that panics releases it; the lock file is never removed.
pub fn serial() -> Serial {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::var_os(LOCK_ENV)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("cryptoscope-tests.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("the tests' lock file {}: {e}", path.display()));
    // Blocks until no other test process holds it; released when the file is closed.
    file.lock()
        .unwrap_or_else(|e| panic!("locking {}: {e}", path.display()));
    Serial {
        _file: file,
        _guard: guard,
    }
}

/// The lock of [`serial`]: held until dropped (the file first, then the mutex).
#[must_use = "the lock is released when this is dropped"]
pub struct Serial {
    _file: std::fs::File,
    _guard: std::sync::MutexGuard<'static, ()>,
}

/// A seeded stream of synthetic samples: xorshift64* for uniforms, Box–Muller for normals.
/// The same seed gives the same samples on every machine.
#[derive(Debug, Clone)]
pub struct Samples {
    state: u64,
}

impl Samples {
    pub fn new(seed: u64) -> Samples {
        // Zero is xorshift's fixed point; mix the seed so that nearby seeds differ at once.
        Samples {
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    /// A uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let x = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal.
    pub fn normal(&mut self) -> f64 {
        let u = self.uniform().max(f64::MIN_POSITIVE);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// A timing-like sample: `base` plus normal noise of `sd`, plus, with probability
    /// `tail_p`, an interruption of an exponential length with mean `tail_mean` (the heavy
    /// right tail of a preempted call). Never below zero.
    pub fn timing(&mut self, base: f64, sd: f64, tail_p: f64, tail_mean: f64) -> f64 {
        let mut x = base + sd * self.normal();
        if self.uniform() < tail_p {
            x += -tail_mean * (1.0 - self.uniform()).ln();
        }
        x.max(0.0)
    }

    /// `n` timing samples (see [`Samples::timing`]).
    pub fn timings(&mut self, n: usize, base: f64, sd: f64, tail_p: f64, tail_mean: f64) -> Vec<f64> {
        (0..n).map(|_| self.timing(base, sd, tail_p, tail_mean)).collect()
    }

    /// Bimodal: `a` or `b` (each with noise `sd`), `b` with probability `p_b`.
    pub fn bimodal(&mut self, a: f64, b: f64, sd: f64, p_b: f64) -> f64 {
        let m = if self.uniform() < p_b { b } else { a };
        (m + sd * self.normal()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream_and_the_moments_are_right() {
        let a = Samples::new(7).timings(1000, 100.0, 5.0, 0.0, 0.0);
        let b = Samples::new(7).timings(1000, 100.0, 5.0, 0.0, 0.0);
        assert_eq!(a, b);
        let mut s = Samples::new(1);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| s.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Standard error of the mean is 1/sqrt(n) ~ 0.003; of the variance ~ 0.0045.
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
    }
}
