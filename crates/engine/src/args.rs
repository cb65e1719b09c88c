//! The arguments shared by several commands, and the values derived from them.

use crate::catalog::Selection;
use crate::context::Env;
use crate::scale;
use crate::ui::usage;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Visits per subject in `run` unless `--rounds` says otherwise: enough for `compare` to
/// see how much the machine's speed moves between moments of a run.
pub(crate) const DEFAULT_ROUNDS: usize = 5;

#[derive(Args, Clone)]
pub struct SelectArgs {
    /// Suites to include: kem, kex, sig, hash, cipher, aead (comma-separated or repeated).
    /// Default: kem and kex.
    #[arg(long, value_name = "SUITE")]
    pub(crate) suite: Vec<String>,
    /// Algorithm by canonical name, e.g. ML-KEM-768, Classic-McEliece-8192128f, X25519,
    /// ML-DSA-65, Ed25519, SHA3-256, GIFT-128, Camellia-128 (repeatable).
    #[arg(long = "alg", value_name = "NAME")]
    pub(crate) alg: Vec<String>,
    /// Provider: liboqs, pqclean, aws-lc, rustcrypto, openssl, build, cryptoscope (our own
    /// block cipher strategies) (repeatable).
    #[arg(long, value_name = "P")]
    pub(crate) provider: Vec<String>,
    /// Implementation variant, e.g. clean, avx2, dispatch, default; for our ciphers the
    /// strategy: naive, table, fixsliced, bitsliced-avx2, aesni-avx, ... (repeatable).
    #[arg(long = "impl", value_name = "I")]
    pub(crate) implementation: Vec<String>,
    /// The whole catalogue: every suite (signatures, hashes, ciphers, AEADs) and the
    /// algorithms outside the default run (Kyber, more Classic McEliece sets, the larger
    /// SPHINCS+ sets, MAYO, CROSS, UOV, RSA-4096).
    #[arg(long)]
    pub(crate) all: bool,
}

impl SelectArgs {
    /// Nothing narrows or widens the default selection.
    pub(crate) fn is_default(&self) -> bool {
        self.suite.is_empty()
            && self.alg.is_empty()
            && self.provider.is_empty()
            && self.implementation.is_empty()
            && !self.all
    }

    pub(crate) fn selection(&self) -> Result<Selection> {
        Selection {
            suites: self.suite.clone(),
            algorithms: self.alg.clone(),
            providers: self.provider.clone(),
            implementations: self.implementation.clone(),
            all: self.all,
        }
        .validate()
    }
}

#[derive(Args, Clone)]
pub struct GateArgs {
    /// Directory of known-answer data (default: the repository's vectors/). `verify` also
    /// takes one vector file (CAVP or NIST KEM KAT .rsp, Wycheproof JSON) to run against
    /// every implementation of its algorithm.
    #[arg(long, value_name = "PATH")]
    pub(crate) vectors: Option<PathBuf>,
    /// KAT entries to reproduce: single (count 0) or all (100; 10 for McEliece). Default:
    /// all; single with `run --quick`.
    #[arg(long, value_name = "DEPTH", value_parser = ["single", "all"])]
    pub(crate) kat: Option<String>,
    /// Seconds before a worker is killed and its subject reported as timed out.
    #[arg(long, value_name = "SECONDS", default_value_t = 900.0)]
    pub(crate) timeout: f64,
}

