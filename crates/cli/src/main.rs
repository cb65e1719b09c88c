//! `cryptoscope`: the command-line front end. It parses arguments into a validated
//! selection and settings, and glues catalogue discovery, gating, measurement and
//! reporting together. Measuring happens in provider worker processes, never here.
//!
//! Exit codes: 0 success; 1 some subject failed its gate, crashed or timed out;
//! 2 usage or input error.

mod catalog;
mod counters;
mod ct;
mod external;
mod gating;
mod hostile;
mod matrix;
mod memory;
mod micro;
mod netns;
mod probes;
mod profile;
mod run;
mod scale;
mod tahoe;
mod tls;
mod tunnel;
mod util;
mod workers;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use cryptoscope_catalogue::descriptor::Availability;
use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_measure::sampler::Plan;
use cryptoscope_report::{table, GateStatus, ResultRow, RunFile, SCHEMA};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Visits per subject in `run` unless `--rounds` says otherwise: enough for `compare` to
/// see how much the machine's speed moves between moments of a run.
const DEFAULT_ROUNDS: usize = 5;

use catalog::{Catalogue, Selection};

/// A usage or input error: exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

#[derive(Parser)]
#[command(
    name = "cryptoscope",
    version,
    about = "What cryptography really costs on this machine: gated, counted, labelled.",
    long_about = "cryptoscope measures post-quantum KEMs and classical key exchange from several \
providers (liboqs, PQClean, AWS-LC, RustCrypto, OpenSSL) side by side. Every implementation must \
first pass its correctness gate (published known-answer data); only then is it measured, each \
provider in its own worker process, with cycles from the PMU or the TSC (labelled) and a median \
with a 95% confidence interval.",
    after_help = "Examples:\n  cryptoscope list\n  cryptoscope verify --alg ML-KEM-768\n  cryptoscope run --quick\n  cryptoscope run --alg X25519 --alg ML-KEM-768 --provider aws-lc --json out.json\n\nExit codes: 0 ok, 1 a subject failed its gate (or crashed/timed out), 2 usage or input error."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// No progress bar.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Address-space limit of every worker process, in GiB (default: half the machine's
    /// memory, at least 4). A subject that exhausts it is reported as out of memory and the
    /// run goes on. 0 removes the limit.
    #[arg(long, global = true, value_name = "GIB")]
    memory_limit: Option<f64>,
}

