//! The command line: every command and its flags (clap), as `main` parses them and as
//! `run --resume` parses a stored command line again.

use clap::{Parser, Subcommand};
use cryptoscope_drivers::{openvpn_server, tahoe, tls, tunnel};
use cryptoscope_engine::args::{
    AddArgs, BuildArgs, CtArgs, DbArg, FilterArgs, GateArgs, MemoryArgs, MicroArgs, ProfileArgs, RunArgs, ScaleArgs,
    SelectArgs,
};
use cryptoscope_engine::stored::CompareArgs;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "cryptoscope",
    version,
    about = "What cryptography really costs on this machine: gated, counted, labelled.",
    long_about = "cryptoscope measures post-quantum KEMs and signatures beside classical key \
exchange and signatures (and hashes, ciphers, AEADs) from several providers (liboqs, PQClean, \
AWS-LC, RustCrypto, OpenSSL) side by side. Every implementation must first pass its correctness gate (published known-answer data); only then is it measured, each \
provider in its own worker process, with cycles from the PMU or the TSC (labelled) and a median \
with a 95% confidence interval.",
    after_help = "Examples:\n  cryptoscope list\n  cryptoscope verify --alg ML-KEM-768\n  cryptoscope run --quick\n  cryptoscope run --suite sig --alg ML-DSA-65 --alg Ed25519\n  cryptoscope run --alg X25519 --alg ML-KEM-768 --provider aws-lc --json \\\n      out.json\n\nExit codes: 0 ok, 1 a subject failed its gate (or crashed/timed out), 2 usage or input error."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
    /// The worker flags before the command, as earlier versions took them (and as command
    /// lines stored with runs have them, which `run --resume` parses).
    #[command(flatten)]
    pub(crate) before: Workers,
}