#[derive(Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub(crate) sel: SelectArgs,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    /// A short run of the whole suite: fewer samples, 1 s per subject, single KAT entry.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Exact number of samples per operation (disables adaptive stopping).
    #[arg(long, value_name = "N")]
    pub(crate) samples: Option<usize>,
    /// Time budget per subject in seconds (default 12; 1 with --quick).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) time_budget: Option<f64>,
    /// Hash message lengths instead of SUPERCOP's 8, 64, 576, 1536, 4096 and 1 MiB, each
    /// hashed in one update (hash:N): comma-separated N, A..B (every length from A to B)
    /// or A..B/STEP, e.g. 0..4096 or 64,1024..65536/1024. The report draws them as a curve;
    /// raise --time-budget for long sweeps (it is shared by all lengths of a subject).
    #[arg(long, value_name = "LIST")]
    pub(crate) lengths: Option<String>,
    /// Measure in R rounds: every subject is visited R times spread over the whole run
    /// (budget and sample counts split between visits) and its samples merged, so that all
    /// subjects see the same mixture of machine states, and `compare` can tell the
    /// machine's drift between visits from a real change. 1 measures each subject once.
    #[arg(long, value_name = "R", default_value_t = DEFAULT_ROUNDS)]
    pub(crate) rounds: usize,
    /// Pin measurements to this logical CPU.
    #[arg(long, value_name = "N")]
    pub(crate) cpu: Option<usize>,
    /// Where to write the JSON results (default: results/RUN_ID.json); `-`: standard output,
    /// which then holds nothing else (no tables, no HTML report).
    #[arg(long, value_name = "FILE|-")]
    pub(crate) json: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// Run only slice K of N (1-based) of the selected subjects, e.g. 2/8: a deterministic
    /// split for job arrays (Slurm, Kubernetes Jobs, CI matrices).
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<String>,
    /// Run group shared by the shards of one sharded run (default: $CRYPTOSCOPE_RUN_GROUP,
    /// then slurm-$SLURM_ARRAY_JOB_ID, else the run's own id). `report group:NAME` and
    /// `compare group:A group:B` treat a group as one run.
    #[arg(long, value_name = "NAME")]
    pub(crate) group: Option<String>,
    /// A name for the run, unique in the database, by which `show`, `compare`, `export` and
    /// `report` address it like its id (e.g. before-patch, gcc14-O3). Letters, digits, `.`,
    /// `_` and `-`, starting with a letter.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Continue an interrupted run (killed, crashed, out of power) under its own id, with
    /// its original command line: what it stored is kept, not measured again; the rest is
    /// gated and measured. RUN is a run id, `latest`, `latest~N` or a prefix (`cryptoscope
    /// runs`). Only --db and --json may be given with it (where the run and its file are
    /// now); other flags are refused, since the stored command line decides.
    #[arg(long, value_name = "RUN")]
    pub(crate) resume: Option<String>,
    /// Also print each median as a speed-up against this implementation of the same
    /// algorithm: `clean` (PQClean's portable code, the PQC-KEM profiling thesis's
    /// reference) or provider/impl such as `pqclean/clean`.
    #[arg(long, value_name = "IMPL")]
    pub(crate) baseline: Option<String>,
    /// Also measure heap and stack of every operation, in a pass of its own before timing
    /// (what `cryptoscope memory` does).
    #[arg(long)]
    pub(crate) memory: bool,
    /// Count perf events around each call, in a pass of its own (comma-separated):
    /// cycles, instructions, cache-references, cache-misses, branches, branch-misses,
    /// task-clock, page-faults, context-switches, cpu-migrations, minor-faults,
    /// major-faults. An event this machine lacks is reported as not supported, with the
    /// kernel's reason, never as zero.
    #[arg(long, value_name = "EVENTS")]
    pub(crate) counters: Option<String>,
    /// Also count the exact instructions per call of every operation under valgrind
    /// callgrind (slow; the steady figure on noisy machines).
    #[arg(long)]
    pub(crate) instructions: bool,
    /// Start a new worker process for every gate and every visit of a subject, as before
    /// long-lived workers: each visit then draws a fresh memory layout (ASLR) and starts
    /// with cold caches. By default one worker per provider serves the whole run.
    #[arg(long)]
    pub(crate) fresh_workers: bool,
    /// Only the memory pass (set by `cryptoscope memory`).
    #[arg(skip)]
    pub(crate) memory_only: bool,
    /// Counted calls per operation in the memory pass.
    #[arg(skip = 3usize)]
    pub(crate) memory_calls: usize,
    /// Only throughput against threads (set by `cryptoscope scale`).
    #[arg(skip)]
    pub(crate) scale: Option<scale::Settings>,
}

impl RunArgs {
    /// The arguments of a run made by another command (`memory`, `scale`): its selection,
    /// gate, `--quick`, `--json` and `--db`, one round, and every other flag at its default.
    /// The command then sets the pass it is for.
    pub(crate) fn for_pass(
        sel: &SelectArgs,
        gate: &GateArgs,
        quick: bool,
        json: Option<PathBuf>,
        db: &DbArg,
    ) -> RunArgs {
        RunArgs {
            resume: None,
            sel: sel.clone(),
            gate: gate.clone(),
            quick,
            samples: None,
            time_budget: None,
            lengths: None,
            rounds: 1,
            cpu: None,
            json,
            db: db.clone(),
            shard: None,
            group: None,
            name: None,
            baseline: None,
            memory: false,
            counters: None,
            instructions: false,
            fresh_workers: false,
            memory_only: false,
            memory_calls: 3,
            scale: None,
        }
    }
}

#[derive(Args, Clone)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub(crate) sel: SelectArgs,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    /// Thread counts, comma-separated (default 1, 2, 4, … up to 4x the logical CPUs).
    #[arg(long, value_name = "LIST")]
    pub(crate) threads: Option<String>,
    /// Seconds per thread count (default 2; 0.5 with --quick).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) duration: Option<f64>,
    /// Only these operations (keypair, encaps, decaps, exchange; repeatable).
    #[arg(long, value_name = "OP")]
    pub(crate) op: Vec<String>,
    /// Shorter runs (0.5 s per thread count) and the single-entry KAT gate.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Where to write the JSON results (default: results/RUN_ID.json); `-`: standard output,
    /// which then holds nothing else (no tables, no HTML report).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArg,
}