#[derive(Subcommand)]
enum Cmd {
    /// List every (algorithm, provider, implementation) with sizes, level, version and availability.
    List {
        #[command(flatten)]
        sel: SelectArgs,
        /// Machine-readable output (an array of descriptors) on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Run the correctness gate and print pass/fail per subject (exit 1 if any fails); with
    /// --vectors FILE, run that vector file against every implementation of its algorithm.
    #[command(
        after_help = "Examples:\n  cryptoscope verify --alg ML-KEM-768\n  cryptoscope verify --suite hash --kat single\n  cryptoscope verify --vectors vectors/wycheproof/x25519_test.json\n  cryptoscope verify --vectors vectors/wycheproof/ecdh_secp256r1_ecpoint_test.json --provider openssl --json p256.json\n  cryptoscope verify --vectors vectors/wycheproof/mlkem_768_test.json\n  cryptoscope verify --vectors vectors/hash/cavp/SHA3_256LongMsg.rsp\n  cryptoscope verify --vectors vectors/aead/aes_gcm_test.json          # AES-128-GCM and AES-256-GCM\n  cryptoscope verify --vectors my-kat.rsp --alg ML-KEM-768\n\nA vector FILE is recognised by its content: NIST CAVP hash .rsp (Len/Msg/MD; the algorithm from --alg or a CAVP file name; bit-level Len entries are skipped), NIST KEM KAT .rsp (count/seed/pk/sk/ct/ss; --alg or a `# NAME` header; reproduced under the NIST CTR_DRBG, or decaps only where randomness cannot be injected), Wycheproof xdh_comp_schema (X25519), ecdh_ecpoint_test_schema (P-256), mlkem_test_schema (ML-KEM) and aead_test_schema (AES-GCM, ChaCha20-Poly1305: every catalogue AEAD the file's key lengths name, unless --alg picks one; valid tests with nonces or tags of lengths the subject does not take are skipped, invalid ones must still be refused). Each implementation runs it in its own worker; the table gives tests passed, acceptable (Wycheproof), failed and skipped, and the failing test ids (record, count or tcId).\n\nExit codes: 0 every implementation passed, 1 one failed a test (or crashed/timed out), 2 usage error or malformed/unsupported file."
    )]
    Verify {
        #[command(flatten)]
        sel: SelectArgs,
        #[command(flatten)]
        gate: GateArgs,
        /// With --vectors FILE: also write the per-implementation results as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Gate, then measure, then print a summary and write the results file and database.
    Run(RunArgs),
    /// Throughput of every operation on 1, 2, 4, … threads (each with its own keys): ops/s,
    /// parallel efficiency, evenness of threads and the knee.
    Scale(ScaleArgs),
    /// Heap (allocations, bytes, peak) and stack high-water mark of every operation, with
    /// key, ciphertext and code sizes; a pass apart from timing, stored like a run.
    Memory(MemoryArgs),
    /// Where an operation's instructions go: call tree, function table, the functions Seed 001
    /// monitored and the hottest source lines, from valgrind callgrind (exact counts).
    #[command(
        after_help = "Examples:\n  cryptoscope profile --alg NTRU-HRSS-701 --provider pqclean --impl clean --op keypair\n  cryptoscope profile --alg Classic-McEliece-8192128 --impl clean --op decaps --json prof.json\n\nCollection is on only inside one call of the operation (cryptoscope_profiled_op in the worker); inputs are prepared and warm-up calls made outside it. Randomness comes from a fixed-seed DRBG, so two runs give identical counts."
    )]
    Profile(ProfileArgs),
    /// The internal functions Seed 001 monitored (poly_Rq_mul, poly_S3_inv, pk_gen, synd, ...)
    /// in every subject of an algorithm: calls per operation and instructions per call
    /// (callgrind), and cycles per call where our own builds carry timing probes.
    #[command(
        after_help = "Examples:\n  cryptoscope build --alg NTRU-HRSS-701 --cc gcc,clang --flags -O3\n  cryptoscope micro --alg NTRU-HRSS-701\n  cryptoscope micro --alg Classic-McEliece-8192128 --impl clean --op decaps --json micro.json\n  cryptoscope micro --alg NTRU-HRSS-701 --provider build --no-instructions   # cycles only, fast\n\nCycles per call come from builds made by `cryptoscope build` or `add`: calls to a monitored function from another source file go through a wrapper that reads the time-stamp counter around the real function, inside real operations. A `*` marks fewer wrapped calls than callgrind counted (calls from inside the function's own file bypass the wrapper); static functions cannot be wrapped and are listed in the notes."
    )]
    Micro(MicroArgs),
    /// Compile C implementations through a compiler × flags × variant matrix into isolated
    /// builds that `run` measures as provider `build` (PQClean's sources from the pqcrypto
    /// crates, or liboqs's with --source liboqs).
    #[command(
        after_help = "Examples:\n  cryptoscope build --alg NTRU-HRSS-701\n  cryptoscope build --alg NTRU-HRSS-701 --cc gcc,clang --flags \"-O0\" --flags \"-O3 -march=native\" --variant clean,avx2\n  cryptoscope build --alg ML-KEM-768 --source liboqs --cc gcc,clang --flags -O2\n  cryptoscope run --provider build --alg NTRU-HRSS-701 --baseline build/clean-gcc12-O0\n  cryptoscope build --list\n\nEach build is a shared library with hidden symbols in $CRYPTOSCOPE_BUILDS (default ~/.local/share/cryptoscope/builds), labelled <variant>-<compiler><major>-<flags>."
    )]
    Build(BuildArgs),
    /// Bring your own implementation: compile a directory of C sources with the NIST KEM API
    /// (api.h, crypto_kem_keypair/enc/dec; randombytes supplied), gate it, and keep it for `run`.
    #[command(
        after_help = "Example:\n  cryptoscope add examples/byo-mlkem512 --alg ML-KEM-512\n\nThe contract (README, \"Bring your own implementation\"): api.h defines CRYPTO_PUBLICKEYBYTES, CRYPTO_SECRETKEYBYTES, CRYPTO_CIPHERTEXTBYTES, CRYPTO_BYTES and CRYPTO_ALGNAME; the .c files define crypto_kem_keypair, crypto_kem_enc and crypto_kem_dec; randombytes(unsigned char *, unsigned long long) is ours (the NIST KAT DRBG in the gate). PQCgenKAT_kem.c, rng.c and randombytes.c are skipped."
    )]
    Add(AddArgs),
    /// The Tahoe-LAFS study (Seed 002): a loopback grid per hash, uploads and downloads of
    /// fresh random files through the web API, and the time every process spends hashing.
    #[command(
        after_help = "Examples:\n  cryptoscope tahoe                                   # quick profile, sha256d vs sha3-256, blake2b-256, blake3\n  cryptoscope tahoe --hash sha256d,sha256d-ours,blake3 --profile quick\n  cryptoscope tahoe --profile paper --repeat 3 --segment-size 131072 --foolscap   # the 2010 set-up\n\nThe first run builds a Python environment with Tahoe-LAFS 1.20.0 from PyPI and cryptoscope's package (about a minute; needs python3-venv and network access to PyPI). Each hash gets its own grid start: 1 introducer, 3 storage nodes and 1 client on 127.0.0.1, shares 2 of 3. A start-up hook replaces allmydata.util.hashutil._SHA256d_Hasher in every node (stock sha256d is only timed) and counts digests, bytes and time hashing per process. Every downloaded byte is compared with what was uploaded; a probe file with a fixed convergence secret checks that the swap took (different hashes give different caps; stock and our SHA-256d the same). Nodes are stopped and temporary state removed on success, failure and Ctrl-C. Results go to the results database and `cryptoscope report`.\n\nExit codes: 0 ok, 1 a check failed (a download differed, the swap did not take, interrupted: what was measured is kept), 2 usage or environment error."
    )]
    Tahoe(tahoe::TahoeArgs),
    /// Constant-time audit of every gated subject: valgrind memcheck with the secret inputs
    /// marked undefined (each secret-dependent branch or memory index, with function and
    /// line) and dudect's fixed-versus-random Welch t-test; beside each subject's latest speed.
    #[command(
        after_help = "Examples:\n  cryptoscope ct --quick                           # the whole catalogue, shorter dudect runs\n  cryptoscope ct --alg GIFT-64 --alg Camellia-128  # table strategies are flagged, bitsliced ones pass\n  cryptoscope ct --alg ML-KEM-768 --method memcheck\n  cryptoscope ct --provider testbed                # the calibration subjects: early-exit compare is flagged\n\nWhat is secret: KEM key generation and encapsulation, and key-exchange key generation, the randomness they draw (marked as it is handed out; only where the harness supplies randomness: not AWS-LC or OpenSSL); KEM decapsulation the secret key (ML-KEM: dk_PKE and z, not the public key copy inside it), also with a modified ciphertext (implicit rejection); key exchange the secret key; hashes the message; block ciphers the key (key schedule) and the key and plaintext (encrypt); AEADs the key and plaintext (seal), the key while opening a valid ciphertext (open) and one whose tag's last byte is wrong (open-forged; dudect: against random tags, the test an early-exit tag compare fails).\n\nValues the specification makes public although they are computed from a secret (ML-KEM's matrix from ρ, a public key's encoding) and tests of candidates that are discarded and drawn again (Classic McEliece's FixedWeight, sntrup761's invertibility test) are declared in reference/ct-declassified.json with the specification's words; findings there are listed as public or rejection and not counted, and dudect is shown as inconclusive where such a value makes the time vary. dudect is not run on operations slower than a twentieth of the budget per call (it needs 200 calls).\n\nmemcheck runs the code path valgrind's virtual CPU selects (no AVX-512): subjects that need AVX-512 are reported as not audited by it. dudect: 100,000 calls (20,000 with --quick) or the time budget per test, classes interleaved at random, |t| > 4.5 measured twice before it counts; block ciphers and AEAD sealing are also timed with caches evicted before every call.\n\nVerdicts: leak (memcheck), timing difference (dudect), leak (both methods), no branch or address (memcheck: value reports: operands memcheck wants defined that are neither, e.g. AVX2 shift counts), no leak found by dudect (memcheck: memory never written: valgrind's --track-origins traces the undefined bits to memory the code never wrote, not to the secret, so memcheck cannot judge that place; inconclusive when dudect's difference is a declared one too), no leak found; with one method (--method): no leak found (one method), or inconclusive (dudect: declared timing) when dudect's only difference is a declared one. In an AEAD open, branches reached once per call are the accept/reject decision (shown, not counted as leaks). Findings on third-party code are reported as found. Exit codes: 0 the audit ran (findings are results, not errors), 1 a subject failed its gate or crashed, 2 usage or environment error."
    )]
    Ct(CtArgs),
    /// TLS 1.3 handshakes per key-exchange group and certificate: handshakes per second,
    /// connection time, server CPU, bytes on the wire; classical, hybrid, ML-KEM and any
    /// catalogue KEM as an experimental group; rustls or nginx/OpenSSL; soft or accelerated.
    #[command(
        after_help = "Examples:\n  cryptoscope tls --quick                                   # the seven standard groups, ECDSA P-256, 1 s each\n  cryptoscope tls --group X25519,X25519MLKEM768,HQC-128,NTRU-HRSS-701,Classic-McEliece-348864\n  cryptoscope tls --group X25519 --cert rsa-2048,rsa-3072,rsa-4096,ecdsa-p256,ed25519 --accel both\n  cryptoscope tls --peer openssl --group DHE --cert rsa-1024,rsa-2048,rsa-4096 --accel both   # the study's set-up\n  cryptoscope tls --netns --rate 100mbit                    # two namespaces over a rate-limited veth (root)\n\nEvery configuration starts its own server (rustls with AWS-LC, one group, no resumption, or nginx with the system's OpenSSL 3.0), warms up, then counts handshakes completed by --clients concurrent clients in the measured window. Server CPU is read from /proc over the same window. A catalogue KEM becomes a TLS 1.3 group with a private-use code point (0xFE00-0xFEFF) after passing its correctness gate; one whose key share exceeds 65,535 bytes (Classic McEliece) is listed as \"does not fit\" with its sizes. --accel off masks AES-NI and PCLMULQDQ (OPENSSL_ia32cap=~0x200000200000000:~0x0) in server and clients. This kernel's lack of netem is detected: --delay/--loss then explain and exit 2. Keys live in a private 0700 directory, removed at the end with every server and namespace, also on Ctrl-C. Results go to the results database and `cryptoscope report`.\n\nExit codes: 0 ok, 1 a configuration failed or a KEM failed its gate (the rest is measured and stored), 2 usage or environment error (e.g. --netns without root)."
    )]
    Tls(tls::TlsArgs),
    /// VPN and SSH tunnels between two network namespaces: ping latency by payload size,
    /// bulk transfer throughput and each endpoint's CPU per cipher:MAC couple, against the
    /// same path without a tunnel; soft or accelerated.
    #[command(
        after_help = "Examples:\n  cryptoscope tunnel --quick                               # every tunnel and couple, 10 pings per size, 32 MiB transfers\n  cryptoscope tunnel --tunnel ipsec,ssh --couple aes-256-gcm --accel both\n  cryptoscope tunnel --tunnel openvpn-static --couple none:none,aes-256-cbc:none,aes-256-cbc:sha256   # Seed 004's couples\n  cryptoscope tunnel --quick --hostile --couple chacha20-poly1305   # also under junk, half handshakes and stalled connections\n\nTunnels: openvpn-static (OpenVPN 2.6 static key), openvpn-tls (OpenVPN TLS mode, ECDSA P-256 certificates made by the tool, control channel under --tls-crypt), ipsec (strongSwan charon with kernel-libipsec: ESP in user space, IKEv2 with a pre-shared key, one charon per namespace), wireguard (wireguard-go), ssh (OpenSSH, iperf3 through a -L forward). Each configuration gets fresh namespaces joined by a veth pair, fresh keys and daemons; all are removed afterwards, also on failure and Ctrl-C. A couple a tunnel cannot carry is listed as not supported, with the reason. Needs root.\n\nExit codes: 0 ok, 1 a configuration failed or the run was interrupted (what was measured is stored), 2 usage or environment error (not root, a missing program)."
    )]
    Tunnel(tunnel::TunnelArgs),
    /// Write a self-contained HTML report (SVG plots, tables, environments) of stored runs.
    Report {
        /// Runs to include (id, unique prefix or `latest`; default: latest).
        runs: Vec<String>,
        /// Output file (default: results/report-RUN_ID.html).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
    /// List the runs in the results database.
    Runs {
        #[command(flatten)]
        db: DbArg,
    },
    /// Print one stored run: environment and results (RUN: id, unique prefix or `latest`).
    Show {
        run: String,
        /// Also print speed-ups against this implementation of each algorithm (`clean`,
        /// or provider/impl such as `pqclean/clean`; default: the run's own --baseline).
        #[arg(long, value_name = "IMPL")]
        baseline: Option<String>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Export a stored run as json, csv, markdown or github-benchmark.
    Export {
        run: String,
        /// json (cryptoscope.run/1), csv, markdown, or github-benchmark (github-action-benchmark's customSmallerIsBetter).
        #[arg(long, value_parser = ["json", "csv", "markdown", "github-benchmark"])]
        format: String,
        /// Write here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Compare runs side by side: ratio of medians with a 95% CI and a verdict per operation;
    /// with --published, one run against published figures ("ours versus theirs").
    Compare {
        /// Two or more runs (id, unique prefix or `latest`); one with --published.
        #[arg(num_args = 1.., required = true)]
        runs: Vec<String>,
        /// Print our cycles next to every matching published figure (default file: the
        /// repository's reference/published.json, with sources and CPUs).
        #[arg(long)]
        published: bool,
        /// Published-figures file for --published.
        #[arg(long, value_name = "FILE")]
        published_file: Option<PathBuf>,
        /// The reference run (default: the first given).
        #[arg(long, value_name = "RUN")]
        baseline: Option<String>,
        /// Changes smaller than this fraction are never called faster or slower.
        #[arg(long, default_value_t = 0.05, value_name = "FRACTION")]
        threshold: f64,
        /// Compare cycle counts instead of nanoseconds (same machine only).
        #[arg(long)]
        cycles: bool,
        /// What to compare: median (typical cost), p5 or min (the machine's fast level;
        /// steadier on noisy shared machines).
        #[arg(long, default_value = "median", value_parser = ["median", "p5", "min"])]
        statistic: String,
        /// Also write the comparison as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
}

#[derive(Args, Clone)]
struct SelectArgs {
    /// Suites to include: kem, kex, hash, cipher, aead (comma-separated or repeated). Default: kem
    /// and kex.
    #[arg(long, value_name = "SUITE")]
    suite: Vec<String>,
    /// Algorithm by canonical name, e.g. ML-KEM-768, Classic-McEliece-8192128f, X25519,
    /// SHA3-256, GIFT-128, Camellia-128 (repeatable).
    #[arg(long = "alg", value_name = "NAME")]
    alg: Vec<String>,
    /// Provider: liboqs, pqclean, aws-lc, rustcrypto, openssl, build, cryptoscope (our own
    /// block cipher strategies) (repeatable).
    #[arg(long, value_name = "P")]
    provider: Vec<String>,
    /// Implementation variant, e.g. clean, avx2, dispatch, default; for our ciphers the
    /// strategy: naive, table, fixsliced, bitsliced-avx2, aesni-avx, ... (repeatable).
    #[arg(long = "impl", value_name = "I")]
    implementation: Vec<String>,
    /// Include algorithms outside the default suite (Kyber, more McEliece sets).
    #[arg(long)]
    all: bool,
}

impl SelectArgs {
    fn selection(&self) -> Result<Selection> {
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
struct GateArgs {
    /// Directory of known-answer data (default: the repository's vectors/). `verify` also
    /// takes one vector file (CAVP or NIST KEM KAT .rsp, Wycheproof JSON) to run against
    /// every implementation of its algorithm.
    #[arg(long, value_name = "PATH")]
    vectors: Option<PathBuf>,
    /// KAT entries to reproduce: single (count 0) or all (100; 10 for McEliece).
    #[arg(long, value_name = "DEPTH", value_parser = ["single", "all"])]
    kat: Option<String>,
    /// Seconds before a worker is killed and its subject reported as timed out.
    #[arg(long, value_name = "SECONDS", default_value_t = 900.0)]
    timeout: f64,
}

#[derive(Args, Clone)]
struct RunArgs {
    #[command(flatten)]
    sel: SelectArgs,
    #[command(flatten)]
    gate: GateArgs,
    /// A short run of the whole suite: fewer samples, 1 s per subject, single KAT entry.
    #[arg(long)]
    quick: bool,
    /// Exact number of samples per operation (disables adaptive stopping).
    #[arg(long, value_name = "N")]
    samples: Option<usize>,
    /// Time budget per subject in seconds (default 12; 1 with --quick).
    #[arg(long, value_name = "SECONDS")]
    time_budget: Option<f64>,
    /// Hash message lengths instead of SUPERCOP's 8, 64, 576, 1536, 4096 and 1 MiB, each
    /// hashed in one update (hash:N): comma-separated N, A..B (every length from A to B)
    /// or A..B/STEP, e.g. 0..4096 or 64,1024..65536/1024. The report draws them as a curve;
    /// raise --time-budget for long sweeps (it is shared by all lengths of a subject).
    #[arg(long, value_name = "LIST")]
    lengths: Option<String>,
    /// Measure in R rounds: every subject is visited R times spread over the whole run
    /// (budget and sample counts split between visits) and its samples merged, so that all
    /// subjects see the same mixture of machine states, and `compare` can tell the
    /// machine's drift between visits from a real change. 1 measures each subject once.
    #[arg(long, value_name = "R", default_value_t = DEFAULT_ROUNDS)]
    rounds: usize,
    /// Pin measurements to this logical CPU.
    #[arg(long, value_name = "N")]
    cpu: Option<usize>,
    /// Where to write the JSON results (default: results/RUN_ID.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    db: DbArg,
    /// Run only slice K of N (1-based) of the selected subjects, e.g. 2/8: a deterministic
    /// split for job arrays (Slurm, Kubernetes Jobs, CI matrices).
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Run group shared by the shards of one sharded run (default: $CRYPTOSCOPE_RUN_GROUP,
    /// then slurm-$SLURM_ARRAY_JOB_ID, else the run's own id). `report group:NAME` and
    /// `compare group:A group:B` treat a group as one run.
    #[arg(long, value_name = "NAME")]
    group: Option<String>,
    /// Continue an interrupted run (killed, crashed, out of power) under its own id, with
    /// its original command line: what it stored is kept, not measured again; the rest is
    /// gated and measured. RUN is a run id, `latest`, or a prefix (`cryptoscope runs`).
    #[arg(long, value_name = "RUN")]
    resume: Option<String>,
    /// Also print each median as a speed-up against this implementation of the same
    /// algorithm: `clean` (PQClean's portable code, the study's reference) or
    /// provider/impl such as `pqclean/clean`.
    #[arg(long, value_name = "IMPL")]
    baseline: Option<String>,
    /// Also measure heap and stack of every operation, in a pass of its own before timing
    /// (what `cryptoscope memory` does).
    #[arg(long)]
    memory: bool,
    /// Count perf events around each call, in a pass of its own (comma-separated):
    /// cycles, instructions, cache-references, cache-misses, branches, branch-misses,
    /// task-clock, page-faults, context-switches, cpu-migrations, minor-faults,
    /// major-faults. An event this machine lacks is reported as not supported, with the
    /// kernel's reason, never as zero.
    #[arg(long, value_name = "EVENTS")]
    counters: Option<String>,
    /// Also count the exact instructions per call of every operation under valgrind
    /// callgrind (slow; the steady figure on noisy machines).
    #[arg(long)]
    instructions: bool,
    /// Only the memory pass (set by `cryptoscope memory`).
    #[arg(skip)]
    memory_only: bool,
    /// Counted calls per operation in the memory pass.
    #[arg(skip = 3usize)]
    memory_calls: usize,
    /// Only throughput against threads (set by `cryptoscope scale`).
    #[arg(skip)]
    scale: Option<scale::Settings>,
}

#[derive(Args, Clone)]
struct ScaleArgs {
    #[command(flatten)]
    sel: SelectArgs,
    #[command(flatten)]
    gate: GateArgs,
    /// Thread counts, comma-separated (default 1, 2, 4, … up to 4x the logical CPUs).
    #[arg(long, value_name = "LIST")]
    threads: Option<String>,
    /// Seconds per thread count (default 2; 0.5 with --quick).
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
    /// Only these operations (keypair, encaps, decaps, exchange; repeatable).
    #[arg(long, value_name = "OP")]
    op: Vec<String>,
    /// Shorter runs (0.5 s per thread count) and the single-entry KAT gate.
    #[arg(long)]
    quick: bool,
    /// Where to write the JSON results (default: results/RUN_ID.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    db: DbArg,
}

/// `scale` is `run` with only the throughput pass.
fn cmd_scale(sa: &ScaleArgs, quiet: bool) -> Result<i32> {
    let logical = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let threads = match &sa.threads {
        Some(t) => scale::parse_threads(t).map_err(usage)?,
        None => scale::default_threads(logical),
    };
    let duration = sa.duration.unwrap_or(if sa.quick { 0.5 } else { 2.0 });
    if !(duration > 0.0 && duration.is_finite() && duration <= 3600.0) {
        return Err(usage("--duration must be a positive number of seconds (at most 3600)"));
    }
    let ops = if sa.op.is_empty() {
        None
    } else {
        Some(
            sa.op
                .iter()
                .map(|o| {
                    cryptoscope_catalogue::Operation::parse(o)
                        .ok_or_else(|| usage(format!("unknown operation `{o}` (keypair, encaps, decaps, exchange)")))
                })
                .collect::<Result<Vec<_>>>()?,
        )
    };
    let a = RunArgs {
        resume: None,
        sel: sa.sel.clone(),
        gate: sa.gate.clone(),
        quick: sa.quick,
        samples: None,
        time_budget: None,
        lengths: None,
        rounds: 1,
        cpu: None,
        json: sa.json.clone(),
        db: sa.db.clone(),
        shard: None,
        group: None,
        baseline: None,
        memory: false,
        counters: None,
        instructions: false,
        memory_only: false,
        memory_calls: 3,
        scale: Some(scale::Settings {
            threads,
            duration: Duration::from_secs_f64(duration),
            ops,
        }),
    };
    cmd_run(&a, quiet)
}

#[derive(Args, Clone)]
struct BuildArgs {
    /// Algorithms to build from PQClean's sources (repeatable), e.g. NTRU-HRSS-701.
    #[arg(long = "alg", value_name = "NAME")]
    alg: Vec<String>,
    /// Compilers, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "gcc,clang")]
    cc: String,
    /// One set of flags per build (repeatable; default "-O0" and "-O3 -march=native").
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    flags: Vec<String>,
    /// Source variants, comma-separated: clean (portable) and/or avx2.
    #[arg(long, value_name = "LIST", default_value = "clean,avx2")]
    variant: String,
    /// Whose sources, comma-separated: pqclean (as the pqcrypto crates ship them) and/or
    /// liboqs (as oqs-sys vendors it; built with its own CMake, one algorithm at a time).
    #[arg(long, value_name = "LIST", default_value = "pqclean")]
    source: String,
    /// List the builds on this machine and exit.
    #[arg(long)]
    list: bool,
    /// Remove the builds of the given algorithms (all builds without --alg) and exit.
    #[arg(long)]
    remove: bool,
}

#[derive(Args, Clone)]
struct AddArgs {
    /// Directory with api.h and the .c files.
    path: PathBuf,
    /// Catalogue algorithm it implements; its known-answer tests are the gate.
    #[arg(long = "alg", value_name = "NAME")]
    alg: String,
    /// Compilers, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "gcc")]
    cc: String,
    /// One set of flags per build (repeatable; default "-O3").
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    flags: Vec<String>,
    #[command(flatten)]
    gate: GateArgs,
}

fn print_builds() {
    let list = cryptoscope_worker::builds::list();
    if list.is_empty() {
        println!("No builds in {}.", cryptoscope_worker::builds::dir().display());
        return;
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|(_, m)| {
            vec![
                m.algorithm.clone(),
                format!("build/{}", m.label),
                m.origin.clone(),
                m.build_line(),
                m.source.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table::render(
            &["algorithm", "subject", "origin", "compiler and flags", "source"],
            &rows,
            &[false; 5]
        )
    );
}

fn canonical_kem(name: &str) -> Result<String> {
    let info = cryptoscope_catalogue::names::algorithm(name).ok_or_else(|| {
        let hint = cryptoscope_catalogue::names::did_you_mean(
            name,
            cryptoscope_catalogue::names::ALGORITHMS.iter().map(|a| a.name),
        )
        .map(|h| format!(" (did you mean `{h}`?)"))
        .unwrap_or_default();
        usage(format!("unknown algorithm `{name}`{hint}"))
    })?;
    if info.family != cryptoscope_catalogue::descriptor::Family::Kem {
        return Err(usage(format!(
            "{}: only KEMs can be built (the NIST KEM API)",
            info.name
        )));
    }
    Ok(info.name.to_string())
}

fn cmd_build(a: &BuildArgs, quiet: bool) -> Result<i32> {
    if a.list {
        print_builds();
        return Ok(0);
    }
    let algs: Vec<String> = a
        .alg
        .iter()
        .flat_map(|x| x.split(','))
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(canonical_kem)
        .collect::<Result<_>>()?;
    if a.remove {
        let mut n = 0;
        for (dir, m) in cryptoscope_worker::builds::list() {
            if algs.is_empty() || algs.contains(&m.algorithm) {
                std::fs::remove_dir_all(&dir).map_err(|e| usage(format!("cannot remove {}: {e}", dir.display())))?;
                n += 1;
            }
        }
        println!("Removed {n} build(s).");
        return Ok(0);
    }
    if algs.is_empty() {
        return Err(usage("build needs --alg NAME (e.g. --alg NTRU-HRSS-701), or --list"));
    }
    let ccs = matrix::compilers(&a.cc)?;
    let flags = if a.flags.is_empty() {
        vec!["-O0".to_string(), "-O3 -march=native".to_string()]
    } else {
        a.flags.clone()
    };
    let variants: Vec<&str> = a.variant.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
    if variants.is_empty() || variants.iter().any(|v| !["clean", "avx2"].contains(v)) {
        return Err(usage(format!("--variant {}: expected clean and/or avx2", a.variant)));
    }
    let sources: Vec<&str> = a.source.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
    if sources.is_empty() || sources.iter().any(|v| !["pqclean", "liboqs"].contains(v)) {
        return Err(usage(format!("--source {}: expected pqclean and/or liboqs", a.source)));
    }
    let mut jobs = Vec::new();
    for alg in &algs {
        for src in &sources {
            let mut found = false;
            for v in &variants {
                for cc in &ccs {
                    for f in &flags {
                        let fl: Vec<String> = if f.trim().is_empty() { vec![] } else { vec![f.clone()] };
                        let job = if *src == "liboqs" {
                            matrix::liboqs_job(alg, v, cc, &fl)
                        } else {
                            matrix::pqclean_job(alg, v, cc, &fl)
                        };
                        if let Some(j) = job {
                            jobs.push(j);
                            found = true;
                        }
                    }
                }
            }
            if !found {
                let whose = if *src == "liboqs" {
                    "liboqs (as oqs-sys vendors it) has no such KEM"
                } else {
                    "no PQClean sources found in the pqcrypto crates"
                };
                return Err(usage(format!(
                    "{alg}: {whose} (run scripts/setup.sh, which builds the workspace and fetches the sources)"
                )));
            }
        }
    }
    let mut pb = Progress::new(jobs.len() as u64, quiet);
    let mut failed = Vec::new();
    let mut built = Vec::new();
    for j in &jobs {
        pb.message(&format!("{} {} {} {}", j.algorithm, j.variant, j.cc, j.flags.join(" ")));
        match matrix::compile(j) {
            Ok((_, m)) => {
                pb.step(&format!("build {} {}", m.algorithm, m.label), "ok");
                built.push(m);
            }
            Err(e) => {
                pb.step(&format!("build {} {}", j.algorithm, j.variant), "failed");
                failed.push(e);
            }
        }
    }
    pb.finish();
    let rows: Vec<Vec<String>> = built
        .iter()
        .map(|m| vec![m.algorithm.clone(), format!("build/{}", m.label), m.build_line()])
        .collect();
    print!(
        "{}",
        table::render(&["algorithm", "subject", "compiler and flags"], &rows, &[false; 3])
    );
    println!(
        "{} build(s) in {}. Measure them: cryptoscope run --provider build --alg {} --baseline build/<label>",
        built.len(),
        cryptoscope_worker::builds::dir().display(),
        algs[0]
    );
    for f in &failed {
        eprintln!("error: {f}");
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

fn cmd_add(a: &AddArgs, quiet: bool) -> Result<i32> {
    let alg = canonical_kem(&a.alg)?;
    if !a.path.is_dir() {
        return Err(usage(format!("{}: not a directory", a.path.display())));
    }
    let api = a.path.join("api.h");
    let text = std::fs::read_to_string(&api).map_err(|e| usage(format!("cannot read {}: {e}", api.display())))?;
    let parsed = matrix::parse_api(&text).map_err(|e| usage(format!("{}: {e}", api.display())))?;
    let ccs = matrix::compilers(&a.cc)?;
    let flags = if a.flags.is_empty() {
        vec!["-O3".to_string()]
    } else {
        a.flags.clone()
    };
    let source = std::fs::canonicalize(&a.path).unwrap_or_else(|_| a.path.clone());
    let variant = source
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_")
        })
        .unwrap_or_else(|| "user".into());
    let mut labels = Vec::new();
    let mut failed = 0;
    for cc in &ccs {
        for f in &flags {
            let job = matrix::Job {
                algorithm: alg.clone(),
                origin: "user".into(),
                source: source.clone(),
                common: None,
                variant: variant.clone(),
                source_version: format!("{} ({})", source.display(), parsed.algname),
                cc: cc.clone(),
                flags: if f.trim().is_empty() { vec![] } else { vec![f.clone()] },
            };
            match matrix::compile(&job) {
                Ok((_, m)) => labels.push(m.label),
                Err(e) => {
                    eprintln!("error: {e}");
                    failed += 1;
                }
            }
        }
    }
    if labels.is_empty() {
        return Ok(1);
    }
    // The same gate as every other subject.
    let vectors = util::vectors_dir(a.gate.vectors.as_deref())?;
    let cat = Catalogue::discover()?;
    let picked: Vec<_> = cat
        .subjects
        .iter()
        .filter(|d| d.provider == "build" && d.algorithm == alg && labels.contains(&d.implementation))
        .cloned()
        .collect();
    let depth = gate_settings_depth(&a.gate, false);
    let gs = gating::GateSettings {
        vectors: &vectors,
        depth: &depth,
        timeout: Duration::from_secs_f64(a.gate.timeout),
    };
    let mut pb = Progress::new(picked.len() as u64, quiet);
    let verdicts = gating::gate_all(&cat, &picked, &gs, &mut |d, v| {
        pb.step(&format!("gate {}", d.id), v.status.as_str())
    });
    pb.finish();
    let rows: Vec<Vec<String>> = picked
        .iter()
        .map(|d| {
            let v = &verdicts[&d.id];
            if v.status != GateStatus::Pass {
                failed += 1;
            }
            vec![d.id.clone(), v.status.as_str().to_uppercase(), v.detail.clone()]
        })
        .collect();
    print!("{}", table::render(&["subject", "gate", "detail"], &rows, &[false; 3]));
    if failed == 0 {
        println!("Added. Measure it beside the catalogue: cryptoscope run --alg {alg}");
        Ok(0)
    } else {
        println!("Failed builds stay listed (cryptoscope build --list) but are never measured or ranked.");
        Ok(1)
    }
}

#[derive(Args, Clone)]
struct ProfileArgs {
    #[command(flatten)]
    sel: SelectArgs,
    #[command(flatten)]
    gate: GateArgs,
    /// Operations to profile: keypair, encaps, decaps, exchange (repeatable; default all).
    #[arg(long, value_name = "OP")]
    op: Vec<String>,
    /// Profiled calls per operation; counts are reported per call.
    #[arg(long, value_name = "N", default_value_t = 3)]
    calls: u64,
    /// Uncounted calls before the profiled ones (one-time initialisation).
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: u64,
    /// Hide call-tree nodes below this percentage of the instructions.
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    min_share: f64,
    /// Call-tree depth.
    #[arg(long, value_name = "N", default_value_t = 12)]
    depth: usize,
    /// Rows in the function table.
    #[arg(long, value_name = "N", default_value_t = 15)]
    top: usize,
    /// Also write the profiles as JSON (schema cryptoscope.profile/1).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn parse_ops(ops: &[String]) -> Result<Option<Vec<cryptoscope_catalogue::Operation>>> {
    if ops.is_empty() {
        return Ok(None);
    }
    ops.iter()
        .flat_map(|o| o.split(','))
        .map(|o| {
            cryptoscope_catalogue::Operation::parse(o.trim())
                .ok_or_else(|| usage(format!("unknown operation `{o}` (keypair, encaps, decaps, exchange)")))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn cmd_profile(a: &ProfileArgs, quiet: bool) -> Result<i32> {
    let selection = a.sel.selection()?;
    let ops = parse_ops(&a.op)?;
    if a.calls == 0 {
        return Err(usage("--calls must be at least 1"));
    }
    if !(a.min_share >= 0.0 && a.min_share <= 100.0) {
        return Err(usage("--min-share must be a percentage from 0 to 100"));
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    let json = a
        .json
        .as_ref()
        .map(|p| util::check_writable(p).map_err(usage))
        .transpose()?;
    let tool = profile::valgrind_version()?;
    let vectors = util::vectors_dir(a.gate.vectors.as_deref())?;
    let cat = Catalogue::discover()?;
    warn_missing(&cat);
    let picked = selection.pick(&cat)?;
    if let Some(ops) = &ops {
        if !picked.iter().any(|d| ops.iter().any(|o| d.operations().contains(o))) {
            return Err(usage("no selected subject has the requested operation"));
        }
    }
    let depth = gate_settings_depth(&a.gate, true);
    let gsettings = gating::GateSettings {
        vectors: &vectors,
        depth: &depth,
        timeout: Duration::from_secs_f64(a.gate.timeout),
    };
    let settings = profile::Settings {
        calls: a.calls,
        warmup: a.warmup,
        timeout: Duration::from_secs_f64(a.gate.timeout),
        min_share: a.min_share / 100.0,
        depth: a.depth,
        top: a.top,
    };
    let todo: usize = picked
        .iter()
        .map(|d| {
            d.operations()
                .iter()
                .filter(|o| ops.as_ref().is_none_or(|v| v.contains(o)))
                .count()
        })
        .sum();
    let mut pb = Progress::new((picked.len() + todo) as u64, quiet);
    let verdicts = gating::gate_all(&cat, &picked, &gsettings, &mut |d, v| {
        pb.step(&format!("gate {}", d.id), v.status.as_str())
    });
    let mut profiles = Vec::new();
    let mut failures = Vec::new();
    for d in &picked {
        let v = &verdicts[&d.id];
        if v.status != GateStatus::Pass {
            if v.status.is_failure() {
                failures.push(format!(
                    "{}: not profiled, gate {}: {}",
                    d.id,
                    v.status.as_str(),
                    v.detail
                ));
            } else {
                eprintln!("note: {}: not profiled ({}: {})", d.id, v.status.as_str(), v.detail);
            }
            continue;
        }
        let worker = cat.worker(&d.provider).context("worker vanished")?;
        for op in d
            .operations()
            .iter()
            .filter(|o| ops.as_ref().is_none_or(|v| v.contains(o)))
        {
            pb.message(&format!("profile {} {}", d.id, op.as_str()));
            match profile::run_callgrind(worker, d, *op, &settings) {
                Ok(p) => {
                    let prof = profile::summarise(d, *op, &tool, &p, &settings);
                    pb.step(
                        &format!("profile {} {}", d.id, op.as_str()),
                        &format!("{} instructions", table::group(prof.instructions_per_op.round())),
                    );
                    pb.bar.suspend(|| println!("{}", profile::render(&prof)));
                    profiles.push(prof);
                }
                Err(e) if e.is::<profile::SubjectFailed>() => {
                    pb.step(&format!("profile {} {}", d.id, op.as_str()), "failed");
                    failures.push(e.to_string());
                }
                Err(e) => return Err(e),
            }
        }
    }
    pb.finish();
    if let Some(path) = json {
        let doc = serde_json::json!({ "schema": "cryptoscope.profile/1", "profiles": profiles });
        std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")
            .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))?;
        eprintln!("Wrote {}", path.display());
    }
    for f in &failures {
        eprintln!("error: {f}");
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}

#[derive(Args, Clone)]
struct MicroArgs {
    #[command(flatten)]
    sel: SelectArgs,
    #[command(flatten)]
    gate: GateArgs,
    /// Operations: keypair, encaps, decaps (repeatable; default all).
    #[arg(long, value_name = "OP")]
    op: Vec<String>,
    /// Timed operations per probed operation (after one warm-up call); medians are reported.
    #[arg(long, value_name = "N", default_value_t = 31)]
    calls: usize,
    /// Operations counted under callgrind per operation.
    #[arg(long, value_name = "N", default_value_t = 1)]
    profiled_calls: u64,
    /// Uncounted calls under callgrind before the counted ones.
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: u64,
    /// Skip callgrind: cycles from the probes only (seconds instead of minutes).
    #[arg(long)]
    no_instructions: bool,
    /// Also write the rows as JSON (schema cryptoscope.micro/1).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn cmd_micro(a: &MicroArgs, quiet: bool) -> Result<i32> {
    if a.sel.alg.is_empty() {
        return Err(usage("micro needs --alg NAME (e.g. --alg NTRU-HRSS-701)"));
    }
    let selection = a.sel.selection()?;
    let ops = parse_ops(&a.op)?;
    if a.calls == 0 || a.profiled_calls == 0 {
        return Err(usage("--calls and --profiled-calls must be at least 1"));
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    let json = a
        .json
        .as_ref()
        .map(|p| util::check_writable(p).map_err(usage))
        .transpose()?;
    let tool = if a.no_instructions {
        String::new()
    } else {
        profile::valgrind_version()?
    };
    // Build subjects load their probed libraries in every worker this command starts
    // (so the gate checks the code that is timed); callgrind counts the plain library.
    std::env::set_var(cryptoscope_worker::builds::PROBES_ENV, "1");
    let vectors = util::vectors_dir(a.gate.vectors.as_deref())?;
    let cat = Catalogue::discover()?;
    warn_missing(&cat);
    let picked = selection.pick(&cat)?;
    let wanted = |d: &cryptoscope_catalogue::Descriptor| -> Vec<cryptoscope_catalogue::Operation> {
        d.operations()
            .iter()
            .copied()
            .filter(|o| ops.as_ref().is_none_or(|v| v.contains(o)))
            .collect()
    };
    if picked.iter().all(|d| wanted(d).is_empty()) {
        return Err(usage("no selected subject has the requested operation"));
    }
    let depth = gate_settings_depth(&a.gate, true);
    let timeout = Duration::from_secs_f64(a.gate.timeout);
    let gsettings = gating::GateSettings {
        vectors: &vectors,
        depth: &depth,
        timeout,
    };
    let settings = profile::Settings {
        calls: a.profiled_calls,
        warmup: a.warmup,
        timeout,
        min_share: 0.0,
        depth: 0,
        top: 0,
    };
    let steps: usize = picked
        .iter()
        .map(|d| 1 + if a.no_instructions { 0 } else { wanted(d).len() } + usize::from(d.provider == "build"))
        .sum();
    let mut pb = Progress::new(steps as u64, quiet);
    let verdicts = gating::gate_all(&cat, &picked, &gsettings, &mut |d, v| {
        pb.step(&format!("gate {}", d.id), v.status.as_str())
    });
    let mut rows: Vec<micro::MicroRow> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut unit = String::from("TSC");
    let mut probe_cost: Option<f64> = None;
    let mut unprobed = Vec::new();
    for d in &picked {
        let v = &verdicts[&d.id];
        if v.status != GateStatus::Pass {
            if v.status.is_failure() {
                failures.push(format!(
                    "{}: not measured, gate {}: {}",
                    d.id,
                    v.status.as_str(),
                    v.detail
                ));
            } else {
                eprintln!("note: {}: not measured ({}: {})", d.id, v.status.as_str(), v.detail);
            }
            continue;
        }
        let worker = cat.worker(&d.provider).context("worker vanished")?;
        let d_ops = wanted(d);
        if !a.no_instructions {
            for op in &d_ops {
                let label = format!("callgrind {} {}", d.id, op.as_str());
                pb.message(&label);
                match profile::run_callgrind(worker, d, *op, &settings) {
                    Ok(p) => {
                        let prof = profile::summarise(d, *op, &tool, &p, &settings);
                        pb.step(&label, &format!("{} monitored", prof.monitored.len()));
                        rows.extend(micro::from_profile(&prof));
                    }
                    Err(e) if e.to_string().contains(profile::UNDECODABLE) => {
                        pb.step(&label, "not countable here");
                        notes.push(e.to_string());
                    }
                    Err(e) if e.is::<profile::SubjectFailed>() => {
                        pb.step(&label, "failed");
                        failures.push(e.to_string());
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        match micro::manifest(d) {
            Some(m) if !d_ops.is_empty() => {
                for n in &m.probe_notes {
                    notes.push(format!("{}: {n}", d.id));
                }
                if m.probes.is_empty() {
                    pb.step(&format!("probes {}", d.id), "none");
                    continue;
                }
                let label = format!("probes {}", d.id);
                pb.message(&label);
                match micro::probe(worker, d, &d_ops, a.calls, timeout) {
                    Ok(list) => {
                        pb.step(&label, &format!("{} operations", list.len()));
                        for p in &list {
                            unit = p.unit.clone();
                            probe_cost = Some(p.overhead);
                            micro::add_probes(&mut rows, p);
                        }
                    }
                    Err(e) => {
                        pb.step(&label, "failed");
                        failures.push(e);
                    }
                }
            }
            Some(_) => {}
            None => unprobed.push(d.id.clone()),
        }
    }
    pb.finish();
    micro::sort(&mut rows);
    let alg = a.sel.alg.join(", ");
    if rows.is_empty() {
        println!(
            "No monitored function ({}) was seen in {alg}.",
            cryptoscope_catalogue::names::MONITORED_FUNCTIONS.join(", ")
        );
    } else {
        let (t, partial) = micro::render(&rows);
        print!("{t}");
        if !a.no_instructions {
            println!(
                "calls/op, instr/call (inclusive) and instr share: {tool} callgrind, exact, {} counted call(s) per operation after {} warm-up, fixed-seed randomness.",
                a.profiled_calls, a.warmup
            );
        }
        let clock = cryptoscope_measure::Clock::new(cryptoscope_measure::clock::ClockChoice::Tsc);
        let hz = clock
            .tsc_hz()
            .map(|h| format!(" at {:.3} GHz", h / 1e9))
            .unwrap_or_default();
        if let Some(cost) = probe_cost {
            let what = if unit == "TSC" {
                format!("TSC reference cycles{hz}")
            } else {
                "nanoseconds".into()
            };
            println!(
                "cycles/call and cycle share: timing probes in our builds, {what}, median of {} operations, the probe's own {cost:.0} subtracted per call.",
                a.calls
            );
        }
        if partial {
            println!("* the wrapper saw fewer calls than callgrind: calls made from inside the function's own source file do not go through it.");
        }
    }
    if !unprobed.is_empty() {
        println!(
            "No cycles for {}: only our own builds carry probes (cryptoscope build --alg {alg}, or add).",
            unprobed.join(", ")
        );
    }
    for n in &notes {
        println!("note: {n}");
    }
    if let Some(path) = json {
        micro::write_json(&path, &rows, &notes, &unit).map_err(|e| usage(e.to_string()))?;
        eprintln!("Wrote {}", path.display());
    }
    for f in &failures {
        eprintln!("error: {f}");
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}

#[derive(Args, Clone)]
struct MemoryArgs {
    #[command(flatten)]
    sel: SelectArgs,
    #[command(flatten)]
    gate: GateArgs,
    /// Counted calls per operation, after one warm-up call; each figure is the largest
    /// (one call for operations that take over a second).
    #[arg(long, value_name = "N", default_value_t = 3)]
    calls: usize,
    /// Gate with the single KAT entry `count = 0` (as `run --quick` does).
    #[arg(long)]
    quick: bool,
    /// Where to write the JSON results (default: results/RUN_ID.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    db: DbArg,
}

/// Per-subject results of a pass: operation -> outcome.
type PassResults<T> = std::collections::BTreeMap<String, std::collections::BTreeMap<String, T>>;

/// What a pass measures for one subject: operation -> outcome.
type PassFn<'a, T> =
    dyn FnMut(&cryptoscope_catalogue::Descriptor, &Progress) -> Result<std::collections::BTreeMap<String, T>> + 'a;

/// Runs one pass (memory, scale) over every gated subject, one progress step each.
fn pass<T, E>(
    picked: &[cryptoscope_catalogue::Descriptor],
    verdicts: &std::collections::BTreeMap<String, gating::Verdict>,
    pb: &mut Progress,
    name: &str,
    measure: &mut PassFn<'_, std::result::Result<T, E>>,
) -> Result<PassResults<std::result::Result<T, E>>> {
    let mut out = PassResults::new();
    for d in picked {
        let v = &verdicts[&d.id];
        let note = if v.status == GateStatus::Pass {
            let m = measure(d, pb)?;
            let ok = m.values().filter(|o| o.is_ok()).count();
            let note = format!("{ok} of {} operations", m.len());
            out.insert(d.id.clone(), m);
            note
        } else {
            format!("not measured ({})", v.status.as_str())
        };
        pb.step(&format!("{name} {}", d.id), &note);
    }
    Ok(out)
}

/// `memory` is `run` with only the memory pass.
fn cmd_memory(m: &MemoryArgs, quiet: bool) -> Result<i32> {
    if m.calls == 0 {
        return Err(usage("--calls must be at least 1"));
    }
    let a = RunArgs {
        resume: None,
        sel: m.sel.clone(),
        gate: m.gate.clone(),
        quick: m.quick,
        samples: None,
        time_budget: None,
        lengths: None,
        rounds: 1,
        cpu: None,
        json: m.json.clone(),
        db: m.db.clone(),
        shard: None,
        group: None,
        baseline: None,
        memory: true,
        counters: None,
        instructions: false,
        memory_only: true,
        memory_calls: m.calls,
        scale: None,
    };
    cmd_run(&a, quiet)
}

/// Parses `K/N` with 1 <= K <= N.
fn parse_shard(s: &str) -> Result<(usize, usize)> {
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
fn run_group(flag: Option<&str>, run_id: &str) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("CRYPTOSCOPE_RUN_GROUP").ok().filter(|g| !g.is_empty()))
        .or_else(|| {
            std::env::var("SLURM_ARRAY_JOB_ID")
                .ok()
                .filter(|g| !g.is_empty())
                .map(|j| format!("slurm-{j}"))
        })
        .unwrap_or_else(|| run_id.to_string())
}

#[derive(Args, Clone)]
struct CtArgs {
    #[command(flatten)]
    sel: SelectArgs,
    #[command(flatten)]
    gate: GateArgs,
    /// memcheck, dudect or both.
    #[arg(long, value_name = "METHOD", default_value = "both", value_parser = ["both", "memcheck", "dudect"])]
    method: String,
    /// Calls per dudect test (both classes together; default 100,000, 20,000 with --quick).
    #[arg(long, value_name = "N")]
    samples: Option<u64>,
    /// Seconds per dudect test at most (default 10; 2 with --quick).
    #[arg(long, value_name = "SECONDS")]
    time_budget: Option<f64>,
    /// Shorter dudect tests and the single-entry gate.
    #[arg(long)]
    quick: bool,
    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    db: DbArg,
}

/// `--db`'s one-line help (every command that stores or reads results).
pub(crate) const DB_HELP: &str =
    "Results database: a SQLite file, or a PostgreSQL server (postgresql://user@host/db, service=NAME) [default: $CRYPTOSCOPE_DB, else ~/.local/share/cryptoscope/results.db]";
/// `--db`'s `--help` text.
pub(crate) const DB_LONG_HELP: &str = "Results database: a SQLite file (created if missing), or a PostgreSQL server named as libpq names one — a URI (postgresql://user@host:port/dbname), a keyword/value string ('host=db.example dbname=results') or a service of pg_service.conf ('service=team'); what it leaves out comes from PGHOST, PGPORT, PGUSER, PGDATABASE, PGSERVICE and the other PG* variables. Give the password in PGPASSWORD or a password file (~/.pgpass, or PGPASSFILE; mode 0600), not on the command line: a password typed here is visible to other users in the process list (cryptoscope replaces it by *** in everything it records).\n\n[default: $CRYPTOSCOPE_DB, else ~/.local/share/cryptoscope/results.db]";

#[derive(Args, Clone)]
struct DbArg {
    #[arg(long = "db", value_name = "PATH|URL", help = DB_HELP, long_help = DB_LONG_HELP)]
    db: Option<String>,
}

impl DbArg {
    fn as_deref(&self) -> Option<&str> {
        self.db.as_deref()
    }
}

/// The database to use: `--db` (a SQLite path or a postgresql:// URL), `$CRYPTOSCOPE_DB`,
/// or the per-user default file.
fn store_location(flag: Option<&str>) -> String {
    flag.map(str::to_string)
        .unwrap_or_else(|| cryptoscope_store::default_path().display().to_string())
}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Progress for long work: a bar with ETA on a terminal, one line per step otherwise
/// (logs, CI), nothing with `--quiet`.
struct Progress {
    bar: ProgressBar,
    lines: bool,
    done: u64,
    total: u64,
}

impl Progress {
    fn new(total: u64, quiet: bool) -> Progress {
        let tty = std::io::stderr().is_terminal();
        Progress {
            bar: progress_bar(total, quiet),
            lines: !quiet && !tty,
            done: 0,
            total,
        }
    }

    fn step(&mut self, what: &str, outcome: &str) {
        self.done += 1;
        self.bar.set_message(what.to_string());
        self.bar.inc(1);
        if self.lines {
            eprintln!("[{}/{}] {what}: {outcome}", self.done, self.total);
        }
    }

    /// Shows what is being done now (on the bar only).
    fn message(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Advances the bar without a log line (intermediate rounds).
    fn step_quiet(&mut self) {
        self.bar.inc(0);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

fn progress_bar(len: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

fn warn_missing(cat: &Catalogue) {
    for (p, why) in &cat.missing {
        eprintln!("warning: provider {p} unavailable: {why}");
    }
}

fn cmd_list(sel: &SelectArgs, json: bool) -> Result<i32> {
    let selection = sel.selection()?;
    let cat = Catalogue::discover()?;
    warn_missing(&cat);
    let mut picked = if sel.alg.is_empty() && !sel.all {
        // `list` shows everything by default, not just the default suite.
        Selection { all: true, ..selection }.pick(&cat)?
    } else {
        selection.pick(&cat)?
    };
    picked.sort_by_key(catalog::sort_key);
    if json {
        println!("{}", serde_json::to_string_pretty(&picked)?);
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = picked
        .iter()
        .map(|d| {
            let level = match (d.nist_level, d.classical_bits) {
                (Some(l), _) => format!("L{l}"),
                (None, Some(b)) => format!("~{b}-bit"),
                _ => "-".into(),
            };
            let avail = match &d.availability {
                Availability::Available => "available".to_string(),
                Availability::Unavailable(r) => format!("unavailable: {r}"),
            };
            let ct = if d.sizes.ciphertext == 0 {
                "-".into()
            } else {
                d.sizes.ciphertext.to_string()
            };
            // A hash has no keys: its digest size goes in the `ss` column.
            let key = |n: usize| {
                if d.family == cryptoscope_catalogue::Family::Hash {
                    "-".into()
                } else {
                    n.to_string()
                }
            };
            vec![
                d.algorithm.clone(),
                d.provider.clone(),
                d.implementation.clone(),
                level,
                key(d.sizes.public_key),
                key(d.sizes.secret_key),
                ct,
                d.sizes.shared_secret.to_string(),
                d.provider_version.clone(),
                avail,
            ]
        })
        .collect();
    print!(
        "{}",
        table::render(
            &[
                "algorithm",
                "provider",
                "impl",
                "level",
                "pk",
                "sk",
                "ct",
                "ss",
                "version",
                "status"
            ],
            &rows,
            &[false, false, false, false, true, true, true, true, false, false]
        )
    );
    println!(
        "{} subjects; sizes in bytes (for hashes, `ss` is the digest; for block ciphers `sk` is the key and `ct` the block; for AEADs `sk` is the key and `ct` the tag).",
        picked.len()
    );
    Ok(0)
}

fn gate_settings_depth(g: &GateArgs, quick: bool) -> String {
    g.kat
        .clone()
        .unwrap_or_else(|| if quick { "single".into() } else { "all".into() })
}

fn cmd_verify(sel: &SelectArgs, g: &GateArgs, quiet: bool) -> Result<i32> {
    let selection = sel.selection()?;
    let vectors = util::vectors_dir(g.vectors.as_deref())?;
    let cat = Catalogue::discover()?;
    warn_missing(&cat);
    let picked = selection.pick(&cat)?;
    let depth = gate_settings_depth(g, false);
    let settings = gating::GateSettings {
        vectors: &vectors,
        depth: &depth,
        timeout: Duration::from_secs_f64(g.timeout),
    };
    let mut pb = Progress::new(picked.len() as u64, quiet);
    let verdicts = gating::gate_all(&cat, &picked, &settings, &mut |d, v| {
        pb.step(&format!("gate {}", d.id), v.status.as_str())
    });
    pb.finish();
    let mut failed = 0;
    let rows: Vec<Vec<String>> = picked
        .iter()
        .map(|d| {
            let v = &verdicts[&d.id];
            if v.status.is_failure() {
                failed += 1;
            }
            let label = match v.status {
                GateStatus::Pass => "PASS".to_string(),
                GateStatus::Unavailable => "unavailable".to_string(),
                s => s.as_str().to_uppercase(),
            };
            vec![
                d.algorithm.clone(),
                d.provider.clone(),
                d.implementation.clone(),
                label,
                v.detail.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table::render(&["algorithm", "provider", "impl", "gate", "detail"], &rows, &[])
    );
    let passed = picked
        .iter()
        .filter(|d| verdicts[&d.id].status == GateStatus::Pass)
        .count();
    println!(
        "{passed} passed, {failed} failed, {} unavailable (KAT depth: {depth}, vectors: {})",
        picked.len() - passed - failed,
        vectors.display()
    );
    Ok(if failed > 0 { 1 } else { 0 })
}

/// A run being resumed: its id, start and group, and the rows it stored.
struct Resumed {
    run_id: String,
    started_at: String,
    rows: Vec<ResultRow>,
}

/// `run --resume RUN`: the stored command line of RUN, parsed again, run under RUN's id
/// with what it stored kept.
fn cmd_resume(reference: &str, a: &RunArgs, quiet: bool) -> Result<i32> {
    let location = store_location(a.db.as_deref());
    let mut store = open_db(&location)?;
    let id = store.resolve(reference).map_err(|e| usage(e.to_string()))?;
    let status = store
        .runs()
        .map_err(|e| usage(e.to_string()))?
        .into_iter()
        .find(|r| r.id == id)
        .map(|r| r.status)
        .unwrap_or_default();
    let prev = store.load_run(&id).map_err(|e| usage(e.to_string()))?;
    if status == "complete" {
        println!("Run {id} is complete: nothing to resume (`cryptoscope show {id}`).");
        return Ok(0);
    }
    let mut orig = match Cli::try_parse_from(prev.command.iter()) {
        Ok(Cli { cmd: Cmd::Run(r), .. }) => r,
        _ => {
            return Err(usage(format!(
                "run {id} was not made by `cryptoscope run` (command: {}), so it cannot be resumed",
                prev.command.display()
            )))
        }
    };
    if orig.resume.is_some() {
        return Err(usage(format!(
            "run {id} stored a resume command line; cannot resume it"
        )));
    }
    // The database is where the run is now, whatever the original command said.
    orig.db.db = Some(location);
    let stored = prev.results.len();
    if !quiet {
        eprintln!(
            "resuming run {id} ({stored} results stored): {}",
            prev.command.iter().skip(1).cloned().collect::<Vec<_>>().join(" ")
        );
    }
    drop(store);
    cmd_run_inner(
        &orig,
        quiet,
        Some(Resumed {
            run_id: id,
            started_at: prev.started_at,
            rows: prev.results,
        }),
    )
}

fn cmd_run(a: &RunArgs, quiet: bool) -> Result<i32> {
    match &a.resume {
        Some(r) => cmd_resume(r, a, quiet),
        None => cmd_run_inner(a, quiet, None),
    }
}

fn cmd_run_inner(a: &RunArgs, quiet: bool, resumed: Option<Resumed>) -> Result<i32> {
    let selection = a.sel.selection()?;
    if let Some(n) = a.samples {
        if n == 0 || n > cryptoscope_measure::sampler::MAX_SAMPLES {
            return Err(usage(format!(
                "--samples must be between 1 and {}",
                cryptoscope_measure::sampler::MAX_SAMPLES
            )));
        }
    }
    if let Some(b) = a.time_budget {
        if !(b > 0.0 && b.is_finite()) {
            return Err(usage("--time-budget must be a positive number of seconds"));
        }
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    if a.rounds == 0 {
        return Err(usage("--rounds must be at least 1"));
    }
    if let Some(c) = a.cpu {
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        if c >= n {
            return Err(usage(format!("--cpu {c}: this machine has CPUs 0..{}", n - 1)));
        }
    }
    let events = a
        .counters
        .as_deref()
        .map(counters::parse_events)
        .transpose()
        .map_err(usage)?;
    if a.instructions {
        profile::valgrind_version()?;
    }
    let vectors = util::vectors_dir(a.gate.vectors.as_deref())?;
    let out_path = a.json.clone().unwrap_or_else(|| PathBuf::from("results"));
    let (started_at, run_id) = match &resumed {
        Some(r) => (r.started_at.clone(), r.run_id.clone()),
        None => (util::now_utc().0, util::run_id()),
    };
    let out_file = if a.json.is_some() {
        out_path.clone()
    } else {
        out_path.join(format!("{run_id}.json"))
    };
    if let Some(parent) = out_file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| usage(format!("cannot create {}: {e}", parent.display())))?;
    }
    // Fail on an unwritable path now, not after an hour of measuring; leave no empty file
    // behind if the run stops on bad input.
    let existed = out_file.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_file)
        .map_err(|e| usage(format!("cannot write {}: {e}", out_file.display())))?;
    if !existed {
        let _ = std::fs::remove_file(&out_file);
    }

    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    let mut store = open_db(&store_location(a.db.as_deref()))?;
    let cat = Catalogue::discover()?;
    warn_missing(&cat);
    let mut picked = selection.pick(&cat)?;
    if let Some((k, n)) = shard {
        // Catalogue order is deterministic, so every shard computes the same split.
        picked = picked
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % n == k - 1)
            .map(|(_, d)| d)
            .collect();
        if picked.is_empty() {
            return Err(usage(format!("--shard {k}/{n}: this slice of the selection is empty")));
        }
    }
    if let Some(b) = &a.baseline {
        if !picked.iter().any(|d| match b.split_once('/') {
            Some((p, i)) => d.provider == p && d.implementation == i,
            None => d.implementation == *b,
        }) {
            let mut known: Vec<String> = picked.iter().map(|d| d.implementation.clone()).collect();
            known.sort();
            known.dedup();
            return Err(usage(format!(
                "--baseline {b}: no selected subject has that implementation (selected: {})",
                known.join(", ")
            )));
        }
    }
    // Resuming: subjects whose every operation is stored (all visits of a multi-round run)
    // are kept as stored; the others are gated and measured from the start.
    let all_picked: Vec<String> = picked.iter().map(|d| d.id.clone()).collect();
    let mut kept: Vec<ResultRow> = Vec::new();
    let mut stored_ops: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    if let Some(r) = &resumed {
        let want_rounds = a.samples.map_or(a.rounds, |n| a.rounds.min(n));
        let lengths = a
            .lengths
            .as_deref()
            .map(run::parse_lengths)
            .transpose()
            .map_err(usage)?;
        let complete = |d: &cryptoscope_catalogue::Descriptor| -> bool {
            let ops: Vec<String> = match (&lengths, d.family) {
                (Some(l), cryptoscope_catalogue::Family::Hash) => l.iter().map(|n| format!("hash:{n}")).collect(),
                _ => d.operations().iter().map(|o| o.as_str().to_string()).collect(),
            };
            ops.iter().all(|op| {
                r.rows.iter().any(|x| {
                    x.subject == d.id
                        && &x.operation == op
                        && (x.gate != GateStatus::Pass
                            || want_rounds <= 1
                            || x.visits.len() == want_rounds
                            || x.median_ns.is_none())
                })
            })
        };
        let (done, todo): (Vec<_>, Vec<_>) = picked.into_iter().partition(|d| complete(d));
        // One-round runs also keep the operations stored of a subject interrupted halfway
        // and measure only the others; a multi-round subject starts again (its rows hold
        // merged visits).
        kept = r
            .rows
            .iter()
            .filter(|x| done.iter().any(|d| d.id == x.subject) || (want_rounds <= 1 && x.gate == GateStatus::Pass))
            .cloned()
            .collect();
        if want_rounds <= 1 {
            for x in kept.iter().filter(|x| todo.iter().any(|d| d.id == x.subject)) {
                stored_ops
                    .entry(x.subject.clone())
                    .or_default()
                    .push(x.operation.clone());
            }
        }
        if !quiet {
            eprintln!(
                "{} of {} subjects are stored and kept; measuring the other {}",
                done.len(),
                done.len() + todo.len(),
                todo.len()
            );
        }
        picked = todo;
    }
    let clock = Clock::new(ClockChoice::Auto);
    let budget = Duration::from_secs_f64(a.time_budget.unwrap_or(if a.quick { 1.0 } else { 12.0 }));
    let mut plan = if a.quick {
        Plan::quick(budget)
    } else {
        Plan::standard(budget)
    };
    if let Some(n) = a.samples {
        plan.min_samples = n;
        plan.max_samples = n;
        plan.floor_samples = n;
        plan.target_rel_ci = 0.0;
        plan.budget = Duration::from_secs(u64::MAX / 4);
    }
    let hash_ops = a
        .lengths
        .as_deref()
        .map(|l| run::parse_lengths(l).map_err(usage))
        .transpose()?
        .map(|v| {
            v.into_iter()
                .map(cryptoscope_catalogue::Operation::Hash)
                .collect::<Vec<_>>()
        });
    let settings = run::MeasureSettings {
        plan,
        budget: if a.samples.is_some() {
            Duration::from_secs(10 * 365 * 86_400)
        } else {
            budget
        },
        cpu: a.cpu,
        tsc_hz: clock.tsc_hz(),
        hash_ops,
        timeout: Duration::from_secs_f64(a.gate.timeout),
        run_start_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1e3)
            .unwrap_or(0.0),
        stored: stored_ops,
    };
    let depth = gate_settings_depth(&a.gate, a.quick);
    let gsettings = gating::GateSettings {
        vectors: &vectors,
        depth: &depth,
        timeout: Duration::from_secs_f64(a.gate.timeout),
    };

    let mut env = cryptoscope_measure::env::capture(clock.tsc_hz(), clock.perf_status());
    env.compilers
        .insert("rustc".into(), cryptoscope_worker::build_info::RUSTC.into());
    env.compilers
        .insert("cc".into(), cryptoscope_worker::build_info::C_COMPILER.into());
    let mut versions: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for d in &cat.subjects {
        versions
            .entry(d.provider.clone())
            .or_default()
            .insert(d.provider_version.clone());
    }
    for (provider, v) in versions {
        env.libraries
            .insert(provider, v.into_iter().collect::<Vec<_>>().join("; "));
    }
    let mut run_file = RunFile {
        schema: SCHEMA.into(),
        run_id: run_id.clone(),
        started_at,
        finished_at: String::new(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_report::RecordedCommand::of_this_process(),
        config: run::config_echo(
            &selection,
            &settings,
            a.quick,
            &depth,
            a.samples.map_or(a.rounds, |n| a.rounds.min(n)),
            a.baseline.clone(),
        ),
        environment: env,
        results: Vec::new(),
        applications: Vec::new(),
    };
    let group = run_group(a.group.as_deref(), &run_id);
    if resumed.is_some() {
        store.reopen_run(&run_id).map_err(|e| usage(e.to_string()))?;
    } else {
        store
            .begin_run_in_group(&run_file, &group)
            .map_err(|e| usage(e.to_string()))?;
    }
    let mut store_error: Option<String> = None;

    let with_memory = a.memory || a.memory_only;
    let timing = !a.memory_only && a.scale.is_none();
    let steps = picked.len()
        * (1 + usize::from(timing)
            + usize::from(with_memory)
            + usize::from(a.scale.is_some())
            + usize::from(events.is_some())
            + usize::from(a.instructions));
    let mut pb = Progress::new(steps as u64, quiet);
    let verdicts = gating::gate_all(&cat, &picked, &gsettings, &mut |d, v| {
        pb.step(&format!("gate {}", d.id), v.status.as_str())
    });
    // The memory and throughput passes, apart from timing: their results go into the rows.
    let mut code: std::collections::BTreeMap<String, (u64, String)> = Default::default();
    let mem = if with_memory {
        let preload = memory::preload_library().map_err(|e| usage(format!("{e:#}")))?;
        let mut sizes = memory::CodeSizes::default();
        for d in &picked {
            if let Some(c) = cat.worker(&d.provider).and_then(|bin| sizes.of(bin, d)) {
                code.insert(d.id.clone(), c);
            }
        }
        let timeout = Duration::from_secs_f64(a.gate.timeout);
        pass(&picked, &verdicts, &mut pb, "memory", &mut |d, _| {
            memory::measure(&cat, d, &preload, a.memory_calls, timeout)
        })?
    } else {
        Default::default()
    };
    let scaled = match &a.scale {
        Some(ss) => pass(&picked, &verdicts, &mut pb, "scale", &mut |d, pb| {
            scale::measure(&cat, d, ss, Duration::from_secs_f64(a.gate.timeout), &mut |what| {
                pb.message(what)
            })
        })?,
        None => Default::default(),
    };
    let counted = match &events {
        Some(ev) => pass(&picked, &verdicts, &mut pb, "counters", &mut |d, _| {
            counters::measure(&cat, d, ev, 101, Duration::from_secs_f64(a.gate.timeout))
        })?,
        None => Default::default(),
    };
    let instructions = if a.instructions {
        pass(&picked, &verdicts, &mut pb, "instructions", &mut |d, pb| {
            pb.message(&format!("callgrind {}", d.id));
            counters::instructions(&cat, d, Duration::from_secs_f64(a.gate.timeout))
        })?
    } else {
        Default::default()
    };
    let decorate = |row: &mut ResultRow| {
        counters::apply(
            row,
            counted.get(&row.subject).and_then(|m| m.get(&row.operation)),
            instructions.get(&row.subject).and_then(|m| m.get(&row.operation)),
        );
        memory::apply(
            row,
            mem.get(&row.subject).and_then(|m| m.get(&row.operation)),
            code.get(&row.subject),
        );
        scale::apply(row, scaled.get(&row.subject).and_then(|m| m.get(&row.operation)));
    };
    let mut rows: Vec<ResultRow> = Vec::new();
    // With --samples N, never more visits than samples.
    let rounds = a.samples.map_or(a.rounds, |n| a.rounds.min(n));
    if !timing {
        for d in &picked {
            let v = &verdicts[&d.id];
            for o in d.operations() {
                if a.scale
                    .as_ref()
                    .and_then(|s| s.ops.as_ref())
                    .is_some_and(|ops| !ops.contains(&o))
                {
                    continue;
                }
                let mut row = ResultRow::without_numbers(d, o.as_str(), v.status, v.detail.clone());
                decorate(&mut row);
                if let Err(e) = store.add_result(&run_id, &row) {
                    store_error.get_or_insert(e.to_string());
                }
                rows.push(row);
            }
        }
    } else if rounds > 1 {
        // Every visit's samples are merged into the subject's rows and stored at once.
        let r = rounds;
        let mut visit = run::MeasureSettings {
            plan: settings.plan.clone(),
            budget: settings.budget / r as u32,
            hash_ops: settings.hash_ops.clone(),
            stored: settings.stored.clone(),
            ..settings
        };
        visit.plan.max_samples = visit.plan.max_samples.div_ceil(r);
        // At least 10 samples per visit (when the plan allows that many), so every visit
        // has a median of its own.
        visit.plan.min_samples = visit.plan.min_samples.div_ceil(r).max(10).min(visit.plan.max_samples);
        visit.plan.floor_samples = visit.plan.floor_samples.div_ceil(r).max(1);
        visit.plan.warmup /= r as u32;
        let mut acc: std::collections::BTreeMap<(String, String), ResultRow> = Default::default();
        for round in 0..r {
            if let Some(n) = a.samples {
                // Exactly N in total: the first N mod R visits take one more.
                let per = n / r + usize::from(round < n % r);
                (visit.plan.min_samples, visit.plan.max_samples, visit.plan.floor_samples) = (per, per, per);
            }
            for d in picked.iter().filter(|d| verdicts[&d.id].status == GateStatus::Pass) {
                let measured = run::measure(&cat, d, &verdicts[&d.id], &visit, &mut |row| decorate(row))?;
                for row in measured {
                    let merged = match acc.entry((row.subject.clone(), row.operation.clone())) {
                        std::collections::btree_map::Entry::Vacant(e) => e.insert(row),
                        std::collections::btree_map::Entry::Occupied(e) => {
                            let m = e.into_mut();
                            run::merge_visit(m, row);
                            m
                        }
                    };
                    // Stored after every visit, so an interrupted run keeps what it measured.
                    if let Err(e) = store.add_result(&run_id, merged) {
                        store_error.get_or_insert(e.to_string());
                    }
                }
                if round + 1 < r {
                    pb.step_quiet();
                }
            }
        }
        for d in &picked {
            let v = &verdicts[&d.id];
            let measured: Vec<ResultRow> = if v.status == GateStatus::Pass {
                // The operations measured (a hash's --lengths, not its default lengths).
                run::operations(d, settings.hash_ops.as_deref())
                    .iter()
                    .filter_map(|o| acc.remove(&(d.id.clone(), o.as_str().to_string())))
                    .collect()
            } else {
                run::measure(&cat, d, v, &settings, &mut |row| {
                    decorate(row);
                    if let Err(e) = store.add_result(&run_id, row) {
                        store_error.get_or_insert(e.to_string());
                    }
                })?
            };
            let n = measured.iter().filter(|r| r.median_ns.is_some()).count();
            rows.extend(measured);
            pb.step(
                &format!("measure {} ({r} rounds)", d.id),
                &format!("{n} operations measured"),
            );
        }
    }
    for d in picked.iter().filter(|_| rounds <= 1 && timing) {
        let v = &verdicts[&d.id];
        let measured = run::measure(&cat, d, v, &settings, &mut |row| {
            decorate(row);
            if let Err(e) = store.add_result(&run_id, row) {
                store_error.get_or_insert(e.to_string());
            }
        })?;
        let note = if v.status == GateStatus::Pass {
            let n = measured.iter().filter(|r| r.median_ns.is_some()).count();
            format!("{n} of {} operations measured", measured.len())
        } else {
            format!("not measured ({})", v.status.as_str())
        };
        rows.extend(measured);
        pb.step(&format!("measure {}", d.id), &note);
    }
    pb.finish();
    run_file.finished_at = util::now_utc().0;
    if resumed.is_some() {
        // Stored rows first in catalogue order, as an uninterrupted run would list them.
        rows.extend(kept);
        rows.sort_by_key(|r| all_picked.iter().position(|id| *id == r.subject));
    }
    run_file.results = rows;
    // Did the machine hold its speed? Level shifts in any operation's samples say no.
    let (shifts, stability) = run::shifts_of(&run_file.results);
    if timing {
        run_file.environment.stability = Some(stability.clone());
        if let Err(e) = store.set_environment(&run_id, &run_file.environment) {
            store_error.get_or_insert(e.to_string());
        }
    }
    if let Err(e) = store.finish_run(&run_id, &run_file.finished_at) {
        store_error.get_or_insert(e.to_string());
    }
    let text = serde_json::to_string(&run_file)?;
    std::fs::write(&out_file, text).with_context(|| format!("writing {}", out_file.display()))?;

    if timing {
        print!("{}", table::results(&run_file.results));
        ct_beside_speed(&mut store, &run_file.results);
        if let Some(t) = a
            .baseline
            .as_deref()
            .and_then(|b| table::speedups(&run_file.results, b))
        {
            print!("\nSpeed-up against {}:\n{t}", a.baseline.as_deref().unwrap_or_default());
        }
    }
    if timing {
        if let Some(t) = table::throughput(&run_file.results) {
            print!("\n{t}");
        }
        if let Some(t) = cryptoscope_report::cipher::table(&run_file.results, run_file.environment.core_per_tsc) {
            print!("\n{t}");
        }
        if let Some(t) = cryptoscope_report::aead::table(&run_file.results) {
            print!("\n{t}");
        }
    }
    if let Some(t) = table::counters(&run_file.results) {
        print!("\n{t}");
    }
    if let Some(ss) = &a.scale {
        let e = &run_file.environment;
        print!(
            "{}",
            scale::table(&run_file.results, &ss.threads, e.logical_cpus, e.physical_cores, e.smt)
        );
    }
    if with_memory {
        if timing {
            println!();
        }
        print!("{}", table::memory(&run_file.results));
        println!(
            "Heap: malloc-family calls inside the operation (after one warm-up call), bytes requested, most bytes live at once. \
Stack: high-water mark below the stack pointer at the call (painted stack). Largest of {} calls. Code: text of the \
implementation's own named functions where they can be told apart (see --json for what was summed).",
            a.memory_calls
        );
    }
    let failed: Vec<&ResultRow> = run_file.results.iter().filter(|r| r.gate.is_failure()).collect();
    let measured = run_file
        .results
        .iter()
        .filter(|r| r.median_ns.is_some() || (!timing && (r.stack_bytes.is_some() || r.scaling.is_some())))
        .count();
    let e = &run_file.environment;
    let timing_note = if !timing {
        String::new()
    } else {
        format!(
            " Cycles: {}{}; timer overhead {:.0} cycles subtracted.{}",
            clock.source().label(),
            clock
                .tsc_hz()
                .map(|h| format!(" at {:.3} GHz", h / 1e9))
                .unwrap_or_default(),
            clock.overhead_cycles(),
            match (clock.source(), e.core_per_tsc) {
                (cryptoscope_measure::clock::CycleSource::TscReferenceCycles, Some(r)) => format!(
                    " The core ran at about {r:.2} × the TSC's rate (a dependent-addition chain timed with the \
                     TSC; no PMU): core cycles ≈ these × {r:.2}."
                ),
                _ => String::new(),
            }
        )
    };
    println!(
        "\n{} operations measured, {} failed, {} unavailable.{timing_note}",
        measured,
        failed.len(),
        run_file
            .results
            .iter()
            .filter(|r| r.gate == GateStatus::Unavailable)
            .count(),
    );
    // Each failed subject once, with its cause: what a user must look at first.
    let mut seen = std::collections::BTreeSet::new();
    let causes: Vec<String> = run_file
        .results
        .iter()
        .filter(|r| !matches!(r.gate, GateStatus::Pass | GateStatus::Unavailable) && seen.insert(r.subject.clone()))
        .map(|r| format!("  {} [{}] {}", r.subject, r.gate.as_str(), r.gate_detail))
        .collect();
    if !causes.is_empty() {
        println!("{} subjects failed (exit code 1):", causes.len());
        for c in &causes {
            println!("{c}");
        }
    }
    println!(
        "Machine: {} ({} logical CPUs{}), PMU: {}.",
        e.cpu_model.as_deref().unwrap_or("unknown CPU"),
        e.logical_cpus,
        e.hypervisor
            .as_deref()
            .map(|h| format!(", hypervisor {h}"))
            .unwrap_or_default(),
        e.perf_core_cycles
    );
    if !shifts.is_empty() {
        println!(
            "Unstable machine: {} of {} operations changed speed by 10% or more while being measured (largest x{:.2}); \
the report marks where. {}:",
            stability.shifted_operations,
            stability.operations,
            stability.largest_change,
            if shifts.len() > 5 { "The first five" } else { "When" }
        );
        for (i, sh) in shifts.iter().take(5) {
            let r = &run_file.results[*i];
            let when: Vec<String> = sh
                .iter()
                .map(|s| {
                    let t = r
                        .raw_t_s
                        .get(s.at)
                        .map(|t| format!("{t:.1} s into the run"))
                        .unwrap_or_default();
                    format!("x{:.2} at sample {} ({t})", s.after / s.before, s.at)
                })
                .collect();
            println!("  {} {}: {}", r.subject, r.operation, when.join(", "));
        }
    }
    let report_file = out_file.with_extension("html");
    let report_note = match write_report(std::slice::from_ref(&run_file), &report_file) {
        Ok(()) => report_file.display().to_string(),
        Err(e) => format!("not written ({e})"),
    };
    println!("Results: {}", out_file.display());
    println!("Report:  {report_note}");
    match store_error {
        None if group != run_id => println!(
            "Store:   {} (run {run_id}, group {group}; `cryptoscope report group:{group}`)",
            store.location()
        ),
        None => println!(
            "Store:   {} (run {run_id}; `cryptoscope show {run_id}`)",
            store.location()
        ),
        Some(e) => {
            eprintln!(
                "error: some results could not be stored in {}: {e} (all are in {})",
                store.location(),
                out_file.display()
            );
            return Ok(2);
        }
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

/// Opens (creating if needed) the results database at `location`, a path or a PostgreSQL
/// server, and tells the user on stderr what opening it changed or warned about.
fn open_db(location: &str) -> Result<cryptoscope_store::Store> {
    let store = cryptoscope_store::Store::open_any(location).map_err(|e| usage(e.to_string()))?;
    for w in store.warnings() {
        eprintln!("warning: {w}");
    }
    if let Some(m) = store.migrated() {
        let scrubbed = match m.scrubbed_commands {
            0 => "no stored command line held a password".to_string(),
            1 => "the password in 1 stored command line is now ***".to_string(),
            n => format!("the passwords in {n} stored command lines are now ***"),
        };
        eprintln!(
            "note: results database {} upgraded from schema version {} to {}; {scrubbed}",
            store.location(),
            m.from,
            m.to
        );
    }
    Ok(store)
}

/// Opens an existing results database for reading (a missing file is an input error).
fn open_store(db: &DbArg) -> Result<cryptoscope_store::Store> {
    let location = store_location(db.as_deref());
    if !cryptoscope_store::is_server(&location) && !Path::new(&location).exists() {
        return Err(usage(format!(
            "no results database at {location} (run `cryptoscope run` first, or pass --db)"
        )));
    }
    open_db(&location)
}

fn write_report(runs: &[RunFile], out: &std::path::Path) -> Result<()> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(out, cryptoscope_report::html::render(runs))
        .map_err(|e| usage(format!("cannot write {}: {e}", out.display())))
}

fn cmd_report(runs: &[String], out: Option<&std::path::Path>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(db)?;
    let refs: Vec<String> = if runs.is_empty() {
        vec!["latest".into()]
    } else {
        runs.to_vec()
    };
    let mut loaded = Vec::new();
    for r in &refs {
        loaded.push(store.load(r).map_err(|e| usage(e.to_string()))?);
    }
    let out = out
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("results/report-{}.html", loaded[0].run_id)));
    write_report(&loaded, &out)?;
    println!("Report: {}", out.display());
    Ok(0)
}

/// What an application driver (tahoe, tls, tunnel) hands over to be stored.
struct AppRun {
    suite: &'static str,
    algorithms: Vec<String>,
    quick: bool,
    rounds: usize,
    /// Extra library versions for the environment record.
    libraries: Vec<(String, String)>,
    items: Vec<cryptoscope_report::AppResult>,
}

/// Stores an application run (one transaction per item, like `run`), then prints what
/// `print` renders from the items, writes `json` if asked, and says where the run went.
/// Returns `code`, or 2 when the results could not be stored.
fn finish_app_run(
    store: &mut cryptoscope_store::Store,
    run_id: &str,
    started_at: String,
    app: AppRun,
    print: &dyn Fn(&[cryptoscope_report::AppResult]),
    json: Option<(PathBuf, serde_json::Value)>,
    code: i32,
) -> Result<i32> {
    let clock = Clock::new(ClockChoice::Auto);
    let mut env = cryptoscope_measure::env::capture(clock.tsc_hz(), clock.perf_status());
    env.libraries.extend(app.libraries);
    let run_file = RunFile {
        schema: SCHEMA.into(),
        run_id: run_id.to_string(),
        started_at,
        finished_at: util::now_utc().0,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_report::RecordedCommand::of_this_process(),
        config: cryptoscope_report::RunConfig {
            suites: vec![app.suite.into()],
            algorithms: app.algorithms,
            quick: app.quick,
            rounds: app.rounds,
            ..Default::default()
        },
        environment: env,
        results: Vec::new(),
        applications: app.items,
    };
    let stored = store
        .begin_run(&run_file)
        .and_then(|_| {
            run_file
                .applications
                .iter()
                .try_for_each(|i| store.add_app_result(run_id, i))
        })
        .and_then(|_| store.finish_run(run_id, &run_file.finished_at));
    print(&run_file.applications);
    if let Some((p, v)) = json {
        std::fs::write(&p, serde_json::to_string_pretty(&v)?)
            .map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
        println!("JSON:    {}", p.display());
    }
    match stored {
        Ok(()) => println!(
            "Store:   {} (run {run_id}; `cryptoscope report {run_id}`)",
            store.location()
        ),
        Err(e) => {
            eprintln!("error: results not stored: {e}");
            return Ok(2);
        }
    }
    Ok(code)
}

fn cmd_ct(a: &CtArgs, quiet: bool) -> Result<i32> {
    let no_selection = a.sel.suite.is_empty() && a.sel.alg.is_empty() && a.sel.provider.is_empty();
    let mut selection = a.sel.selection()?;
    if no_selection {
        // The whole catalogue: every family, every algorithm.
        selection.suites = cryptoscope_catalogue::names::SUITES
            .iter()
            .map(|s| s.to_string())
            .collect();
        selection.all = true;
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    let samples = a.samples.unwrap_or(if a.quick { 20_000 } else { 100_000 });
    if samples < 2_000 {
        return Err(usage("--samples must be at least 2000"));
    }
    let budget = a.time_budget.unwrap_or(if a.quick { 2.0 } else { 10.0 });
    if !(budget > 0.0 && budget.is_finite()) {
        return Err(usage("--time-budget must be a positive number of seconds"));
    }
    let use_memcheck = a.method != "dudect";
    let use_dudect = a.method != "memcheck";
    let decls = ct::declarations().map_err(usage)?;
    let valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if use_memcheck && valgrind.is_none() {
        return Err(usage(
            "valgrind is not installed (the memcheck method needs it): run scripts/setup.sh, or use --method dudect",
        ));
    }
    let (mut store, json_out) = open_app_store(a.db.as_deref(), a.json.as_ref())?;
    let vectors = util::vectors_dir(a.gate.vectors.as_deref())?;
    let cat = Catalogue::discover()?;
    warn_missing(&cat);
    let picked = selection.pick(&cat)?;
    let (started_at, _) = util::now_utc();
    let run_id = util::run_id();
    let timeout = Duration::from_secs_f64(a.gate.timeout);
    let depth = gate_settings_depth(&a.gate, true);
    let settings = gating::GateSettings {
        vectors: &vectors,
        depth: &depth,
        timeout,
    };
    let mut pb = Progress::new(picked.len() as u64 * 2, quiet);
    let verdicts = gating::gate_all(&cat, &picked, &settings, &mut |d, v| {
        pb.step(&format!("gate {}", d.id), v.status.as_str())
    });
    let clock = Clock::new(ClockChoice::Tsc);
    let dd = ct::DudectSettings {
        samples,
        budget: Duration::from_secs_f64(budget),
        tsc_hz: clock.tsc_hz(),
        timeout,
    };
    let tmp = util::private_temp_dir("ct")?;
    // The run is recorded first and every item committed as soon as it exists, so an
    // interrupted audit keeps what it found.
    let mut env = cryptoscope_measure::env::capture(clock.tsc_hz(), clock.perf_status());
    if let Some(v) = &valgrind {
        env.libraries.insert("valgrind".into(), v.clone());
    }
    let mut run_file = RunFile {
        schema: SCHEMA.into(),
        run_id: run_id.clone(),
        started_at: started_at.clone(),
        finished_at: String::new(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_report::RecordedCommand::of_this_process(),
        config: cryptoscope_report::RunConfig {
            suites: vec!["ct".into()],
            algorithms: picked
                .iter()
                .map(|d| d.algorithm.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            quick: a.quick,
            rounds: 1,
            ..Default::default()
        },
        environment: env,
        results: Vec::new(),
        applications: Vec::new(),
    };
    let mut store_error: Option<String> = store.begin_run(&run_file).err().map(|e| e.to_string());
    let mut items = vec![cryptoscope_report::AppResult {
        driver: ct::DRIVER.into(),
        item: "setup".into(),
        data: serde_json::json!({
            "valgrind": valgrind,
            "methods": a.method,
            "dudect_samples": samples,
            "dudect_budget_s": budget,
            "threshold": cryptoscope_measure::ttest::THRESHOLD,
            "clock": clock.source().label(),
            "tsc_hz": clock.tsc_hz(),
        }),
    }];
    if let Err(e) = store.add_app_result(&run_id, &items[0]) {
        store_error.get_or_insert(e.to_string());
    }
    let mut failed = 0;
    for d in &picked {
        let v = &verdicts[&d.id];
        if v.status != GateStatus::Pass {
            if !matches!(v.status, GateStatus::Unavailable) {
                failed += 1;
            }
            pb.step(
                &format!("audit {}", d.id),
                &format!("not audited ({})", v.status.as_str()),
            );
            for op in ct::operations(d) {
                let item = ct::item(
                    d,
                    op,
                    serde_json::json!({
                        "subject": d.id, "operation": op, "family": d.family.as_str(),
                        "verdict": "not audited",
                        "gate": v.status.as_str(), "gate_detail": v.detail,
                    }),
                );
                if let Err(e) = store.add_app_result(&run_id, &item) {
                    store_error.get_or_insert(e.to_string());
                }
                items.push(item);
            }
            continue;
        }
        pb.message(&format!("memcheck {}", d.id));
        let mc = if use_memcheck {
            Some(ct::memcheck(&cat, d, &decls, &tmp.path, timeout))
        } else {
            None
        };
        if let Some(Err(e)) = &mc {
            if e.starts_with("crashed") || e.starts_with("timed out") {
                failed += 1;
            }
        }
        for op in ct::operations(d) {
            let mcv = mc
                .as_ref()
                .map_or(serde_json::json!({"status": "not run"}), |m| ct::memcheck_value(m, op));
            let mut dudects = serde_json::Map::new();
            if use_dudect {
                pb.message(&format!("dudect {} {op}", d.id));
                dudects.insert("warm".into(), ct::dudect(&cat, d, op, false, &dd));
                // Table-driven code shows best with the caches evicted: block ciphers, and
                // an AEAD's encryption (software AES-GCM is often T-table code).
                if d.family == cryptoscope_catalogue::Family::Cipher
                    || (d.family == cryptoscope_catalogue::Family::Aead && *op == "seal")
                {
                    dudects.insert("cold".into(), ct::dudect(&cat, d, op, true, &dd));
                }
            }
            // A declared public value that makes the time vary: a dudect leak here cannot be
            // told from it, and says so.
            let timing = ct::declared_timing(&decls, &d.algorithm, op);
            if let Some(t) = &timing {
                for v in dudects.values_mut() {
                    if v["status"] == "leak" {
                        v["inconclusive"] = serde_json::Value::String(t.clone());
                    }
                }
            }
            let dv: Vec<&serde_json::Value> = dudects.values().collect();
            let verdict = ct::verdict(&mcv, &dv, timing.is_some());
            let mut item = ct::item(
                d,
                op,
                serde_json::json!({
                    "subject": d.id, "algorithm": d.algorithm, "provider": d.provider,
                    "implementation": d.implementation, "family": d.family.as_str(),
                    "operation": op, "verdict": verdict, "gate": "pass",
                    "memcheck": mcv, "dudect": dudects,
                }),
            );
            ct_attach_speed(&mut store, std::slice::from_mut(&mut item));
            if let Err(e) = store.add_app_result(&run_id, &item) {
                store_error.get_or_insert(e.to_string());
            }
            items.push(item);
        }
        pb.step(&format!("audit {}", d.id), "done");
    }
    pb.finish();
    run_file.finished_at = util::now_utc().0;
    if let Err(e) = store.finish_run(&run_id, &run_file.finished_at) {
        store_error.get_or_insert(e.to_string());
    }
    print!("{}", cryptoscope_report::ct::table(&items));
    if let Some(p) = json_out {
        std::fs::write(&p, serde_json::to_string_pretty(&items)?)
            .map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
        println!("JSON:    {}", p.display());
    }
    match store_error {
        None => println!(
            "Store:   {} (run {run_id}; `cryptoscope report {run_id}`)",
            store.location()
        ),
        Some(e) => {
            eprintln!("error: results not stored: {e}");
            return Ok(2);
        }
    }
    Ok(i32::from(failed > 0))
}

/// Under a speed table: the latest constant-time verdicts the store holds for the measured
/// subjects, so a fast result with a leak is shown as such.
fn ct_beside_speed(store: &mut cryptoscope_store::Store, rows: &[ResultRow]) {
    let measured: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.median_ns.is_some())
        .map(|r| r.subject.as_str())
        .collect();
    if measured.is_empty() {
        return;
    }
    let Ok(runs) = store.runs() else { return };
    let mut audited: std::collections::BTreeSet<String> = Default::default();
    let mut flags: Vec<(String, String, String, String)> = Vec::new();
    for r in runs.iter().filter(|r| r.suites == "ct").take(10) {
        let Ok(run) = store.load(&r.id) else { continue };
        let mut here: std::collections::BTreeSet<String> = Default::default();
        for a in run
            .applications
            .iter()
            .filter(|a| a.driver == ct::DRIVER && a.item != "setup")
        {
            if let Some(s) = a.data["subject"].as_str() {
                if measured.contains(s) && !audited.contains(s) && a.data["verdict"] != "not audited" {
                    here.insert(s.to_string());
                }
            }
        }
        for (s, op, v) in cryptoscope_report::ct::flagged(&run.applications) {
            if here.contains(&s) {
                flags.push((s, op, v, r.id.clone()));
            }
        }
        audited.extend(here);
    }
    if audited.is_empty() {
        println!("\nConstant-time: none of these subjects has been audited yet (`cryptoscope ct`).");
        return;
    }
    let subjects: std::collections::BTreeSet<&str> = flags.iter().map(|f| f.0.as_str()).collect();
    println!(
        "\nConstant-time (latest `cryptoscope ct` audit of {} of the {} measured subjects): {} with findings{}",
        audited.len(),
        measured.len(),
        subjects.len(),
        if flags.is_empty() { "." } else { ":" }
    );
    for (s, op, v, id) in &flags {
        println!("  {s} {op}: {v} (ct run {id})");
    }
}

/// Adds to each audited item the latest speed the store holds for its subject (the most
/// recent of the last 20 runs that measured it).
fn ct_attach_speed(store: &mut cryptoscope_store::Store, items: &mut [cryptoscope_report::AppResult]) {
    let Ok(runs) = store.runs() else { return };
    let mut wanted: Vec<usize> = (0..items.len()).filter(|&i| items[i].item != "setup").collect();
    for r in runs.iter().filter(|r| r.measured > 0).take(20) {
        if wanted.is_empty() {
            break;
        }
        let Ok(run) = store.load(&r.id) else { continue };
        wanted.retain(|&i| {
            let data = &items[i].data;
            let (Some(subject), Some(op)) = (data["subject"].as_str(), data["operation"].as_str()) else {
                return false;
            };
            let Some(speed_op) = ct::speed_operation(op) else {
                return false;
            };
            match run
                .results
                .iter()
                .find(|x| x.subject == subject && x.operation == speed_op && x.median_ns.is_some())
            {
                Some(row) => {
                    items[i].data["speed"] = serde_json::json!({
                        "run": run.run_id, "operation": speed_op, "median_ns": row.median_ns,
                        "median_cycles": row.median_cycles,
                    });
                    false
                }
                None => true,
            }
        });
    }
}

fn open_app_store(db: Option<&str>, json: Option<&PathBuf>) -> Result<(cryptoscope_store::Store, Option<PathBuf>)> {
    let json_out = json.map(|p| util::check_writable(p).map_err(usage)).transpose()?;
    let store = open_db(&store_location(db))?;
    Ok((store, json_out))
}

fn cmd_tahoe(a: &tahoe::TahoeArgs, quiet: bool) -> Result<i32> {
    let (mut store, json_out) = open_app_store(a.db.as_deref(), a.json.as_ref())?;
    let (started_at, _) = util::now_utc();
    let run_id = util::run_id();
    let (output, code) = tahoe::run_driver(a, quiet)?;
    if code == 2 {
        return Ok(2);
    }
    let items = cryptoscope_report::tahoe::items(&output).map_err(|e| anyhow::anyhow!(e))?;
    let app = AppRun {
        suite: "tahoe",
        algorithms: output["hashes"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default(),
        quick: a.profile == "quick",
        rounds: a.repeat as usize,
        libraries: vec![
            (
                "tahoe-lafs".into(),
                output["tahoe_version"].as_str().unwrap_or("?").into(),
            ),
            ("python".into(), output["python"].as_str().unwrap_or("?").into()),
        ],
        items,
    };
    let print = |apps: &[cryptoscope_report::AppResult]| {
        for l in cryptoscope_report::tahoe::setup_lines(apps) {
            println!("{l}");
        }
        println!();
        print!("{}", cryptoscope_report::tahoe::table(apps).unwrap_or_default());
    };
    let code = finish_app_run(
        &mut store,
        &run_id,
        started_at,
        app,
        &print,
        json_out.map(|p| (p, output)),
        code,
    )?;
    if code == 1 {
        eprintln!("error: the study did not complete (see above); what was measured is stored");
    }
    Ok(code)
}

fn cmd_tls(a: &tls::TlsArgs, quiet: bool) -> Result<i32> {
    let (mut store, json_out) = open_app_store(a.db.as_deref(), a.json.as_ref())?;
    let (started_at, _) = util::now_utc();
    let run_id = util::run_id();
    let (setup, rows, code) = tls::run(a, quiet)?;
    let app = AppRun {
        suite: "tls",
        algorithms: rows
            .iter()
            .filter_map(|r| r["group"].as_str().map(String::from))
            .collect(),
        quick: a.quick,
        rounds: 0,
        libraries: Vec::new(),
        items: cryptoscope_report::tls::items(&setup, &rows),
    };
    let print = |apps: &[cryptoscope_report::AppResult]| {
        for l in cryptoscope_report::tls::setup_lines(apps) {
            println!("{l}");
        }
        println!();
        print!("{}", cryptoscope_report::tls::table(apps).unwrap_or_default());
        if let Some(t) = cryptoscope_report::tls::ratio_table(apps) {
            println!("\nSoftware versus accelerated (AES-NI and PCLMULQDQ masked):");
            print!("{t}");
        }
    };
    let json = json_out.map(|p| (p, serde_json::json!({"setup": setup, "rows": rows})));
    finish_app_run(&mut store, &run_id, started_at, app, &print, json, code)
}

fn cmd_tunnel(a: &tunnel::TunnelArgs, quiet: bool) -> Result<i32> {
    let (mut store, json_out) = open_app_store(a.db.as_deref(), a.json.as_ref())?;
    let (started_at, _) = util::now_utc();
    let run_id = util::run_id();
    let (setup, rows, code) = tunnel::run(a, quiet)?;
    let app = AppRun {
        suite: "tunnel",
        algorithms: a.tunnel.split(',').map(|s| s.trim().to_string()).collect(),
        quick: a.quick,
        rounds: 0,
        libraries: Vec::new(),
        items: cryptoscope_report::tunnel::items(&setup, &rows),
    };
    let print = |apps: &[cryptoscope_report::AppResult]| {
        for l in cryptoscope_report::tunnel::setup_lines(apps) {
            println!("{l}");
        }
        println!();
        print!("{}", cryptoscope_report::tunnel::table(apps).unwrap_or_default());
        if let Some(t) = cryptoscope_report::tunnel::ratio_table(apps) {
            println!("\nSoftware versus accelerated (AES-NI and PCLMULQDQ masked):");
            print!("{t}");
        }
        if let Some(t) = cryptoscope_report::tunnel::hostile_table(apps) {
            println!("\nUnder hostile traffic (× compares with the calm measurement of the same configuration):");
            print!("{t}");
        }
    };
    let json = json_out.map(|p| (p, serde_json::json!({"setup": setup, "rows": rows})));
    finish_app_run(&mut store, &run_id, started_at, app, &print, json, code)
}

fn cmd_runs(db: &DbArg) -> Result<i32> {
    let mut store = open_store(db)?;
    let runs = store.runs().map_err(|e| usage(e.to_string()))?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                if r.group == r.id { "-".into() } else { r.group.clone() },
                r.started_at.clone(),
                format!("{} ({})", r.hostname, r.cpu_model),
                r.suites.clone(),
                r.measured.to_string(),
                r.failed.to_string(),
                r.total.to_string(),
                if r.status == "running" {
                    "incomplete".into()
                } else {
                    r.status.clone()
                },
            ]
        })
        .collect();
    print!(
        "{}",
        table::render(
            &["run", "group", "started", "machine", "suites", "measured", "failed", "results", "status"],
            &rows,
            &[false, false, false, false, false, true, true, true, false]
        )
    );
    println!("{} runs in {}", runs.len(), store.location());
    Ok(0)
}

fn cmd_show(run: &str, baseline: Option<&str>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(db)?;
    let r = store.load(run).map_err(|e| usage(e.to_string()))?;
    let e = &r.environment;
    println!(
        "run {}  started {}  finished {}",
        r.run_id,
        r.started_at,
        if r.finished_at.is_empty() {
            "(incomplete)"
        } else {
            &r.finished_at
        }
    );
    println!(
        "machine {} — {}, {} logical CPUs, {}; TSC {}; PMU: {}",
        e.hostname.as_deref().unwrap_or("?"),
        e.cpu_model.as_deref().unwrap_or("unknown CPU"),
        e.logical_cpus,
        e.kernel.as_deref().unwrap_or("?"),
        e.tsc_hz
            .map(|h| format!("{:.3} GHz", h / 1e9))
            .unwrap_or_else(|| "n/a".into()),
        e.perf_core_cycles
    );
    println!("command: {}", r.command.display());
    // Runs of application drivers (ct, tls, tunnel, tahoe) have no primitive results: no
    // empty speed table for them.
    if !r.results.is_empty() || r.applications.is_empty() {
        print!("\n{}", table::results(&r.results));
    }
    // The families' own tables, as `run` prints them.
    for t in [
        table::throughput(&r.results).unwrap_or_default(),
        cryptoscope_report::cipher::table(&r.results, r.environment.core_per_tsc).unwrap_or_default(),
        cryptoscope_report::aead::table(&r.results).unwrap_or_default(),
    ] {
        if !t.is_empty() {
            print!("\n{t}");
        }
    }
    // Application drivers' tables.
    for t in [
        cryptoscope_report::tahoe::table(&r.applications).unwrap_or_default(),
        cryptoscope_report::tls::table(&r.applications).unwrap_or_default(),
        cryptoscope_report::tunnel::table(&r.applications).unwrap_or_default(),
        cryptoscope_report::tunnel::hostile_table(&r.applications).unwrap_or_default(),
        cryptoscope_report::ct::table(&r.applications),
    ] {
        if !t.is_empty() {
            print!("\n{t}");
        }
    }
    if let Some(b) = baseline.or(r.config.baseline.as_deref()) {
        match table::speedups(&r.results, b) {
            Some(t) => print!("\nSpeed-up against {b}:\n{t}"),
            None => println!("\nNo measured subject of this run is the baseline `{b}`."),
        }
    }
    Ok(0)
}

fn cmd_export(run: &str, format: &str, out: Option<&std::path::Path>, db: &DbArg) -> Result<i32> {
    let mut store = open_store(db)?;
    let r = store.load(run).map_err(|e| usage(e.to_string()))?;
    let text = match format {
        "json" => serde_json::to_string_pretty(&r)?,
        "csv" => cryptoscope_report::export::csv(&r),
        "markdown" => cryptoscope_report::export::markdown(&r),
        "github-benchmark" => cryptoscope_report::export::github_benchmark(&r),
        f => return Err(usage(format!("unknown format `{f}`"))),
    };
    match out {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
            eprintln!("wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(0)
}

/// The repository's published-figures file.
fn published_path(flag: Option<&std::path::Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("CRYPTOSCOPE_PUBLISHED") {
        return Ok(PathBuf::from(p));
    }
    let vectors = util::vectors_dir(None)?;
    Ok(vectors.join("../reference/published.json"))
}

fn cmd_published(
    runs: &[String],
    file: Option<&std::path::Path>,
    json: Option<&std::path::Path>,
    db: &DbArg,
) -> Result<i32> {
    if runs.len() != 1 {
        return Err(usage("compare --published takes one run"));
    }
    let path = published_path(file)?;
    let text = std::fs::read_to_string(&path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let entries = cryptoscope_report::published::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let mut store = open_store(db)?;
    let run = store.load(&runs[0]).map_err(|e| usage(e.to_string()))?;
    let m = cryptoscope_report::published::matches(&entries, &run.results);
    if m.is_empty() {
        println!(
            "No published figure in {} matches an operation measured in run {} (published: {}).",
            path.display(),
            run.run_id,
            entries
                .iter()
                .map(|e| e.algorithm.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(0);
    }
    let source = run
        .results
        .iter()
        .find_map(|r| r.cycle_source)
        .map(|c| c.label().to_string())
        .unwrap_or_else(|| "cycles".into());
    print!(
        "{}",
        cryptoscope_report::published::table(
            &m,
            run.environment.cpu_model.as_deref().unwrap_or("this machine"),
            &source
        )
    );
    if let Some(j) = json {
        let doc = serde_json::json!({"schema": "cryptoscope.published-comparison/1", "run": run.run_id, "matches": m});
        std::fs::write(j, serde_json::to_string_pretty(&doc)? + "\n")
            .map_err(|e| usage(format!("cannot write {}: {e}", j.display())))?;
    }
    Ok(0)
}

fn cmd_compare(
    runs: &[String],
    baseline: Option<&str>,
    threshold: f64,
    cycles: bool,
    statistic: &str,
    json: Option<&std::path::Path>,
    db: &DbArg,
) -> Result<i32> {
    if !(0.0..1.0).contains(&threshold) {
        return Err(usage("--threshold must be a fraction in [0, 1), e.g. 0.05"));
    }
    if runs.len() < 2 {
        return Err(usage("compare needs two or more runs (or one with --published)"));
    }
    let mut store = open_store(db)?;
    let mut loaded = Vec::new();
    for r in runs {
        loaded.push(store.load(r).map_err(|e| usage(e.to_string()))?);
    }
    let base = match baseline {
        None => 0,
        Some(b) => {
            let id = if b.starts_with("group:") {
                b.to_string()
            } else {
                store.resolve(b).map_err(|e| usage(e.to_string()))?
            };
            loaded
                .iter()
                .position(|r| r.run_id == id)
                .ok_or_else(|| usage(format!("--baseline {b} is not among the compared runs")))?
        }
    };
    let statistic = cryptoscope_report::compare::Statistic::parse(statistic)
        .ok_or_else(|| usage(format!("unknown statistic `{statistic}`")))?;
    let c = cryptoscope_report::compare::compare(&loaded, base, threshold, cycles, statistic);
    print!("{}", cryptoscope_report::compare::render(&c));
    if let Some(p) = json {
        std::fs::write(p, serde_json::to_string_pretty(&c)?)
            .map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(0)
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            // One line, as for every other usage error: clap's first line, which names the
            // flag and the problem (and its "did you mean" when it has one), then a pointer
            // to the help.
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("error: bad arguments").to_string();
            let tip: String = lines
                .filter(|l| l.starts_with("tip:") || l.starts_with("[possible values"))
                .map(|t| format!(" ({})", t.trim_start_matches("tip:").trim_matches(['[', ']', ' '])))
                .collect();
            eprintln!("{first}{tip}; see `cryptoscope --help`");
            std::process::exit(2);
        }
        Err(e) => {
            let _ = e.print();
            std::process::exit(0);
        }
    };
    let limit = match cli.memory_limit {
        None => workers::default_memory_limit(),
        Some(g) if g.is_finite() && g == 0.0 => 0,
        Some(g) if g.is_finite() && g >= 0.25 => (g * (1u64 << 30) as f64) as u64,
        Some(g) => {
            eprintln!("error: --memory-limit {g}: give GiB, at least 0.25 (or 0 for no limit)");
            std::process::exit(2);
        }
    };
    workers::set_memory_limit(limit);
    let r = match &cli.cmd {
        Cmd::List { sel, json } => cmd_list(sel, *json),
        Cmd::Verify { sel, gate, json } => external::verify_file_mode(sel, gate, json.as_deref(), cli.quiet)
            .and_then(|file| file.map_or_else(|| cmd_verify(sel, gate, cli.quiet), Ok)),
        Cmd::Run(a) => cmd_run(a, cli.quiet),
        Cmd::Memory(m) => cmd_memory(m, cli.quiet),
        Cmd::Profile(p) => cmd_profile(p, cli.quiet),
        Cmd::Micro(m) => cmd_micro(m, cli.quiet),
        Cmd::Build(b) => cmd_build(b, cli.quiet),
        Cmd::Add(b) => cmd_add(b, cli.quiet),
        Cmd::Scale(sa) => cmd_scale(sa, cli.quiet),
        Cmd::Tahoe(t) => cmd_tahoe(t, cli.quiet),
        Cmd::Ct(c) => cmd_ct(c, cli.quiet),
        Cmd::Tls(t) => cmd_tls(t, cli.quiet),
        Cmd::Tunnel(t) => cmd_tunnel(t, cli.quiet),
        Cmd::Runs { db } => cmd_runs(db),
        Cmd::Report { runs, out, db } => cmd_report(runs, out.as_deref(), db),
        Cmd::Show { run, baseline, db } => cmd_show(run, baseline.as_deref(), db),
        Cmd::Export { run, format, out, db } => cmd_export(run, format, out.as_deref(), db),
        Cmd::Compare {
            runs,
            published: true,
            published_file,
            json,
            db,
            ..
        } => cmd_published(runs, published_file.as_deref(), json.as_deref(), db),
        Cmd::Compare {
            runs,
            baseline,
            threshold,
            cycles,
            statistic,
            json,
            db,
            ..
        } => cmd_compare(
            runs,
            baseline.as_deref(),
            *threshold,
            *cycles,
            statistic,
            json.as_deref(),
            db,
        ),
    };
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}