/// Flags of the commands that start worker processes; the others have none to start.
#[derive(clap::Args, Default)]
pub(crate) struct Workers {
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Address-space limit of every worker process, in GiB (default: half the machine's
    /// memory, at least 4). A subject that exhausts it is reported as out of memory and the
    /// run goes on. 0 removes the limit.
    #[arg(long, value_name = "GIB")]
    pub(crate) memory_limit: Option<f64>,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// List every (algorithm, provider, implementation) with sizes, level, version and availability.
    List {
        #[command(flatten)]
        sel: SelectArgs,
        /// The descriptors as JSON (an array): to FILE, or to standard output when FILE is
        /// `-` or left out.
        #[arg(long, value_name = "FILE|-", num_args = 0..=1, default_missing_value = "-")]
        json: Option<PathBuf>,
        #[command(flatten)]
        workers: Workers,
    },
    /// Run the correctness gate and print pass/fail per subject (exit 1 if any fails); with
    /// --vectors FILE, run that vector file against every implementation of its algorithm.
    #[command(
        after_help = "Examples:\n  cryptoscope verify --alg ML-KEM-768\n  cryptoscope verify --suite hash --kat single\n  cryptoscope verify --vectors vectors/wycheproof/x25519_test.json\n  cryptoscope verify --vectors \\\n      vectors/wycheproof/ecdh_secp256r1_ecpoint_test.json --provider openssl \\\n      --json p256.json\n  cryptoscope verify --vectors vectors/wycheproof/mlkem_768_test.json\n  cryptoscope verify --vectors vectors/hash/cavp/SHA3_256LongMsg.rsp\n  # AES-128-GCM and AES-256-GCM\n  cryptoscope verify --vectors vectors/aead/aes_gcm_test.json\n  cryptoscope verify --vectors vectors/wycheproof/ed25519_test.json\n  cryptoscope verify --suite sig --kat single\n  cryptoscope verify --vectors my-kat.rsp --alg ML-KEM-768\n\nA vector FILE is recognised by its content: NIST CAVP hash .rsp (Len/Msg/MD; the algorithm from --alg or a CAVP file name; bit-level Len entries are skipped), NIST KEM KAT .rsp (count/seed/pk/sk/ct/ss; --alg or a `# NAME` header; reproduced under the NIST CTR_DRBG, or decaps only where randomness cannot be injected), Wycheproof xdh_comp_schema (X25519), ecdh_ecpoint_test_schema (P-256), mlkem_test_schema, mlkem_encaps_test_schema, mlkem_keygen_seed_test_schema and mlkem_semi_expanded_decaps_test_schema (ML-KEM; invalid keys and ciphertexts must be refused) and aead_test_schema (AES-GCM, ChaCha20-Poly1305: every catalogue AEAD the file's key lengths name, unless --alg picks one; valid tests with nonces or tags of lengths the subject does not take are skipped, invalid ones must still be refused), eddsa_verify_schema (Ed25519), ecdsa_verify_schema (P-256 with SHA-256, DER) and mldsa_verify_schema, mldsa_sign_seed_schema and mldsa_sign_noseed_schema (ML-DSA; seeded signing reproduced byte for byte where the harness supplies the randomness, by verification elsewhere; invalid contexts and keys must be refused). Each implementation runs it in its own worker; the table gives tests passed, acceptable (Wycheproof), failed and skipped, and the failing test ids (record, count or tcId).\n\nExit codes: 0 every implementation passed, 1 one failed a test (or crashed/timed out), 2 usage error or malformed/unsupported file."
    )]
    Verify {
        #[command(flatten)]
        sel: SelectArgs,
        #[command(flatten)]
        gate: GateArgs,
        /// With --vectors FILE: also write the per-implementation results as JSON (`-`:
        /// standard output, after the table).
        #[arg(long, value_name = "FILE|-")]
        json: Option<PathBuf>,
        #[command(flatten)]
        workers: Workers,
    },
    /// Gate, then measure, then print a summary and write the results file and database.
    Run {
        #[command(flatten)]
        args: RunArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Throughput of every operation on 1, 2, 4, … threads (each with its own keys): ops/s,
    /// parallel efficiency, evenness of threads and the knee.
    Scale {
        #[command(flatten)]
        args: ScaleArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Heap (allocations, bytes, peak) and stack high-water mark of every operation, with
    /// key, ciphertext and code sizes; a pass apart from timing, stored like a run.
    Memory {
        #[command(flatten)]
        args: MemoryArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Where an operation's instructions go: call tree, function table, the internal functions
    /// the PQC-KEM profiling thesis monitored and the hottest source lines, from valgrind
    /// callgrind (exact counts).
    #[command(
        after_help = "Examples:\n  cryptoscope profile --alg NTRU-HRSS-701 --provider pqclean --impl clean \\\n      --op keypair\n  cryptoscope profile --alg Classic-McEliece-8192128 --impl clean --op \\\n      decaps --json prof.json\n\nCollection is on only inside one call of the operation (cryptoscope_profiled_op in the worker); inputs are prepared and warm-up calls made outside it. Randomness comes from a fixed-seed DRBG, so two runs give identical counts."
    )]
    Profile {
        #[command(flatten)]
        args: ProfileArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// The internal functions the PQC-KEM profiling thesis monitored (poly_Rq_mul, poly_S3_inv,
    /// pk_gen, synd, ...) in every subject of an algorithm: calls per operation and
    /// instructions per call (callgrind), and cycles per call where our own builds carry
    /// timing probes.
    #[command(
        after_help = "Examples:\n  cryptoscope build --alg NTRU-HRSS-701 --cc gcc,clang --flags -O3\n  cryptoscope micro --alg NTRU-HRSS-701\n  cryptoscope micro --alg Classic-McEliece-8192128 --impl clean --op decaps \\\n      --json micro.json\n  # cycles only, fast\n  cryptoscope micro --alg NTRU-HRSS-701 --provider build --no-instructions\n\nCycles per call come from builds made by `cryptoscope build` or `add`: calls to a monitored function from another source file go through a wrapper that reads the time-stamp counter around the real function, inside real operations. A `*` marks fewer wrapped calls than callgrind counted (calls from inside the function's own file bypass the wrapper); static functions cannot be wrapped and are listed in the notes."
    )]
    Micro {
        #[command(flatten)]
        args: MicroArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Compile C implementations through a compiler × flags × variant matrix into isolated
    /// builds that `run` measures as provider `build` (PQClean's sources from the pqcrypto
    /// crates, or liboqs's with --source liboqs).
    #[command(
        after_help = "Examples:\n  cryptoscope build --alg NTRU-HRSS-701\n  cryptoscope build --alg NTRU-HRSS-701 --cc gcc,clang --flags \"-O0\" --flags \\\n      \"-O3 -march=native\" --variant clean,avx2\n  cryptoscope build --alg ML-KEM-768 --source liboqs --cc gcc,clang --flags \\\n      -O2\n  cryptoscope run --provider build --alg NTRU-HRSS-701 --baseline \\\n      build/clean-gcc12-O0\n  cryptoscope build --list\n\nEach build is a shared library with hidden symbols in $CRYPTOSCOPE_BUILDS (default ~/.local/share/cryptoscope/builds), labelled <variant>-<compiler><major>-<flags>."
    )]
    Build {
        #[command(flatten)]
        args: BuildArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Bring your own implementation: compile a directory of C sources with the NIST KEM API
    /// (api.h, crypto_kem_keypair/enc/dec; randombytes supplied), gate it, and keep it for `run`.
    #[command(
        after_help = "Example:\n  cryptoscope add examples/byo-mlkem512 --alg ML-KEM-512\n\nThe contract (docs/bring-your-own.md): api.h defines CRYPTO_PUBLICKEYBYTES, CRYPTO_SECRETKEYBYTES, CRYPTO_CIPHERTEXTBYTES, CRYPTO_BYTES and CRYPTO_ALGNAME; the .c files define crypto_kem_keypair, crypto_kem_enc and crypto_kem_dec; randombytes(unsigned char *, unsigned long long) is ours (the NIST KAT DRBG in the gate). PQCgenKAT_kem.c, rng.c and randombytes.c are skipped."
    )]
    Add {
        #[command(flatten)]
        args: AddArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Did B make it faster? Two subjects of one algorithm (two builds, versions or providers)
    /// timed in interleaved A B B A blocks on one CPU; the paired ratio B/A with a 95% CI and
    /// a verdict per operation, exact instruction counts beside it.
    #[command(after_help = cryptoscope_engine::ab::AFTER_HELP)]
    Ab {
        #[command(flatten)]
        args: cryptoscope_engine::ab::AbArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// The study "Tahoe-LAFS with SHA-3 candidates" on today's Tahoe-LAFS: a loopback grid per
    /// hash, uploads and downloads of fresh random files through the web API, and the time
    /// every process spends hashing.
    #[command(
        after_help = "Examples:\n  # quick profile, sha256d vs sha3-256, blake2b-256, blake3\n  cryptoscope tahoe\n  cryptoscope tahoe --hash sha256d,sha256d-ours,blake3 --profile quick\n  # the 2010 set-up\n  cryptoscope tahoe --profile paper --repeat 3 --segment-size 131072 \\\n      --foolscap\n\nThe first run builds a Python environment with Tahoe-LAFS 1.20.0 from PyPI and cryptoscope's package (about a minute; needs python3-venv and network access to PyPI). Each hash gets its own grid start: 1 introducer, 3 storage nodes and 1 client on 127.0.0.1, shares 2 of 3. A start-up hook replaces allmydata.util.hashutil._SHA256d_Hasher in every node (stock sha256d is only timed) and counts digests, bytes and time hashing per process. Every downloaded byte is compared with what was uploaded; a probe file with a fixed convergence secret checks that the swap took (different hashes give different caps; stock and our SHA-256d the same). Nodes are stopped and temporary state removed on success, failure and Ctrl-C. Results go to the results database and `cryptoscope report`.\n\nExit codes: 0 ok, 1 a check failed (a download differed, the swap did not take, interrupted: what was measured is kept), 2 usage or environment error."
    )]
    Tahoe {
        #[command(flatten)]
        args: tahoe::TahoeArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// Constant-time audit of every gated subject: valgrind memcheck with the secret inputs
    /// marked undefined (each secret-dependent branch or memory index, with function and
    /// line) and dudect's fixed-versus-random Welch t-test; beside each subject's latest speed.
    #[command(
        after_help = "Examples:\n  # the whole catalogue, shorter dudect runs\n  cryptoscope ct --quick\n  # table strategies are flagged, bitsliced ones pass\n  cryptoscope ct --alg GIFT-64 --alg Camellia-128\n  cryptoscope ct --alg ML-KEM-768 --method memcheck\n  # the calibration subjects: early-exit compare is flagged\n  cryptoscope ct --provider testbed\n\nWhat is secret: KEM key generation and encapsulation, and key-exchange key generation, the randomness they draw (marked as it is handed out; only where the harness supplies randomness: not AWS-LC or OpenSSL); KEM decapsulation the secret key (ML-KEM: dk_PKE and z, not the public key copy inside it), also with a modified ciphertext (implicit rejection); key exchange the secret key; hashes the message; block ciphers the key (key schedule) and the key and plaintext (encrypt); AEADs the key and plaintext (seal), the key while opening a valid ciphertext (open) and one whose tag's last byte is wrong (open-forged; dudect: against random tags, the test an early-exit tag compare fails).\n\nValues the specification makes public although they are computed from a secret (ML-KEM's matrix from ρ, a public key's encoding) and tests of candidates that are discarded and drawn again (Classic McEliece's FixedWeight, sntrup761's invertibility test) are declared in reference/ct-declassified.json with the specification's words; findings there are listed as public or rejection and not counted, and dudect is shown as inconclusive where such a value makes the time vary. dudect is not run on operations slower than a twentieth of the budget per call (it needs 200 calls).\n\nmemcheck runs the code path valgrind's virtual CPU selects (no AVX-512): subjects that need AVX-512 are reported as not audited by it. dudect: 100,000 calls (20,000 with --quick) or the time budget per test, classes interleaved at random, |t| > 4.5 measured twice before it counts; block ciphers and AEAD sealing are also timed with caches evicted before every call.\n\nVerdicts: leak (memcheck), timing difference (dudect), leak (both methods), no branch or address (memcheck: value reports: operands memcheck wants defined that are neither, e.g. AVX2 shift counts), no leak found by dudect (memcheck: memory never written: valgrind's --track-origins traces the undefined bits to memory the code never wrote, not to the secret, so memcheck cannot judge that place; inconclusive when dudect's difference is a declared one too), no leak found; with one method (--method): no leak found (one method), or inconclusive (dudect: declared timing) when dudect's only difference is a declared one. In an AEAD open, branches reached once per call are the accept/reject decision (shown, not counted as leaks). Findings on third-party code are reported as found. Exit codes: 0 the audit ran (findings are results, not errors), 1 a subject failed its gate or crashed, 2 usage or environment error."
    )]
    Ct {
        #[command(flatten)]
        args: CtArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// TLS 1.3 handshakes per key-exchange group and certificate: handshakes per second,
    /// connection time, server CPU, bytes on the wire; classical, hybrid, ML-KEM and any
    /// catalogue KEM as an experimental group; rustls or nginx/OpenSSL; soft or accelerated.
    #[command(
        after_help = "Examples:\n  # the seven standard groups, ECDSA P-256, 1 s each\n  cryptoscope tls --quick\n  cryptoscope tls --group \\\n      X25519,X25519MLKEM768,HQC-128,NTRU-HRSS-701,Classic-McEliece-348864\n  cryptoscope tls --group X25519 --cert \\\n      rsa-2048,rsa-3072,rsa-4096,ecdsa-p256,ed25519 --accel both\n  # the BA411E study's set-up\n  cryptoscope tls --peer openssl --group DHE --cert \\\n      rsa-1024,rsa-2048,rsa-4096 --accel both\n  # two namespaces over a rate-limited veth (root)\n  cryptoscope tls --netns --rate 100mbit\n\nEvery configuration starts its own server (rustls with AWS-LC, one group, no resumption, or nginx with the system's OpenSSL 3.0), warms up, then counts handshakes completed by --clients concurrent clients in the measured window. Server CPU is read from /proc over the same window. A catalogue KEM becomes a TLS 1.3 group with a private-use code point (0xFE00-0xFEFF) after passing its correctness gate; one whose key share exceeds 65,535 bytes (Classic McEliece) is listed as \"does not fit\" with its sizes. --accel off masks AES-NI and PCLMULQDQ (OPENSSL_ia32cap=~0x200000200000000:~0x0) in server and clients. This kernel's lack of netem is detected: --delay/--loss then explain and exit 2. Keys live in a private 0700 directory, removed at the end with every server and namespace, also on Ctrl-C. Results go to the results database and `cryptoscope report`.\n\nExit codes: 0 ok, 1 a configuration failed or a KEM failed its gate (the rest is measured and stored), 2 usage or environment error (e.g. --netns without root)."
    )]
    Tls {
        #[command(flatten)]
        args: tls::TlsArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// VPN and SSH tunnels between two network namespaces: ping latency by payload size,
    /// bulk transfer throughput and each endpoint's CPU per cipher:MAC couple, against the
    /// same path without a tunnel; soft or accelerated.
    #[command(
        after_help = "Examples:\n  # every tunnel and couple, 10 pings per size, 32 MiB transfers\n  cryptoscope tunnel --quick\n  cryptoscope tunnel --tunnel ipsec,ssh --couple aes-256-gcm --accel both\n  # the BA411E study's couples\n  cryptoscope tunnel --tunnel openvpn-static --couple \\\n      none:none,aes-256-cbc:none,aes-256-cbc:sha256\n  # also under junk, half handshakes and stalled connections\n  cryptoscope tunnel --quick --hostile --couple chacha20-poly1305\n\nTunnels: openvpn-static (OpenVPN 2.6 static key), openvpn-tls (OpenVPN TLS mode, ECDSA P-256 certificates made by the tool, control channel under --tls-crypt), ipsec (strongSwan charon with kernel-libipsec: ESP in user space, IKEv2 with a pre-shared key, one charon per namespace), wireguard (wireguard-go), ssh (OpenSSH, iperf3 through a -L forward). Each configuration gets fresh namespaces joined by a veth pair, fresh keys and daemons; all are removed afterwards, also on failure and Ctrl-C. A couple a tunnel cannot carry is listed as not supported, with the reason. Needs root.\n\nExit codes: 0 ok, 1 a configuration failed or the run was interrupted (what was measured is stored), 2 usage or environment error (not root, a missing program)."
    )]
    Tunnel {
        #[command(flatten)]
        args: tunnel::TunnelArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// An OpenVPN server in TLS mode, as the BA411E study ran it: RSA certificates, TLS 1.2
    /// DHE-RSA with a 2048-bit group, AES-256-CBC with HMAC-SHA256; ten clients connecting
    /// paced (one a second each) or back to back. Connection time, connections a minute,
    /// server CPU a connection; soft or accelerated.
    #[command(
        after_help = "Examples:\n  # every RSA size, paced and unpaced, AES-NI on and masked (12 cells)\n  cryptoscope openvpn-server\n  # a check that everything works\n  cryptoscope openvpn-server --quick --rsa 2048 --accel on\n  # where the server stops keeping up\n  cryptoscope openvpn-server --rsa 4096 --pace 1,2,5,off --accel on\n\nEach cell gets a fresh server in one network namespace and --clients client loops in another, joined by a veth pair. A client loop starts a whole OpenVPN client process, waits for its `Initialization Sequence Completed`, tells it to stop (it says goodbye to the server, --explicit-exit-notify, in the background) and starts the next, on its pace. The server is pinned to the last CPU and the clients to the others. Every connection's log must show TLS 1.2, a DHE-RSA suite, a 2048-bit DH key, the cell's RSA size and the AES-256-CBC/SHA256 data channel, or the cell fails. Connection time runs from the client's first packet to its `Initialization Sequence Completed`, by its own microsecond log stamps. --accel off masks AES-NI and PCLMULQDQ (OPENSSL_ia32cap=~0x200000200000000:~0x0) in the server and every client; RSA and DH are not affected by it. Needs root.\n\nExit codes: 0 ok, 1 a cell failed or the run was interrupted (what was measured is stored), 2 usage or environment error (not root, a missing program)."
    )]
    OpenvpnServer {
        #[command(flatten)]
        args: openvpn_server::OpenvpnServerArgs,
        #[command(flatten)]
        workers: Workers,
    },
    /// The machine's state before a run (governor, turbo, SMT siblings, load, steal,
    /// perf_event_paranoid, the PMU) and what in it makes numbers worse, with the command
    /// that would change it; `run` and `ab` look too and keep it with their results.
    #[command(
        after_help = "Examples:\n  cryptoscope preflight\n  cryptoscope preflight --cpu 1 --json -\n\nNothing is changed: each warning names the command that would change the setting (as pyperf's `system tune` does). Load and steal are read from /proc/stat over one second (a run looks for 200 ms); the SMT sibling is the measured CPU's (--cpu), the load the whole machine's when no CPU is given.\n\nExit codes: 0 (warnings or not), 2 usage error."
    )]
    Preflight {
        /// The CPU a run will be pinned to (run --cpu): its governor, siblings and load.
        #[arg(long, value_name = "N")]
        cpu: Option<usize>,
        /// The findings as JSON: to FILE, or to standard output when FILE is `-` or left out.
        #[arg(long, value_name = "FILE|-", num_args = 0..=1, default_missing_value = "-")]
        json: Option<PathBuf>,
    },
    /// Write a self-contained HTML report (SVG plots, tables, environments) of stored runs.
    Report {
        /// Runs to include (id, unique prefix or `latest`; default: latest).
        runs: Vec<String>,
        /// Output file, `-` for standard output (default: results/report-RUN_ID.html). Its
        /// directory must exist.
        #[arg(long, value_name = "FILE|-")]
        out: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
    /// The shards of a run group (`run --shard K/N --group NAME`): which are complete,
    /// unfinished, failed or missing, and on which machines. Exit 0 when every shard is
    /// complete and passed its gates, 1 when one is not.
    #[command(
        after_help = "Examples:\n  cryptoscope group nightly --db service=team\n  # the last job of a Slurm array: 8 shards expected\n  cryptoscope group slurm-4242 --shards 8\n\nA shard that is missing or unfinished is run again with the same command, --shard and --group: what it stored is kept, the rest is measured (scripts/slurm.sh resume does this for a Slurm array)."
    )]
    Group {
        /// The group's name (`group:NAME` also works).
        name: String,
        /// The shard count expected (default: what the group's command lines say). Shards
        /// of it with no run in the group are listed as missing.
        #[arg(long, value_name = "N")]
        shards: Option<usize>,
        #[command(flatten)]
        db: DbArg,
    },
    /// List the runs in the results database (newest first), or prune old ones.
    Runs {
        /// Delete every run but the newest KEEP, with their results, samples and items.
        #[arg(long, value_name = "KEEP")]
        prune: Option<usize>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Print one stored run: environment and results (RUN: id, unique prefix, `latest` or
    /// `latest~N`, N runs before the latest).
    Show {
        run: String,
        /// Also print speed-ups against this implementation of each algorithm (`clean`,
        /// or provider/impl such as `pqclean/clean`; default: the run's own --baseline).
        #[arg(long, value_name = "IMPL")]
        baseline: Option<String>,
        /// Answer question 5 against this stored run (faster, slower, no change) instead of
        /// the published figures.
        #[arg(long, value_name = "RUN")]
        against: Option<String>,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        db: DbArg,
    },
    /// Export a stored run as json, csv, markdown or github-benchmark.
    Export {
        run: String,
        /// json (cryptoscope.run/1), csv, markdown, or github-benchmark (github-action-benchmark's customSmallerIsBetter).
        #[arg(long, value_parser = ["json", "csv", "markdown", "github-benchmark"])]
        format: String,
        /// Write here instead of standard output (`-`: standard output).
        #[arg(long, value_name = "FILE|-")]
        out: Option<PathBuf>,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        db: DbArg,
    },
    /// Compare runs side by side: ratio of medians with a 95% CI and a verdict per operation;
    /// with --published, one run against published figures ("ours versus theirs").
    #[command(
        after_help = "Examples:\n  cryptoscope compare latest~1 latest\n  cryptoscope compare latest~2 latest~1 latest --reference latest~1 --statistic p5\n  cryptoscope compare --published latest\n  # latest against the 10 runs before it on this machine (CI gate)\n  cryptoscope compare latest --history 10 --fail-on-slower --json -\n\nWhere both runs have exact instruction counts (run --instructions), each operation also shows whether the code path changed; the time verdict is never changed by them."
    )]
    Compare {
        #[command(flatten)]
        args: CompareArgs,
    },
}

