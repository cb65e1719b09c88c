//! The commands of README.md and docs/*.md, run as written: every command in the user guide
//! either runs here against the built binary or is listed below as skipped, with the reason.
//!
//! The convention (docs/testing.md, "Commands in the guide"):
//! * Every line of a fenced block opened with ```` ```sh ```` in README.md or docs/*.md is a
//!   command a reader may type. `#` starts a comment (a whole line, or after a space outside
//!   quotes); a line ending in `\` continues on the next. Other blocks (output, Python) are
//!   not commands.
//! * A command is skipped when it equals an entry of [`SKIPPED`] or starts with an entry of
//!   [`SKIPPED_PREFIXES`]; each entry says why it cannot run here (too long, needs root, a
//!   server or a file the reader brings, changes the reader's own files).
//! * Every other command must start with `cryptoscope `. It runs as written through `sh -c`,
//!   with the binary under test for `cryptoscope`, in a scratch directory (the repository's
//!   `vectors` and `examples` linked into it) with a scratch `HOME`: the default results
//!   database, builds and caches are the scratch's, never the reader's. `RUN_A`, `RUN_B` and
//!   `RUN_C` stand for run ids: three short runs are stored first and their ids substituted.
//!   It must exit 0 within [`LIMIT`], a hang guard.
//!
//! So a new command in the guide fails this test until it runs here or is listed. An entry
//! of either list that matches no command fails it too, so the lists stay current.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Commands of the guide that are not run here, exactly as written, and why (one a line).
#[rustfmt::skip]
const SKIPPED: &[(&str, &str)] = &[
    ("bash scripts/setup.sh", "installs packages as root, builds, runs the default suite (about 20 minutes): test.sh runs it first"),
    ("bash scripts/test.sh", "the test command itself, which runs this test"),
    ("export PATH=\"$PWD/target/release:$PATH\"", "changes the reader's shell; this test runs the built binary directly"),
    ("cargo build --release --workspace --locked", "builds the workspace, which the test command has done before this test"),
    ("cargo build --release --locked --manifest-path crates/tls-openssl35/Cargo.toml --target-dir target", "builds the OpenSSL 3.5 TLS driver, which the test command's setup has done before this test"),
    ("cargo build --release --locked --manifest-path crates/tls-openssl40/Cargo.toml --target-dir target", "builds the OpenSSL 4.0 TLS driver, which the test command's setup has done before this test"),
    ("cp -r vectors reference ~/.local/share/cryptoscope/", "installs into the reader's home; `an_installed_copy_finds_its_workers` checks the layout"),
    ("cryptoscope run --quick", "the whole default suite: about 3 minutes on 2 cores"),
    ("cryptoscope run --alg ML-KEM-768 --alg X25519", "the full 12 s budget for each of 8 subjects: about 2 minutes"),
    ("cryptoscope run --suite kem --provider pqclean --impl avx2 --cpu 1 --json out.json", "every AVX2 KEM of PQClean at the full budget: many minutes"),
    ("cryptoscope run --alg Classic-McEliece-8192128f --samples 20", "Classic McEliece key generations for the KAT gate and 20 samples per subject: minutes"),
    ("cryptoscope run --suite cipher --quick", "every strategy of five ciphers (16 s here): the GIFT-128 command runs, tests/cipher.rs all strategies"),
    ("cryptoscope run --suite hash --quick", "every hash of every provider (45 s here): the SHA3-256 command runs, tests/hash.rs the suite on SHA-256"),
    ("cryptoscope run --suite hash --alg BLAKE3 --lengths 0..4096/16 --time-budget 60", "a 60 s budget per subject"),
    ("cryptoscope verify --vectors PQCkemKAT_2400.rsp --alg ML-KEM-768", "a file the reader brings: tests/external_vectors.rs rebuilds the NIST ML-KEM-768 KAT and runs it"),
    ("cryptoscope memory --json mem.json", "the memory pass of the whole default suite: minutes"),
    ("cryptoscope run --quick --memory", "the whole default suite with the memory pass: about 3 minutes (setup.sh --quick runs it)"),
    ("cryptoscope scale --alg NTRU-HRSS-701 --alg X25519", "up to 8 thread counts, 2 s each, for every operation of 4 subjects: minutes"),
    ("cryptoscope scale --alg FFDHE-2048 --threads 1,2,3,4 --duration 5 --op exchange", "4 thread counts of 5 s each: the X25519 command beside it runs the same code"),
    ("cryptoscope profile --alg Classic-McEliece-8192128 --impl clean --calls 1 --json prof.json", "one McEliece key pair under callgrind: about 5 minutes"),
    ("cryptoscope micro --alg NTRU-HRSS-701 --op keypair", "every NTRU-HRSS-701 subject under callgrind: tests/matrix.rs runs micro"),
    ("cryptoscope micro --alg Classic-McEliece-8192128 --provider build --no-instructions", "needs builds of Classic McEliece from `cryptoscope build` (minutes of compiling)"),
    ("cryptoscope run --alg NTRU-HRSS-701 --counters cycles,instructions,cache-misses,branch-misses,page-faults,task-clock", "the full 12 s budget per subject: tests/counters.rs runs the counters"),
    ("cryptoscope run --quick --alg NTRU-HRSS-701 --provider build --provider pqclean --baseline build/clean-gcc12-O0", "needs the -O0 build of `cryptoscope build --alg NTRU-HRSS-701`, labelled with this machine's gcc version"),
    ("cryptoscope run --alg ML-KEM-512", "the full 12 s budget for every ML-KEM-512 subject: about a minute"),
    ("cryptoscope profile --alg ML-KEM-512 --provider build --impl byo_mlkem512-gcc12-O3 --op decaps", "needs the build `add` made, labelled with this machine's gcc version"),
    ("cryptoscope compare latest~1 latest --fail-on-slower", "its exit status is the verdict on two live runs, which the machine's speed decides: engine stored.rs tests it on samples the test sets"),
    ("cryptoscope ab --alg ML-KEM-512 build/byo_mlkem512-gcc12-O2 build/byo_mlkem512-gcc12-O2_DCS_EXTRA_WORK=12", "30 s of timing and both builds under callgrind, with labels of this machine's gcc version: tests/ab.rs runs the pair"),
    ("cryptoscope ab --alg ML-KEM-512 build/main-gcc12-O2 build/pr-gcc12-O2 --fail-on-slower", "needs the reader's two builds, and its exit status is the verdict on live timing: measure's paired.rs tests the verdict on streams it sets"),
    ("cryptoscope compare latest --history 10 --fail-on-slower", "its exit status is the verdict on live runs against their history, which the machine's speed decides: tests/history.rs tests it on replayed runs"),
    ("cryptoscope run --provider testbed --quick --timeout 20", "the hang subject runs until its 20 s timeout: tests/faults.rs runs the testbed"),
    ("export CRYPTOSCOPE_DB=service=team", "changes the reader's shell, and names a PostgreSQL server this test has not got"),
    ("cryptoscope run --quick --db service=team", "needs the team's PostgreSQL server: tests/postgres.rs starts one on loopback"),
    ("cryptoscope runs --db service=team", "needs the team's PostgreSQL server: tests/postgres.rs starts one on loopback"),
    ("PGPASSWORD=... cryptoscope show latest --db postgresql://bench@dbhost/cryptoscope", "needs the team's PostgreSQL server: tests/postgres.rs starts one on loopback"),
    ("bash scripts/crosscheck-speed.sh", "runs `openssl speed` for 2 s per algorithm and round, and its ratios are the machine's: BENCHMARKS.md records them"),
    ("cryptoscope verify --vectors vectors/wycheproof/ecdh_secp256r1_test.json", "exits 1 by design (OpenSSL 3.0 and AWS-LC accept tcIds 359/361, BENCHMARKS.md): tests/external_vectors.rs asserts exactly that outcome"),
    ("cryptoscope verify --suite sig --kat single", "exits 1 by design (liboqs's and PQClean's AVX2 ML-DSA verifiers accept Wycheproof's InfinityNormViolation signatures at every level): tests/sig.rs asserts exactly that outcome"),
    ("cryptoscope run --provider openssl-3.0 --provider openssl-3.5 --provider openssl-4.0 --alg X25519 --alg ML-KEM-768 --alg ML-DSA-65", "a full run of three versions (minutes; and `openssl-3.0` names the system build only where it is 3.0): tests/versions.rs runs two versions quickly and checks the naming"),
    ("cryptoscope run --suite sig --quick --db sig.db", "every signature subject (55, with RSA key generations and SLH-DSA-128s signing): minutes, and exits 1 as the command above; tests/sig.rs runs ML-DSA-44 and Ed25519"),
    ("scripts/fuzz.sh --replay", "builds the fuzz targets with cargo-fuzz: the test command runs it after the tests"),
    ("make fuzz", "fuzzes every target for 20 s"),
    ("cp min fuzz/regressions/run_file/WHAT-IT-IS", "keeps a crash the fuzzer found: by hand"),
];

