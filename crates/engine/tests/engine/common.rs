//! What the engine tier's tests share: contexts that replay a recording or read the store
//! alone, argument groups parsed as the CLI parses them, and the recording's samples.

use clap::Parser;
use cryptoscope_engine::args::{DbArg, FilterArgs};
use cryptoscope_engine::context::{Captured, Ctx, Env};
use cryptoscope_engine::workers::{Stop, Workers};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The recorded run (`fixtures/replay/README.md`).
pub fn cassette() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/kem-hash.jsonl"
    ))
}

/// The repository's known-answer data.
pub fn vectors() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors"))
}

pub use cryptoscope_testkit::replay::Rows;

/// The recording's X25519 alone, as a run of its own (the recording holds two visits of
/// 20 samples of each subject).
pub const X25519: &[&str] = &[
    "run",
    "--quick",
    "-q",
    "--rounds",
    "2",
    "--samples",
    "40",
    "--alg",
    "X25519",
    "--provider",
    "rustcrypto",
];

/// Any of the engine's argument groups, parsed from words as the CLI parses them (with the
/// CLI's `--quiet`, which the context carries).
#[derive(Parser)]
#[command(name = "cryptoscope")]
struct Words<T: clap::Args> {
    #[command(flatten)]
    args: T,
    #[arg(long, short)]
    quiet: bool,
}

/// An argument group from its words (no command name).
pub fn parse<T: clap::Args>(words: &[&str]) -> T {
    Words::<T>::try_parse_from(std::iter::once("cryptoscope").chain(words.iter().copied()))
        .unwrap_or_else(|e| panic!("{words:?}: {e}"))
        .args
}

/// `--db DB`.
pub fn db(db: &str) -> DbArg {
    parse(&["--db", db])
}

/// No filter.
pub fn all() -> FilterArgs {
    FilterArgs::default()
}

/// A stored `run` command line back into its arguments, as the CLI's parser does (the words
/// after `run`).
fn run_parser(command: &[String]) -> Option<cryptoscope_engine::args::RunArgs> {
    let at = command.iter().position(|w| w == "run")?;
    let words: Vec<&str> = command[at + 1..].iter().map(String::as_str).collect();
    Words::<cryptoscope_engine::args::RunArgs>::try_parse_from(std::iter::once("cryptoscope").chain(words))
        .ok()
        .map(|w| w.args)
}

/// A context replaying `recording` (stopping as its `stop_at`-th `measure` call starts, if
/// given), with the repository's vectors and the command line `words` (what a run records).
pub fn replaying(recording: &Path, stop_at: Option<usize>, words: &[&str]) -> (Ctx, Captured) {
    let workers = Workers::replaying(
        PathBuf::from("/nonexistent/workers"),
        recording,
        stop_at.map(|n| (n, Stop::Unwind)),
    )
    .expect("the recording loads");
    let (ctx, out) = Ctx::captured(workers);
    let ctx = ctx
        .with_env(Env::empty().with("CRYPTOSCOPE_VECTORS", vectors()))
        .with_args(std::iter::once("cryptoscope").chain(words.iter().copied()))
        .with_run_parser(run_parser);
    (ctx, out)
}

/// A context for the commands that read the store alone: no worker, no environment.
pub fn reading() -> (Ctx, Captured) {
    let workers = Workers::live(PathBuf::from("/nonexistent/workers"));
    let (ctx, out) = Ctx::captured(workers);
    (ctx.with_env(Env::empty().with("CRYPTOSCOPE_VECTORS", vectors())), out)
}

/// `run WORDS --db DB --json JSON` replaying `recording`, in-process: its exit code and
/// output. The transport started no process.
pub fn run(recording: &Path, words: &[&str], db: &str, json: &Path) -> (i32, Captured) {
    let mut all: Vec<&str> = words.to_vec();
    let json = json.to_str().unwrap();
    all.extend(["--db", db, "--json", json]);
    let (ctx, out) = replaying(recording, None, &all);
    let args: cryptoscope_engine::args::RunArgs = parse(&all[1..]);
    let code = cryptoscope_engine::run::cmd_run(&args, &ctx).unwrap_or_else(|e| panic!("{e:#}\n{}", out.stderr()));
    assert_eq!(ctx.workers.started(), 0, "a replayed run started a process");
    (code, out)
}

/// The recorded exchanges, one JSON value per line.
pub fn exchanges(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (subject, operation) -> the recorded nanosecond samples of every visit, in order.
pub fn recorded(path: &Path) -> Rows {
    let mut m = Rows::new();
    for x in exchanges(path) {
        for e in x["events"].as_array().unwrap() {
            if e["type"] == "measured" {
                let k = (
                    e["subject"].as_str().unwrap().to_string(),
                    e["operation"].as_str().unwrap().to_string(),
                );
                let ns = e["samples"]["ns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap());
                m.entry(k).or_default().extend(ns);
            }
        }
    }
    m
}

/// The recording with every sample of `subject` multiplied by `factor`, written to `to`.
pub fn slowed(from: &Path, to: &Path, subject: &str, factor: f64) {
    let mut out = String::new();
    for mut x in exchanges(from) {
        for e in x["events"].as_array_mut().unwrap() {
            if e["type"] == "measured" && e["subject"] == subject {
                for field in ["cycles", "ns"] {
                    for v in e["samples"][field].as_array_mut().unwrap() {
                        *v = (v.as_f64().unwrap() * factor).into();
                    }
                }
            }
        }
        out.push_str(&x.to_string());
        out.push('\n');
    }
    std::fs::write(to, out).unwrap();
}

/// The latest run in `db` (`export latest --format json`) and its rows, each checked whole:
/// its samples all there, its median theirs, stored once. None when no run is stored yet.
pub fn stored(db_url: &str) -> Option<(String, Rows)> {
    let (ctx, _) = reading();
    let exported = match cryptoscope_engine::stored::export(&ctx, "latest", "json", &all(), &db(db_url)) {
        Ok(e) => e,
        Err(e) => {
            // Nothing stored yet: the run was stopped before it was recorded at all.
            assert!(e.to_string().contains("no run"), "{e:#}");
            return None;
        }
    };
    let run: Value = serde_json::from_str(&exported.text).unwrap();
    let (id, rows) = cryptoscope_testkit::replay::rows_of(&run);
    assert_eq!(id, exported.run.run_id, "the text is the run returned");
    assert_eq!(rows.len(), exported.run.results.len());
    Some((id, rows))
}