#[derive(Args, Clone)]
pub struct BuildArgs {
    /// Algorithms to build from PQClean's sources (repeatable), e.g. NTRU-HRSS-701.
    #[arg(long = "alg", value_name = "NAME")]
    pub(crate) alg: Vec<String>,
    /// Compilers, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "gcc,clang")]
    pub(crate) cc: String,
    /// One set of flags per build (repeatable; default "-O0" and "-O3 -march=native").
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub(crate) flags: Vec<String>,
    /// Source variants, comma-separated: clean (portable) and/or avx2.
    #[arg(long, value_name = "LIST", default_value = "clean,avx2")]
    pub(crate) variant: String,
    /// Whose sources, comma-separated: pqclean (as the pqcrypto crates ship them) and/or
    /// liboqs (as oqs-sys vendors it; built with its own CMake, one algorithm at a time).
    #[arg(long, value_name = "LIST", default_value = "pqclean")]
    pub(crate) source: String,
    /// List the builds on this machine and exit.
    #[arg(long)]
    pub(crate) list: bool,
    /// Remove the builds of the given algorithms (all builds without --alg) and exit.
    #[arg(long)]
    pub(crate) remove: bool,
}

#[derive(Args, Clone)]
pub struct AddArgs {
    /// Directory with api.h and the .c files.
    pub(crate) path: PathBuf,
    /// Catalogue algorithm it implements; its known-answer tests are the gate.
    #[arg(long = "alg", value_name = "NAME")]
    pub(crate) alg: String,
    /// Compilers, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "gcc")]
    pub(crate) cc: String,
    /// One set of flags per build (repeatable; default "-O3").
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub(crate) flags: Vec<String>,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
}

#[derive(Args, Clone)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub(crate) sel: SelectArgs,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    /// Operations to profile: keypair, encaps, decaps, exchange (repeatable; default all).
    #[arg(long, value_name = "OP")]
    pub(crate) op: Vec<String>,
    /// Profiled calls per operation; counts are reported per call.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) calls: u64,
    /// Uncounted calls before the profiled ones (one-time initialisation).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) warmup: u64,
    /// Hide call-tree nodes below this percentage of the instructions.
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub(crate) min_share: f64,
    /// Call-tree depth.
    #[arg(long, value_name = "N", default_value_t = 12)]
    pub(crate) depth: usize,
    /// Rows in the function table.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub(crate) top: usize,
    /// Also write the profiles as JSON (schema cryptoscope.profile/1).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
}

#[derive(Args, Clone)]
pub struct MicroArgs {
    #[command(flatten)]
    pub(crate) sel: SelectArgs,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    /// Operations: keypair, encaps, decaps (repeatable; default all).
    #[arg(long, value_name = "OP")]
    pub(crate) op: Vec<String>,
    /// Timed operations per probed operation (after one warm-up call); medians are reported.
    #[arg(long, value_name = "N", default_value_t = 31)]
    pub(crate) calls: usize,
    /// Operations counted under callgrind per operation.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) profiled_calls: u64,
    /// Uncounted calls under callgrind before the counted ones.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) warmup: u64,
    /// Skip callgrind: cycles from the probes only (seconds instead of minutes).
    #[arg(long)]
    pub(crate) no_instructions: bool,
    /// Also write the rows as JSON (schema cryptoscope.micro/1).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
}

#[derive(Args, Clone)]
pub struct MemoryArgs {
    #[command(flatten)]
    pub(crate) sel: SelectArgs,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    /// Counted calls per operation, after one warm-up call; each figure is the largest
    /// (one call for operations that take over a second).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) calls: usize,
    /// Gate with the single KAT entry `count = 0` (as `run --quick` does).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Where to write the JSON results (default: results/RUN_ID.json); `-`: standard output,
    /// which then holds nothing else (no tables, no HTML report).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArg,
}

/// Parses `K/N` with 1 <= K <= N.
pub(crate) fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let bad = || usage(format!("--shard {s}: expected K/N with 1 <= K <= N, e.g. 2/8"));
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// The run group: flag, environment, Slurm array job, or the run itself.
pub(crate) fn run_group(env: &Env, flag: Option<&str>, run_id: &str) -> String {
    flag.map(str::to_string)
        .or_else(|| {
            env.var("CRYPTOSCOPE_RUN_GROUP")
                .filter(|g| !g.is_empty())
                .map(str::to_string)
        })
        .or_else(|| {
            env.var("SLURM_ARRAY_JOB_ID")
                .filter(|g| !g.is_empty())
                .map(|j| format!("slurm-{j}"))
        })
        .unwrap_or_else(|| run_id.to_string())
}