/// Commands of the guide that are not run here, by the start of the command, and why.
#[rustfmt::skip]
const SKIPPED_PREFIXES: &[(&str, &str)] = &[
    ("install ", "installs into the reader's home; `an_installed_copy_finds_its_workers` checks the layout"),
    ("export CRYPTOSCOPE_WORKER_DIR=", "changes the reader's shell; `an_installed_copy_finds_its_workers` checks the variable"),
    ("cryptoscope build --alg ", "compiles C code (PQClean's or liboqs's) per compiler and flag set: tests/matrix.rs builds"),
    ("cryptoscope add ", "compiles the example and gates it with 100 KAT entries: tests/matrix.rs adds it"),
    ("cryptoscope ct ", "valgrind memcheck and dudect per operation: minutes; tests/ct.rs audits"),
    ("cryptoscope tahoe", "a Tahoe-LAFS grid per hash, and PyPI for its first environment: minutes; tests/tahoe.rs runs the quick study"),
    ("cryptoscope tls", "servers and clients for seconds per configuration, some as root in namespaces: tests/tls.rs"),
    ("cryptoscope tunnel", "daemons in network namespaces, as root: minutes; tests/tunnel.rs"),
    ("cryptoscope openvpn-server", "an OpenVPN server and ten client loops per cell, as root in namespaces: minutes; tests/openvpn_server.rs"),
    ("python3 -m venv ", "installs the Python package into .venv: scripts/setup.sh does, and crates/python/tests test it"),
    (".venv/bin/python ", "needs the Python package in .venv (scripts/setup.sh): crates/python/tests test the same API"),
    ("umask 077; echo ", "writes the reader's ~/.pgpass"),
    ("printf '[team]", "writes the reader's ~/.pg_service.conf"),
    ("scripts/slurm.sh ", "submits jobs to a Slurm cluster: tests/slurm.rs runs the script on a single-node Slurm it starts"),
    ("FUZZ_SECONDS=", "fuzzes for minutes"),
    ("BIN=", "replays a crash the fuzzer found: by hand"),
    ("$BIN/", "replays a crash the fuzzer found: by hand"),
    ("cargo test ", "runs tests, as the test command does"),
    ("CRYPTOSCOPE_VECTORS=$PWD/vectors cargo test ", "runs tests, as the test command does"),
    ("d=$(mktemp -d); ", "records a replay fixture into the repository"),
    ("CRYPTOSCOPE_WORKER_DIR=$d CRYPTOSCOPE_RECORD=", "records a replay fixture into the repository"),
];

