//! Helpers shared by the integration tests: the built binaries and the vectors.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The `cryptoscope` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cryptoscope"))
}

/// A provider's worker binary (built by `cargo build --workspace` next to `cryptoscope`).
pub fn worker(provider: &str) -> PathBuf {
    let p = bin()
        .parent()
        .unwrap()
        .join(format!("cryptoscope-worker-{}", provider.replace(['-', '.'], "")));
    assert!(
        p.is_file(),
        "{} is missing: run `cargo build --release --workspace` first",
        p.display()
    );
    p
}

/// The repository's known-answer data.
pub fn vectors() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
}

/// `cryptoscope` with the repository's vectors.
pub fn cryptoscope() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(bin());
    c.env("CRYPTOSCOPE_VECTORS", vectors());
    // Never write into the user's own results database.
    // Nor see the machine's own builds (`cryptoscope build`): tests that want builds set
    // their own directory.
    c.env(
        "CRYPTOSCOPE_BUILDS",
        std::env::temp_dir().join(format!("cryptoscope-test-no-builds-{}", std::process::id())),
    );
    // One database per test (libtest names each test's thread after it): tests of one
    // file run in parallel and must not see each other's runs and audits.
    c.env("CRYPTOSCOPE_DB", test_db());
    c
}

/// The default results database of the running test (see [`cryptoscope`]).
pub fn test_db() -> PathBuf {
    let test = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    std::env::temp_dir().join(format!("cryptoscope-test-{}-{test}.db", std::process::id()))
}

/// Runs a worker and returns its JSON events and exit status.
pub fn worker_events(provider: &str, args: &[&str]) -> (Vec<serde_json::Value>, std::process::Output) {
    let out = Command::new(worker(provider)).args(args).output().expect("worker runs");
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect();
    (events, out)
}

/// The descriptors a worker offers.
pub fn describe(provider: &str) -> Vec<serde_json::Value> {
    let (ev, out) = worker_events(provider, &["describe"]);
    assert!(out.status.success());
    ev.into_iter()
        .find(|e| e["type"] == "describe")
        .expect("describe event")["subjects"]
        .as_array()
        .unwrap()
        .clone()
}

/// A copy of the repository's vectors in `dir` with the published `single` digest of
/// `algorithm` in `liboqs-kats.json` altered: implementations of it must now fail the gate.
pub fn vectors_with_wrong_digest(dir: &std::path::Path, algorithm: &str) {
    for sub in ["kem", "kex"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for e in std::fs::read_dir(vectors().join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(sub).join(e.file_name())).unwrap();
        }
    }
    let path = dir.join("kem/liboqs-kats.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let d = v[algorithm]["single"].as_str().unwrap().to_string();
    let flipped = format!("{}{}", if d.starts_with('0') { '1' } else { '0' }, &d[1..]);
    v[algorithm]["single"] = serde_json::Value::String(flipped);
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
}

/// A process's standard error as text.
pub fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A process's standard output as text.
pub fn stdout_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A copy of the repository's vectors directory at `dir`, for tests that break a file.
pub fn vectors_copy(dir: &std::path::Path) {
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(vectors())
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `cryptoscope verify ARGS --vectors DIR`.
pub fn verify_with_vectors(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    cryptoscope()
        .arg("verify")
        .args(args)
        .arg("--vectors")
        .arg(dir)
        .output()
        .unwrap()
}

/// Held by a test that binds ports, starts daemons or creates network namespaces: such
/// tests run one at a time, in this file and in every other test binary running at the same
/// time, while all other tests run in parallel (`cryptoscope_testkit::serial`).
pub fn serial() -> cryptoscope_testkit::Serial {
    cryptoscope_testkit::serial()
}

pub use cryptoscope_testkit::replay::Rows;

/// The latest run in `db` (`export latest`) and its rows, after checking the database's
/// integrity (SQLite) and that each row is whole
/// ([`cryptoscope_testkit::replay::rows_of`]). None when no run is stored yet.
pub fn stored(db: &str) -> Option<(String, Rows)> {
    if !db.starts_with("postgres") {
        let conn = rusqlite::Connection::open(db).ok()?;
        let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok", "the database is corrupt");
    }
    let o = cryptoscope()
        .args(["export", "latest", "--format", "json", "--db", db])
        .output()
        .unwrap();
    if !o.status.success() {
        // Killed before the run was recorded at all.
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no run"), "{err}");
        return None;
    }
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    Some(cryptoscope_testkit::replay::rows_of(&run))
}

/// Whether this CPU has AVX2 (which picks liboqs's and PQClean's AVX2 code).
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Reads `child`'s stderr until a line starts with `prefix` (the run saying where it is, so
/// the moment does not depend on the machine's speed), then sends SIGINT to its process
/// group (as Ctrl-C does) and reads the rest; returns everything it said on stderr.
#[allow(dead_code)]
pub fn interrupt_at(child: &mut std::process::Child, prefix: &str) -> String {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut err = String::new();
    for line in lines.by_ref().map_while(Result::ok) {
        err.push_str(&line);
        err.push('\n');
        if line.starts_with(prefix) {
            break;
        }
    }
    unsafe { libc::killpg(child.id() as i32, libc::SIGINT) };
    lines.map_while(Result::ok).for_each(|l| {
        err.push_str(&l);
        err.push('\n');
    });
    err
}

/// Starts `cmd`'s process in a process group of its own with SIGINT at its default, so that
/// the test can interrupt it as Ctrl-C would even when the test itself runs with SIGINT
/// ignored (a background job of a non-interactive shell): the tool keeps a signal its
/// caller ignores ignored, by design.
#[allow(dead_code)]
pub fn interruptible(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal() is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.process_group(0)
}

/// What a network study left behind: network namespaces named `prefix…` and processes whose
/// command line matches `pattern` (pgrep -f); empty when nothing.
#[allow(dead_code)]
pub fn leftovers(prefix: &str, pattern: &str) -> String {
    let ns = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    let ns: Vec<String> = String::from_utf8_lossy(&ns.stdout)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(String::from)
        .collect();
    let ps = std::process::Command::new("sh")
        .args(["-c", &format!("pgrep -a -f '{pattern}' || true")])
        .output()
        .unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout).trim().to_string();
    if ns.is_empty() && ps.is_empty() {
        String::new()
    } else {
        format!("namespaces {ns:?}, processes {ps}")
    }
}

/// The tcIds of a list as a gate detail writes them ("56, 57, 97–134"), ranges expanded;
/// `None` if the text is no such list.
pub fn id_set(list: &str) -> Option<std::collections::BTreeSet<u64>> {
    let mut ids = std::collections::BTreeSet::new();
    for part in list.split(", ") {
        match part.split_once('–') {
            Some((a, b)) => ids.extend(a.parse::<u64>().ok()?..=b.parse::<u64>().ok()?),
            None => {
                ids.insert(part.parse().ok()?);
            }
        }
    }
    Some(ids)
}
