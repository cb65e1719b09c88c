//! Worker processes: one binary per provider, so that providers never share an address
//! space (liboqs and the PQClean crates define the same C symbols; linked together, one
//! copy would silently serve both), and so that a crash or hang costs one subject, not a
//! run.
//!
//! The parent (`cryptoscope`) runs `cryptoscope-worker-<provider> <command> ...` and reads
//! JSON lines ([`Event`]) from its standard output. Each completed operation is one line,
//! written as soon as it is measured, so nothing measured before a crash is lost.
//! [`worker_main`] is the whole program of every provider binary.

pub mod builds;
pub mod ct;
pub mod driver;
pub mod memory;
pub mod protocol;
pub mod verify_file;

pub use protocol::{
    ClockInfo, CounterReading, CtAudited, CtStat, Event, OpCounters, OpMeasurement, OpMemory, OpProbes, ProbedFunction,
    ScaleRun,
};

use clap::{Parser, Subcommand};
use cryptoscope_catalogue::gate::{self, Encapsulation, KatDepth, KatEntry};
use cryptoscope_catalogue::Subject;
use cryptoscope_measure::sampler::Plan;
use std::io::Write;
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "cryptoscope provider worker (run by `cryptoscope`, not by hand)")]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the descriptors of every subject this provider offers.
    Describe,
    /// Run the correctness gate on one subject.
    Gate {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        vectors: PathBuf,
        #[arg(long, default_value = "all")]
        depth: String,
        /// Keep this many KAT entries for cross-checks (written to --entries-out).
        #[arg(long, default_value_t = 0)]
        keep: usize,
        #[arg(long)]
        entries_out: Option<PathBuf>,
        /// Verified KAT entries (for subjects whose randomness cannot be injected).
        #[arg(long)]
        reference: Option<PathBuf>,
        #[arg(long)]
        encaps_out: Option<PathBuf>,
    },
    /// Decapsulate another subject's encapsulations to KAT public keys (cross-check phase 2).
    VerifyEncaps {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        reference: PathBuf,
        #[arg(long)]
        encaps: PathBuf,
    },
    /// Run a vector file brought by the user against one subject (`verify --vectors FILE`).
    VerifyFile {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        file: PathBuf,
        /// The format the parent recognised (cavp-hash, nist-kem-kat, wycheproof-...).
        #[arg(long)]
        format: String,
        /// ML-KEM decapsulation keys per tcId, for subjects whose randomness cannot be injected.
        #[arg(long)]
        keys_in: Option<PathBuf>,
        /// Write the ML-KEM decapsulation keys this subject derived here.
        #[arg(long)]
        keys_out: Option<PathBuf>,
    },
    /// Run one operation N times untimed (for external tools: callgrind, perf stat,
    /// hyperfine). Inputs are prepared first, as for `measure`.
    Loop {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        op: String,
        #[arg(long, default_value_t = 1)]
        iterations: u64,
        /// Draw all randomness from a fixed-seed NIST DRBG (subjects with harness
        /// randomness then execute exactly the same instructions on every run).
        #[arg(long)]
        deterministic: bool,
        /// Allocate and free a 777,777-byte heap block just before the loop and an
        /// 888,888-byte one just after it, to find the loop in a heap profile.
        #[arg(long)]
        marker: bool,
        /// Calls before the loop proper, outside `cryptoscope_profiled_op` (one-time
        /// initialisation, caches); the marker implies one.
        #[arg(long, default_value_t = 0)]
        warmup: u64,
    },
    /// Heap and stack of each operation of one subject (needs the heap preload library in
    /// LD_PRELOAD; `cryptoscope memory` provides it).
    Memory {
        #[arg(long)]
        subject: String,
        /// Counted calls per operation (after one warm-up call).
        #[arg(long, default_value_t = 3)]
        calls: usize,
        /// Only these operations (comma-separated).
        #[arg(long)]
        ops: Option<String>,
    },
    /// perf_event_open counters around each call of each operation of one subject.
    Counters {
        #[arg(long)]
        subject: String,
        /// Comma-separated perf event names (cycles, instructions, page-faults, …).
        #[arg(long)]
        events: String,
        /// Counted calls per operation (after one warm-up call).
        #[arg(long, default_value_t = 101)]
        calls: usize,
        /// Only these operations (comma-separated).
        #[arg(long)]
        ops: Option<String>,
    },
    /// Timing probes around internal functions, read around each call of each operation
    /// (builds made by `cryptoscope build`, loaded with CRYPTOSCOPE_PROBES=1).
    Probes {
        #[arg(long)]
        subject: String,
        /// Counted calls per operation (after one warm-up call).
        #[arg(long, default_value_t = 31)]
        calls: usize,
        /// Only these operations (comma-separated).
        #[arg(long)]
        ops: Option<String>,
    },
    /// Throughput of one operation on N threads, each with its own keys and buffers.
    Scale {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        op: String,
        #[arg(long)]
        threads: usize,
        /// Seconds to run (each thread finishes the call in progress).
        #[arg(long)]
        duration: f64,
    },
    /// Constant-time audit, memcheck method: run each operation once with its secret
    /// inputs marked undefined (run this under `valgrind --tool=memcheck`).
    CtMemcheck {
        #[arg(long)]
        subject: String,
        /// Only these operations (comma-separated; default: all audited ones).
        #[arg(long)]
        ops: Option<String>,
        /// KEMs: the key pair and ciphertext to use (written by `ct-material`).
        #[arg(long)]
        material: Option<PathBuf>,
    },
    /// Write a KEM key pair and ciphertext for `ct-memcheck --material` (made natively).
    CtMaterial {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Constant-time audit, dudect method: Welch's t between fixed and random secret inputs.
    CtDudect {
        #[arg(long)]
        subject: String,
        #[arg(long)]
        op: String,
        /// Calls to time (both classes together).
        #[arg(long, default_value_t = 20_000)]
        samples: u64,
        /// Seconds at most (after at least 200 calls).
        #[arg(long, default_value_t = 10.0)]
        budget: f64,
        /// Evict the caches before every call.
        #[arg(long)]
        cold: bool,
        #[arg(long)]
        tsc_hz: Option<f64>,
        /// Also write every call's class (0 fixed, 1 random) and time, one `CLASS TIME`
        /// line per call, to FILE: a recording for a test fixture (docs/testing.md).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
    },
    /// Measure the operations of one subject.
    Measure {
        #[arg(long)]
        subject: String,
        /// Sampling plan as JSON.
        #[arg(long)]
        plan: String,
        /// Time budget for the whole subject, seconds.
        #[arg(long)]
        budget: f64,
        /// Only these operations (comma-separated).
        #[arg(long)]
        ops: Option<String>,
        #[arg(long)]
        cpu: Option<usize>,
        /// TSC frequency calibrated by the parent.
        #[arg(long)]
        tsc_hz: Option<f64>,
        /// Use the TSC even if a PMU exists.
        #[arg(long)]
        force_tsc: bool,
    },
}