/// The longest a command may take: a guard against a hang, not a judgement of speed (the
/// slowest here takes 7 s; a machine eighty times slower still passes).
const LIMIT: Duration = Duration::from_secs(600);

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// README.md and docs/*.md, in that order (docs by name).
fn guide() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    std::iter::once(root().join("README.md")).chain(docs).collect()
}

/// A command of the guide: where it is written, and its text.
#[derive(Debug)]
struct Written {
    place: String,
    text: String,
}

/// `line` without a comment: `#` at the start or after whitespace, outside quotes.
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => return line[..i].trim_end(),
            None => {}
        }
        prev = c;
    }
    line.trim_end()
}

/// The commands of the ```sh blocks of one Markdown text.
fn commands_of(name: &str, text: &str) -> Vec<Written> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            in_sh = !in_sh && fence.trim() == "sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let line = without_comment(line.trim_start());
        let (start, mut cmd) = match pending.take() {
            Some((start, head)) => (start, format!("{head} {line}")),
            None => (n + 1, line.to_string()),
        };
        if let Some(head) = cmd.strip_suffix('\\') {
            pending = Some((start, head.trim_end().to_string()));
            continue;
        }
        cmd = cmd.trim().to_string();
        if !cmd.is_empty() {
            out.push(Written {
                place: format!("{name}:{start}"),
                text: cmd,
            });
        }
    }
    assert!(pending.is_none(), "{name}: a ```sh block ends inside a continued line");
    out
}

