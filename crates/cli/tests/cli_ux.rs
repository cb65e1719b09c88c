//! The command line as people use it, through the binary: pipes, defaults that are what the
//! help says, errors that name the problem, the worker flags where workers start, help that
//! fits a terminal, `show` printing what `run` printed. (What the stored-run commands do with
//! their arguments is checked in-process: `crates/engine/tests/engine/stored.rs`.)

mod common;

use common::*;
use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_pipe_ends_output_quietly_with_success() {
    // `cryptoscope list --json --all | head -c 100`: far more than a pipe holds, so the
    // writer is still writing when the reader goes away.
    let mut child = Command::new(bin())
        .args(["list", "--json", "--all"])
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(stderr_of(&o).trim().is_empty(), "nothing on stderr: {}", stderr_of(&o));
    assert!(String::from_utf8_lossy(&head).starts_with('['));
}

#[test]
fn a_bare_list_shows_what_run_measures_and_all_the_catalogue() {
    let list = |args: &[&str]| -> Vec<serde_json::Value> {
        let o = cryptoscope().args(args).output().unwrap();
        assert!(o.status.success(), "{}", stderr_of(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let default = list(&["list", "--json"]);
    let all = list(&["list", "--json", "--all"]);
    assert!(
        !default.is_empty() && default.len() < all.len(),
        "{} of {}",
        default.len(),
        all.len()
    );
    // The default run's suites (`--suite` help: kem and kex), nothing else.
    assert!(default.iter().all(|d| d["family"] == "kem" || d["family"] == "kex"));
    for family in ["hash", "cipher", "aead"] {
        assert!(all.iter().any(|d| d["family"] == family), "{family}");
    }
    let o = cryptoscope().arg("list").output().unwrap();
    let text = stdout_of(&o);
    assert!(text.contains("what `cryptoscope run` measures by default"), "{text}");
    assert!(text.contains(&format!("the catalogue holds {}", all.len())), "{text}");
}

#[test]
fn errors_name_what_is_missing() {
    // A required argument: its name is on the one line.
    let o = cryptoscope().args(["export", "latest"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr_of(&o);
    assert!(e.contains("--format"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // A vector file that is not there: "no such file", not "not a vectors directory".
    let o = cryptoscope()
        .args(["verify", "--vectors", "SHA3_256LongMsg.rsp"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr_of(&o);
    assert!(e.contains("no such file") && e.contains("vectors/hash/cavp/"), "{e}");
}

#[test]
fn worker_flags_are_offered_where_workers_start() {
    let help = |cmd: &str| stdout_of(&cryptoscope().args([cmd, "--help"]).output().unwrap());
    for cmd in ["runs", "show", "export", "report", "compare"] {
        let h = help(cmd);
        assert!(!h.contains("--quiet") && !h.contains("--memory-limit"), "{cmd}: {h}");
    }
    for cmd in ["run", "verify", "list", "memory", "scale", "ct", "tls"] {
        let h = help(cmd);
        assert!(h.contains("--quiet") && h.contains("--memory-limit"), "{cmd}: {h}");
    }
    // Before the command, as earlier versions took them (and stored command lines have them).
    let o = cryptoscope().args(["-q", "list", "--alg", "X25519"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let o = cryptoscope().args(["show", "latest", "-q"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "-q means nothing to show: {}", stderr_of(&o));
}

#[test]
fn help_examples_fit_an_80_column_terminal() {
    // Wrapped by the terminal, a long example breaks in the middle of a command; each is
    // laid out to fit instead (a comment on its own line, `\` where a command goes on).
    for cmd in [
        "", "list", "verify", "run", "scale", "memory", "profile", "micro", "build", "add", "tahoe", "ct", "tls",
        "tunnel",
    ] {
        let o = cryptoscope()
            .args([cmd, "--help"].into_iter().filter(|a| !a.is_empty()))
            .env("COLUMNS", "300")
            .output()
            .unwrap();
        let help = stdout_of(&o);
        let examples = help
            .lines()
            .skip_while(|l| !l.starts_with("Example"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty());
        for line in examples {
            assert!(
                line.chars().count() <= 78,
                "`{cmd} --help`: {} columns: {line}",
                line.chars().count()
            );
        }
    }
}

/// `show` of a run with the memory pass prints its heap and stack, as `run` did; a run
/// without it does not. (Stored-run addressing, filters, pruning and `compare`'s warnings are
/// checked in-process: `crates/engine/tests/engine/stored.rs`.)
#[test]
fn show_prints_the_memory_pass_as_run_did() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let db = db.to_str().unwrap();
    for memory in [true, false] {
        let o = cryptoscope()
            .args([
                "run",
                "--quick",
                "-q",
                "--alg",
                "X25519",
                "--provider",
                "openssl",
                "--samples",
                "200",
            ])
            .args(if memory { vec!["--memory"] } else { vec![] })
            .args(["--db", db, "--json"])
            .arg(tmp.path().join("r.json"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    }
    let o = cryptoscope().args(["show", "latest~1", "--db", db]).output().unwrap();
    assert!(stdout_of(&o).contains("Heap: malloc-family calls"), "{}", stdout_of(&o));
    let o = cryptoscope().args(["show", "latest", "--db", db]).output().unwrap();
    assert!(
        !stdout_of(&o).contains("Heap: malloc-family calls"),
        "{}",
        stdout_of(&o)
    );
}

#[test]
fn verify_json_dash_writes_the_results_after_the_table() {
    // `verify --json -` writes the file's results to standard output after the table.
    let o = cryptoscope()
        .args(["verify", "--vectors"])
        .arg(vectors().join("wycheproof/x25519_test.json"))
        .args(["--provider", "rustcrypto", "--json", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let text = stdout_of(&o);
    let json: serde_json::Value =
        serde_json::from_str(&text[text.find("\n{").expect("the JSON after the table")..]).unwrap();
    assert_eq!(json["subjects"][0]["provider"], "rustcrypto", "{json}");
}
