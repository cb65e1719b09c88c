//! The command line as people use it: pipes, defaults that are what the help says, errors
//! that name the problem, `compare` addressing runs as `latest~N` and warning when a run is
//! compared with itself, `show` printing what `run` printed.

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
    // An algorithm outside the suites named: the suite is blamed, not the providers.
    let o = cryptoscope()
        .args(["list", "--suite", "hash,kem", "--alg", "X25519"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("X25519 is in suite kex"), "{}", stderr_of(&o));
}

/// Two stored quick runs of X25519 in a new database: the older named `with-memory` and
/// with the memory pass. Returns the database, the `runs` listing and the ids, newest first.
fn two_runs(tmp: &tempfile::TempDir) -> (String, String, Vec<String>) {
    let db = tmp.path().join("r.db");
    let db = db.to_str().unwrap().to_string();
    let db = db.as_str();
    // The older run with the memory pass, the newer without.
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
            .args(if memory {
                vec!["--memory", "--name", "with-memory"]
            } else {
                vec![]
            })
            .args(["--db", db, "--json"])
            .arg(tmp.path().join("r.json"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    }
    let runs = stdout_of(&cryptoscope().args(["runs", "--db", db]).output().unwrap());
    let ids: Vec<&str> = runs
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("20"))
        .collect();
    assert_eq!(ids.len(), 2, "{runs}");
    let ids = ids.into_iter().map(String::from).collect();
    (db.to_string(), runs, ids)
}