impl Cmd {
    /// The worker flags of a command that starts workers.
    pub(crate) fn workers(&self) -> Option<&Workers> {
        match self {
            Cmd::List { workers, .. }
            | Cmd::Verify { workers, .. }
            | Cmd::Run { workers, .. }
            | Cmd::Scale { workers, .. }
            | Cmd::Memory { workers, .. }
            | Cmd::Profile { workers, .. }
            | Cmd::Micro { workers, .. }
            | Cmd::Build { workers, .. }
            | Cmd::Add { workers, .. }
            | Cmd::Ab { workers, .. }
            | Cmd::Tahoe { workers, .. }
            | Cmd::Ct { workers, .. }
            | Cmd::Tls { workers, .. }
            | Cmd::Tunnel { workers, .. }
            | Cmd::OpenvpnServer { workers, .. } => Some(workers),
            Cmd::Preflight { .. }
            | Cmd::Report { .. }
            | Cmd::Runs { .. }
            | Cmd::Group { .. }
            | Cmd::Show { .. }
            | Cmd::Export { .. }
            | Cmd::Compare { .. } => None,
        }
    }
}

/// A stored command line as [`RunArgs`] when it is a `cryptoscope run` (for `run --resume`).
pub(crate) fn stored_run_args(command: &[String]) -> Option<RunArgs> {
    match Cli::try_parse_from(command.iter()) {
        Ok(Cli {
            cmd: Cmd::Run { args, .. },
            ..
        }) => Some(args),
        _ => None,
    }
}