/// Every command of the guide, in order.
fn all_commands() -> Vec<Written> {
    guide()
        .iter()
        .flat_map(|p| {
            let name = p.strip_prefix(root()).unwrap_or(p).display().to_string();
            commands_of(&name, &std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

/// Why a command is not run here, if it is listed.
fn skipped(cmd: &str) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(c, _)| *c == cmd)
        .or_else(|| SKIPPED_PREFIXES.iter().find(|(p, _)| cmd.starts_with(p)))
        .map(|(_, why)| *why)
}

/// `sh -c CMD` in the scratch directory, with a scratch HOME and nothing of the reader's or
/// the test runner's cryptoscope settings but the vectors.
fn shell(scratch: &Path, cmd: &str) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new("sh");
    c.arg("-c").arg(cmd).current_dir(scratch);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if ["CRYPTOSCOPE_", "XDG_", "PG", "SLURM_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            c.env_remove(&*k);
        }
    }
    c.env("HOME", scratch.join("home"));
    c.env("CRYPTOSCOPE_VECTORS", vectors());
    c.timeout(LIMIT);
    c
}

/// `cmd` with the binary under test for its leading `cryptoscope`, run to its end.
fn run_as_written(scratch: &Path, cmd: &str) -> std::process::Output {
    let rest = cmd.strip_prefix("cryptoscope ").unwrap();
    let bin = bin().display().to_string().replace('\'', r"'\''");
    shell(scratch, &format!("exec '{bin}' {rest}"))
        .output()
        .unwrap_or_else(|e| panic!("`{cmd}` did not end within {LIMIT:?} ({e}): make it quicker or list it as skipped"))
}

/// A run id out of `run`'s closing lines (`Store: … (run ID; …)`).
fn stored_run_id(o: &std::process::Output) -> String {
    let out = format!("{}{}", stdout_of(o), stderr_of(o));
    out.lines()
        .find_map(|l| l.split("(run ").nth(1))
        .and_then(|s| s.split([';', ')']).next())
        .unwrap_or_else(|| panic!("no run id in the output: {out}"))
        .trim()
        .to_string()
}

#[test]
fn every_command_in_the_guide_runs_or_is_listed_as_skipped() {
    let commands = all_commands();
    assert!(
        commands.len() > 50,
        "only {} commands found: is the parser right?",
        commands.len()
    );

    // First what needs no running: every command is runnable or listed, every entry is used.
    let unlisted: Vec<String> = commands
        .iter()
        .filter(|w| skipped(&w.text).is_none() && !w.text.starts_with("cryptoscope "))
        .map(|w| format!("{}: `{}`", w.place, w.text))
        .collect();
    assert!(
        unlisted.is_empty(),
        "commands of the guide that are neither `cryptoscope …` nor listed as skipped \
         (docs_commands.rs, SKIPPED):\n{}",
        unlisted.join("\n")
    );
    let texts: Vec<&str> = commands.iter().map(|w| w.text.as_str()).collect();
    for (entry, _) in SKIPPED {
        assert!(
            texts.contains(entry),
            "SKIPPED lists `{entry}`, which no page of the guide has"
        );
    }
    for (prefix, _) in SKIPPED_PREFIXES {
        assert!(
            texts.iter().any(|t| t.starts_with(prefix)),
            "SKIPPED_PREFIXES lists `{prefix}`, which starts no command of the guide"
        );
    }

    let scratch = tempfile::tempdir().unwrap();
    let s = scratch.path();
    std::fs::create_dir(s.join("home")).unwrap();
    for d in ["vectors", "examples"] {
        std::os::unix::fs::symlink(root().join(d).canonicalize().unwrap(), s.join(d)).unwrap();
    }
    // The runs RUN_A, RUN_B and RUN_C stand for.
    let mut ids = Vec::new();
    for _ in 0..3 {
        let o = run_as_written(
            s,
            "cryptoscope run --quick --alg X25519 --provider rustcrypto --rounds 2",
        );
        assert!(o.status.success(), "{}", stderr_of(&o));
        ids.push(stored_run_id(&o));
    }

    let mut done = BTreeSet::new();
    let started = Instant::now();
    for w in &commands {
        if let Some(why) = skipped(&w.text) {
            eprintln!("skipped {}: `{}`: {why}", w.place, w.text);
            continue;
        }
        let cmd = w
            .text
            .replace("RUN_A", &ids[0])
            .replace("RUN_B", &ids[1])
            .replace("RUN_C", &ids[2]);
        if !done.insert(cmd.clone()) {
            continue;
        }
        let t = Instant::now();
        let o = run_as_written(s, &cmd);
        eprintln!("ran {} in {:.1} s: `{cmd}`", w.place, t.elapsed().as_secs_f64());
        let out = format!("{}{}", stdout_of(&o), stderr_of(&o));
        assert!(
            o.status.success(),
            "{}: `{cmd}` exited with {:?}:\n{out}",
            w.place,
            o.status.code()
        );
        assert!(!out.contains("panicked"), "{}: `{cmd}`:\n{out}", w.place);
    }
    eprintln!(
        "{} commands ran in {:.0} s",
        done.len(),
        started.elapsed().as_secs_f64()
    );
    // Nothing of the reader's: the default results database was the scratch home's.
    assert!(s.join("home/.local/share/cryptoscope/results.db").is_file());
}