fn emit(e: &Event) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, e);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn fail(msg: String) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2);
}

fn parse_ops(list: &str) -> Vec<cryptoscope_catalogue::Operation> {
    list.split(',')
        .map(|x| {
            cryptoscope_catalogue::Operation::parse(x.trim())
                .unwrap_or_else(|| fail(format!("unknown operation `{x}`")))
        })
        .collect()
}

fn read_json<T: for<'de> serde::Deserialize<'de>>(p: &PathBuf) -> T {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| fail(format!("cannot read {}: {e}", p.display())));
    serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("malformed {}: {e}", p.display())))
}

fn write_json<T: serde::Serialize>(p: &PathBuf, v: &T) {
    let text = serde_json::to_string(v).expect("serialisable");
    std::fs::write(p, text).unwrap_or_else(|e| fail(format!("cannot write {}: {e}", p.display())));
}

/// The program of every provider worker binary.
pub fn worker_main(subjects: fn() -> Vec<Subject>) -> ! {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("worker panic: {info}");
    }));
    let args = Args::parse();
    let all = subjects();
    let find = |id: &str| -> &Subject {
        let s = all
            .iter()
            .find(|s| s.descriptor().id == id)
            .unwrap_or_else(|| fail(format!("unknown subject `{id}`")));
        if let cryptoscope_catalogue::Availability::Unavailable(r) = &s.descriptor().availability {
            fail(format!("{id} is unavailable: {r}"));
        }
        s
    };
    match args.cmd {
        Cmd::Describe => emit(&Event::Describe {
            subjects: all.iter().map(|s| s.descriptor().clone()).collect(),
        }),
        Cmd::Gate {
            subject,
            vectors,
            depth,
            keep,
            entries_out,
            reference,
            encaps_out,
        } => {
            let depth = match depth.as_str() {
                "single" => KatDepth::Single,
                "all" => KatDepth::All,
                d => fail(format!("unknown depth `{d}`")),
            };
            let s = find(&subject);
            let report = match s {
                Subject::Kem(k) => {
                    let refs: Option<Vec<KatEntry>> = reference.as_ref().map(read_json);
                    let g = gate::gate_kem(k.as_ref(), &vectors, depth, keep, refs.as_deref());
                    if let (Some(p), false) = (&entries_out, g.entries.is_empty()) {
                        write_json(p, &g.entries);
                    }
                    if let (Some(p), false) = (&encaps_out, g.encapsulations.is_empty()) {
                        write_json(p, &g.encapsulations);
                    }
                    g.report
                }
                Subject::Kex(k) => gate::gate_kex(k.as_ref(), &vectors),
                Subject::Hash(h) => gate::gate_hash(h.as_ref(), &vectors, depth),
                Subject::Cipher(c) => cryptoscope_catalogue::cipher_gate::gate_cipher(c.as_ref(), &vectors),
                Subject::Aead(a) => cryptoscope_catalogue::aead_gate::gate_aead(a.as_ref(), &vectors),
            };
            emit(&Event::Gate { subject, report });
        }
        Cmd::VerifyEncaps {
            subject,
            reference,
            encaps,
        } => {
            let entries: Vec<KatEntry> = read_json(&reference);
            let encs: Vec<Encapsulation> = read_json(&encaps);
            let check = match find(&subject) {
                Subject::Kem(k) => gate::verify_encapsulations(k.as_ref(), &entries, &encs),
                Subject::Kex(_) | Subject::Hash(_) | Subject::Cipher(_) | Subject::Aead(_) => {
                    fail("verify-encaps applies to KEMs only".into())
                }
            };
            emit(&Event::Verify { subject, check });
        }
        Cmd::VerifyFile {
            subject,
            file,
            format,
            keys_in,
            keys_out,
        } => {
            let outcome = verify_file::run(find(&subject), &file, &format, keys_in.as_deref(), keys_out.as_deref())
                .unwrap_or_else(|e| fail(e));
            emit(&Event::FileVerified { subject, outcome });
        }
        Cmd::Loop {
            subject,
            op,
            iterations,
            deterministic,
            marker,
            warmup,
        } => {
            let _guard = deterministic.then(|| {
                cryptoscope_catalogue::rng::install_kat(Box::new(cryptoscope_catalogue::rng::CtrDrbg::new(&[0x5a; 48])))
            });
            let op = cryptoscope_catalogue::Operation::parse(&op)
                .unwrap_or_else(|| fail(format!("unknown operation `{op}`")));
            if let Err(e) = driver::run_loop(find(&subject), op, iterations, warmup, marker) {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        Cmd::Scale {
            subject,
            op,
            threads,
            duration,
        } => {
            let op = cryptoscope_catalogue::Operation::parse(&op)
                .unwrap_or_else(|| fail(format!("unknown operation `{op}`")));
            if threads == 0 || !(duration > 0.0 && duration.is_finite()) {
                fail("--threads must be at least 1 and --duration positive".into());
            }
            match driver::scale_subject(
                find(&subject),
                op,
                threads,
                std::time::Duration::from_secs_f64(duration),
            ) {
                Ok(r) => emit(&Event::Scaled(r)),
                Err(e) => emit(&Event::OpFailed {
                    subject,
                    operation: op,
                    error: e,
                }),
            }
        }
        Cmd::Counters {
            subject,
            events,
            calls,
            ops,
        } => {
            let ops = ops.map(|o| parse_ops(&o));
            let events: Vec<String> = events.split(',').map(|e| e.trim().to_string()).collect();
            if let Err(e) = driver::counters_subject(find(&subject), &events, calls, ops.as_deref(), &mut |e| emit(&e))
            {
                fail(e);
            }
        }
        Cmd::Probes { subject, calls, ops } => {
            let ops = ops.map(|o| parse_ops(&o));
            if let Err(e) = driver::probes_subject(find(&subject), calls.max(1), ops.as_deref(), &mut |e| emit(&e)) {
                fail(e);
            }
        }
        Cmd::Memory { subject, calls, ops } => {
            let ops = ops.map(|o| parse_ops(&o));
            if let Err(e) = driver::memory_subject(find(&subject), calls, ops.as_deref(), &mut |e| emit(&e)) {
                fail(e);
            }
        }
        Cmd::CtMaterial { subject, out } => {
            if let Err(e) = ct::write_material(find(&subject), &out) {
                fail(e);
            }
        }
        Cmd::CtMemcheck { subject, ops, material } => {
            let s = find(&subject);
            let ops: Vec<String> = match ops {
                Some(o) => o.split(',').map(|x| x.trim().to_string()).collect(),
                None => s.descriptor().ct_operations().iter().map(|x| x.to_string()).collect(),
            };
            match ct::memcheck(s, &ops, material.as_deref()) {
                Ok(done) => done.into_iter().for_each(|a| emit(&Event::CtAudited(a))),
                Err(e) => fail(e),
            }
        }
        Cmd::CtDudect {
            subject,
            op,
            samples,
            budget,
            cold,
            tsc_hz,
            record,
        } => {
            if samples < 2_000 || !(budget > 0.0 && budget.is_finite()) {
                fail("--samples must be at least 2000 and --budget positive".into());
            }
            let clock = cryptoscope_measure::Clock::with_tsc_hz(cryptoscope_measure::clock::ClockChoice::Tsc, tsc_hz);
            let plan = ct::DudectPlan {
                samples,
                budget: std::time::Duration::from_secs_f64(budget),
                cold,
                record,
            };
            match ct::dudect(find(&subject), &op, &plan, &clock) {
                Ok(r) => emit(&Event::CtStat(r)),
                Err(e) => fail(e),
            }
        }
        Cmd::Measure {
            subject,
            plan,
            budget,
            ops,
            cpu,
            tsc_hz,
            force_tsc,
        } => {
            let plan: Plan = serde_json::from_str(&plan).unwrap_or_else(|e| fail(format!("bad plan: {e}")));
            let ops = ops.map(|o| parse_ops(&o));
            if let Some(c) = cpu {
                if let Err(e) = cryptoscope_measure::env::pin_to_cpu(c) {
                    fail(format!("cannot pin to CPU {c}: {e}"));
                }
            }
            let s = find(&subject);
            let choice = if force_tsc {
                cryptoscope_measure::clock::ClockChoice::Tsc
            } else {
                cryptoscope_measure::clock::ClockChoice::Auto
            };
            let clock = cryptoscope_measure::Clock::with_tsc_hz(choice, tsc_hz);
            driver::measure_subject(
                s,
                &clock,
                &plan,
                std::time::Duration::from_secs_f64(budget),
                ops.as_deref(),
                cpu,
                &mut |e| emit(&e),
            );
        }
    }
    emit(&Event::Done);
    std::process::exit(0);
}

/// Compilers and optimisation level this build used, captured by the build script.
pub mod build_info {
    /// First line of `$CC --version` (the compiler the `cc` crate and CMake pick).
    pub const C_COMPILER: &str = env!("CRYPTOSCOPE_C_COMPILER");
    /// `rustc -V`.
    pub const RUSTC: &str = env!("CRYPTOSCOPE_RUSTC");
    /// Cargo's optimisation level for this build ("3" in release).
    pub const OPT_LEVEL: &str = env!("CRYPTOSCOPE_OPT_LEVEL");
    /// Cargo profile ("release").
    pub const PROFILE: &str = env!("CRYPTOSCOPE_PROFILE");
    /// `name=version,...` of the provider crates in Cargo.lock.
    pub const CRATE_VERSIONS: &str = env!("CRYPTOSCOPE_CRATE_VERSIONS");

    /// "crate version" for a provider crate, e.g. "aws-lc-rs 1.19.0".
    pub fn crate_version(name: &str) -> String {
        CRATE_VERSIONS
            .split(',')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .map(|v| format!("{name} {v}"))
            .unwrap_or_else(|| format!("{name} (version unknown)"))
    }
}