#[test]
fn compare_addresses_runs_back_from_the_latest_and_warns_on_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, runs, ids) = two_runs(&tmp);
    let db = db.as_str();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let o = cryptoscope().args(["show", "latest~1", "--db", db]).output().unwrap();
    assert!(
        stdout_of(&o).contains(ids[1]),
        "latest~1 is the run before the latest: {}",
        stdout_of(&o)
    );
    // A named run is addressed by its name; names are unique and cannot pass for an id.
    let o = cryptoscope()
        .args(["show", "with-memory", "--db", db])
        .output()
        .unwrap();
    assert!(stdout_of(&o).contains(ids[1]), "{}", stderr_of(&o));
    assert!(
        runs.lines()
            .any(|l| l.starts_with(ids[1]) && l.contains(" with-memory ")),
        "{runs}"
    );
    for (name, why) in [
        ("with-memory", "is taken by run"),
        ("2026-run", "starting with a letter"),
    ] {
        let o = cryptoscope()
            .args([
                "run",
                "--quick",
                "--alg",
                "X25519",
                "--provider",
                "openssl",
                "--name",
                name,
                "--db",
                db,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(stderr_of(&o).contains(why), "{name}: {}", stderr_of(&o));
    }
    // `show` of a run with the memory pass prints its heap and stack, as `run` did.
    assert!(stdout_of(&o).contains("Heap: malloc-family calls"), "{}", stdout_of(&o));
    let o = cryptoscope().args(["show", "latest", "--db", db]).output().unwrap();
    assert!(
        !stdout_of(&o).contains("Heap: malloc-family calls"),
        "{}",
        stdout_of(&o)
    );
    let o = cryptoscope()
        .args(["compare", "latest~1", "latest", "--db", db])
        .output()
        .unwrap();
    assert!(
        o.status.success() && !stderr_of(&o).contains("itself"),
        "{}",
        stderr_of(&o)
    );
    let o = cryptoscope()
        .args(["compare", "latest", ids[0], "--db", db])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(stderr_of(&o).contains("compared with itself"), "{}", stderr_of(&o));
    let o = cryptoscope().args(["show", "latest~2", "--db", db]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "only two runs: {}", stderr_of(&o));
}

#[test]
fn outputs_filters_pruning_and_resume_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, runs, ids) = two_runs(&tmp);
    let db = db.as_str();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    // `--out -` is standard output; a directory that does not exist is refused, not made.
    let o = cryptoscope()
        .args(["report", "--out", "-", "--db", db])
        .output()
        .unwrap();
    assert!(o.status.success() && stdout_of(&o).starts_with("<!DOCTYPE html>"));
    let missing = tmp.path().join("no/such/dir/r.html");
    let o = cryptoscope()
        .args(["report", "--db", db, "--out"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("does not exist") && !tmp.path().join("no").exists());
    let o = cryptoscope()
        .args(["export", "latest", "--format", "csv", "--out", "-", "--db", db])
        .output()
        .unwrap();
    assert!(stdout_of(&o).starts_with("algorithm,provider"), "{}", stdout_of(&o));
    // show, export and compare narrow like run selects; a filter matching nothing is an error.
    let o = cryptoscope()
        .args([
            "export",
            "latest",
            "--format",
            "csv",
            "--alg",
            "x25519",
            "--provider",
            "openssl",
            "--db",
            db,
        ])
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&o).lines().count(),
        5,
        "header and four operations: {}",
        stdout_of(&o)
    );
    for args in [
        vec!["show", "latest", "--alg", "ML-KEM-768"],
        vec!["export", "latest", "--format", "csv", "--provider", "liboqs"],
        vec!["compare", "latest~1", "latest", "--impl", "avx2"],
    ] {
        let o = cryptoscope().args(&args).args(["--db", db]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr_of(&o).contains("matches the filter"),
            "{args:?}: {}",
            stderr_of(&o)
        );
    }
    // `runs` says what each run measured: X25519 alone is a key exchange.
    for id in &ids {
        assert!(runs.lines().any(|l| l.starts_with(id) && l.contains(" kex ")), "{runs}");
    }
    // Resuming repeats the stored command line: an extra flag is refused, not ignored.
    let o = cryptoscope()
        .args(["run", "--resume", "latest", "--alg", "ML-KEM-768", "--db", db])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("--alg would be ignored"), "{}", stderr_of(&o));
    // `runs --prune KEEP` keeps the newest KEEP runs and deletes the rest with their results.
    let o = cryptoscope()
        .args(["runs", "--prune", "1", "--db", db])
        .output()
        .unwrap();
    assert!(stdout_of(&o).contains("Pruned 1 run"), "{}", stdout_of(&o));
    let runs = stdout_of(&cryptoscope().args(["runs", "--db", db]).output().unwrap());
    assert!(
        runs.contains(ids[0]) && !runs.contains(ids[1]) && runs.contains("1 runs in"),
        "{runs}"
    );
    let o = cryptoscope()
        .args(["export", ids[1], "--format", "json", "--db", db])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "the pruned run is gone");
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

#[test]
fn compare_takes_its_reference_run_by_either_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, _, ids) = two_runs(&tmp);
    for flag in ["--reference", "--baseline"] {
        let o = cryptoscope()
            .args(["compare", &ids[0], &ids[1], flag, &ids[1], "--db", &db])
            .output()
            .unwrap();
        assert!(o.status.success(), "{flag}: {}", stderr_of(&o));
        let line = stdout_of(&o)
            .lines()
            .find(|l| l.contains(&ids[1]) && l.contains("(baseline)"))
            .map(String::from);
        assert!(line.is_some(), "{flag}: {}", stdout_of(&o));
    }
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

#[test]
fn run_json_dash_writes_the_results_file_and_nothing_else_to_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
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
            "--json",
            "-",
        ])
        .arg("--db")
        .arg(&db)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).expect("standard output is the results file alone");
    assert_eq!(run["schema"], "cryptoscope.run/1");
    assert_eq!(
        run["results"].as_array().unwrap().len(),
        4,
        "keypair, derive, validate and exchange"
    );
    // Stored as ever, and no file written in place of `-`.
    assert!(!tmp.path().join("-").exists() && !tmp.path().join("results").exists());
    let runs = stdout_of(&cryptoscope().args(["runs", "--db"]).arg(&db).output().unwrap());
    assert!(runs.contains(run["run_id"].as_str().unwrap()), "{runs}");
}