#[test]
fn the_command_parser_follows_the_convention() {
    let md = "text\n```sh\ncryptoscope list   # a comment\n# a whole-line comment\n\ncryptoscope build \\\n  \
              --flags \"-O3 # not a comment\"\n```\n```\ncryptoscope output, not a command\n```\n```python\nx = 1\n```\n";
    let got: Vec<String> = commands_of("t.md", md).into_iter().map(|w| w.text).collect();
    assert_eq!(
        got,
        ["cryptoscope list", "cryptoscope build --flags \"-O3 # not a comment\""]
    );
    assert_eq!(commands_of("t.md", md)[1].place, "t.md:6");
    assert!(skipped("cryptoscope run --quick").is_some());
    assert_eq!(skipped("cryptoscope run --quick --alg X25519"), None);
    assert!(skipped("cryptoscope tls --quick").is_some());
}

/// README, "Installing the binary elsewhere": the workers beside `cryptoscope`, or named by
/// `$CRYPTOSCOPE_WORKER_DIR`; `cryptoscope` alone finds no provider.
#[test]
fn an_installed_copy_finds_its_workers() {
    let d = tempfile::tempdir().unwrap();
    let bin_dir = d.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let place = |from: &Path| {
        let to = bin_dir.join(from.file_name().unwrap());
        // A hard link where the file system allows it (fast), else a copy; never a symbolic
        // link, which the executable would resolve back to target/release.
        if std::fs::hard_link(from, &to).is_err() {
            std::fs::copy(from, &to).unwrap();
        }
    };
    place(&bin());
    let list = |worker_dir: Option<&Path>| {
        let mut c = shell(
            d.path(),
            &format!(
                "exec '{}' list --alg X25519 --provider rustcrypto",
                bin_dir.join("cryptoscope").display()
            ),
        );
        if let Some(w) = worker_dir {
            c.env("CRYPTOSCOPE_WORKER_DIR", w);
        }
        c.output().unwrap()
    };
    let alone = list(None);
    assert!(!alone.status.success(), "{}", stdout_of(&alone));
    assert!(
        stderr_of(&alone).contains("cryptoscope-worker-rustcrypto not found"),
        "{}",
        stderr_of(&alone)
    );
    let named = list(Some(bin().parent().unwrap()));
    assert!(named.status.success(), "{}", stderr_of(&named));
    assert!(stdout_of(&named).contains("available"), "{}", stdout_of(&named));
    place(&worker("rustcrypto"));
    let beside = list(None);
    assert!(beside.status.success(), "{}", stderr_of(&beside));
    assert!(stdout_of(&beside).contains("available"), "{}", stdout_of(&beside));
}

/// Done means (issue 27): a README under 200 lines that names every package
/// scripts/setup.sh installs, and every relative link of README.md and docs/*.md names a file
/// that exists.
#[test]
fn the_readme_is_short_names_what_setup_installs_and_every_link_resolves() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() < 200,
        "README.md has {} lines",
        readme.lines().count()
    );
    let setup = std::fs::read_to_string(root().join("scripts/setup.sh")).unwrap();
    let list = setup
        .split("packages=(")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap();
    let packages: Vec<&str> = list.split_whitespace().collect();
    assert!(packages.len() > 20, "{packages:?}");
    for p in packages {
        assert!(
            readme.contains(&format!("`{p}`")),
            "README.md does not name `{p}`, which setup.sh installs"
        );
    }
    let mut broken = Vec::new();
    for page in guide() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut in_code = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            for part in line.split("](").skip(1) {
                let target = part.split(')').next().unwrap_or("");
                let file = target.split('#').next().unwrap_or("");
                if file.is_empty() || file.contains("://") || file.starts_with("mailto:") {
                    continue;
                }
                if !page.parent().unwrap().join(file).exists() {
                    broken.push(format!("{}: {target}", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
}