#[derive(Args, Clone)]
pub struct CtArgs {
    #[command(flatten)]
    pub(crate) sel: SelectArgs,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
    /// memcheck, dudect or both.
    #[arg(long, value_name = "METHOD", default_value = "both", value_parser = ["both", "memcheck", "dudect"])]
    pub(crate) method: String,
    /// Calls per dudect test (both classes together; default 100,000, 20,000 with --quick).
    #[arg(long, value_name = "N")]
    pub(crate) samples: Option<u64>,
    /// Seconds per dudect test at most (default 10; 2 with --quick).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) time_budget: Option<f64>,
    /// Shorter dudect tests and the single-entry gate.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArg,
}

/// `--db`'s one-line help (every command that stores or reads results).
pub const DB_HELP: &str =
    "Results database: a SQLite file, or a PostgreSQL server (postgresql://user@host/db, service=NAME) [default: $CRYPTOSCOPE_DB, else ~/.local/share/cryptoscope/results.db]";
/// `--db`'s `--help` text.
pub const DB_LONG_HELP: &str = "Results database: a SQLite file (created if missing), or a PostgreSQL server named as libpq names one — a URI (postgresql://user@host:port/dbname), a keyword/value string ('host=db.example dbname=results') or a service of pg_service.conf ('service=team'); what it leaves out comes from PGHOST, PGPORT, PGUSER, PGDATABASE, PGSERVICE and the other PG* variables. Give the password in PGPASSWORD or a password file (~/.pgpass, or PGPASSFILE; mode 0600), not on the command line: a password typed here is visible to other users in the process list (cryptoscope replaces it by *** in everything it records).\n\n[default: $CRYPTOSCOPE_DB, else ~/.local/share/cryptoscope/results.db]";

#[derive(Args, Clone)]
pub struct DbArg {
    #[arg(long = "db", value_name = "PATH|URL", help = DB_HELP, long_help = DB_LONG_HELP)]
    pub(crate) db: Option<String>,
}

impl DbArg {
    pub(crate) fn as_deref(&self) -> Option<&str> {
        self.db.as_deref()
    }
}

/// The database to use: `--db` (a SQLite path or a postgresql:// URL), `$CRYPTOSCOPE_DB`,
/// or the per-user default file.
pub fn store_location(env: &Env, flag: Option<&str>) -> String {
    flag.map(str::to_string).unwrap_or_else(|| {
        cryptoscope_store::default_path(|k| env.var_os(k).cloned())
            .display()
            .to_string()
    })
}

pub(crate) fn gate_settings_depth(g: &GateArgs, quick: bool) -> String {
    g.kat
        .clone()
        .unwrap_or_else(|| if quick { "single".into() } else { "all".into() })
}

/// Narrows a stored run's results (`show`, `export`, `compare`), named as `run` names them.
#[derive(Args, Clone, Default)]
pub struct FilterArgs {
    /// Only this algorithm's results (repeatable or comma-separated).
    #[arg(long = "alg", value_name = "NAME", value_delimiter = ',')]
    pub(crate) alg: Vec<String>,
    /// Only this provider's results (repeatable or comma-separated).
    #[arg(long, value_name = "P", value_delimiter = ',')]
    pub(crate) provider: Vec<String>,
    /// Only this implementation's results, e.g. clean, avx2 (repeatable or comma-separated).
    #[arg(long = "impl", value_name = "I", value_delimiter = ',')]
    pub(crate) implementation: Vec<String>,
}

impl FilterArgs {
    /// Keeps the results that match; a filter that keeps nothing of `run` is a usage error.
    pub(crate) fn apply(&self, run: &mut cryptoscope_model::RunFile) -> Result<()> {
        if self.alg.is_empty() && self.provider.is_empty() && self.implementation.is_empty() {
            return Ok(());
        }
        let algs: Vec<String> = self
            .alg
            .iter()
            .map(|a| cryptoscope_catalogue::names::algorithm(a).map_or_else(|| a.clone(), |i| i.name.to_string()))
            .collect();
        let keep =
            |wanted: &[String], have: &str| wanted.is_empty() || wanted.iter().any(|w| w.eq_ignore_ascii_case(have));
        run.results.retain(|r| {
            keep(&algs, &r.algorithm)
                && keep(&self.provider, &r.provider)
                && keep(&self.implementation, &r.implementation)
        });
        if run.results.is_empty() {
            return Err(usage(format!(
                "no result of run {} matches the filter (--alg/--provider/--impl); `cryptoscope show {}` lists them",
                run.run_id, run.run_id
            )));
        }
        Ok(())
    }
}
