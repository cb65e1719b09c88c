//! Worker processes: one binary per provider, so that providers never share an address
//! space (liboqs and the PQClean crates define the same C symbols; linked together, one
//! copy would silently serve both), and so that a crash or hang costs one subject, not a
//! run.
//!
//! The parent (`cryptoscope`) asks with a typed [`Request`] (`cryptoscope_model::protocol`):
//! as the command line of a one-shot worker (`cryptoscope-worker-<provider> measure
//! --subject ...`), or as a JSON line to a long-lived one (`cryptoscope-worker-<provider>
//! serve`). It reads JSON lines ([`Event`]) from the worker's standard output. Each completed
//! operation is one line, written as soon as it is measured, so nothing measured before a
//! crash is lost. [`worker_main`] is the whole program of every provider binary.

pub mod builds;
pub mod ct;
pub mod driver;
pub mod family;
pub mod memory;
pub mod protocol;
pub mod verify_file;

pub use protocol::{
    ClockInfo, CounterReading, CtAudited, CtStat, Event, OpCounters, OpMeasurement, OpMemory, OpProbes, ProbedFunction,
    ScaleRun,
};

use cryptoscope_catalogue::gate::KatDepth;
use cryptoscope_catalogue::Subject;
use cryptoscope_model::protocol::Request;
use std::io::Write;

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

/// The program of every provider worker binary.
pub fn worker_main(subjects: fn() -> Vec<Subject>) -> ! {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("worker panic: {info}");
    }));
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() || argv[0] == "--help" || argv[0] == "-h" {
        eprintln!(
            "usage: cryptoscope-worker-PROVIDER serve | COMMAND --subject ID ... (started by `cryptoscope`, not by hand; \
             see cryptoscope_model::protocol::Request)"
        );
        std::process::exit(2);
    }
    let all = subjects();
    if argv == ["serve"] {
        serve(&all);
    }
    let request = Request::from_args(&argv).unwrap_or_else(|e| fail(e));
    set_command(request.command());
    dispatch(request, &all, None);
    emit(&Event::Done);
    std::process::exit(0);
}

/// The long-lived mode: one [`Request`] (JSON) per line of standard input, each answered
/// like a one-shot call (its events, then `done`), until standard input ends.
fn serve(all: &[Subject]) -> ! {
    use std::io::BufRead;
    // Inputs prepared on a subject's first visit serve its later ones.
    let mut kept = driver::KeptInputs::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = serde_json::from_str(&line).unwrap_or_else(|e| fail(format!("bad request ({e})")));
        set_command(request.command());
        dispatch(request, all, Some(&mut kept));
        emit(&Event::Done);
    }
    std::process::exit(0);
}

/// The command this worker is running now (`measure`, `gate`, ...), in one-shot and
/// long-lived mode alike.
static COMMAND: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn set_command(c: &str) {
    *COMMAND.lock().unwrap_or_else(|e| e.into_inner()) = c.to_string();
}

/// The command being run (`measure`, `gate`, ...): for implementations that behave
/// differently by design when measured (the testbed's `crash-when-measured`).
pub fn command() -> String {
    COMMAND.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Runs one command, emitting its events (not `done`).
fn dispatch<'a>(request: Request, all: &'a [Subject], kept: Option<&mut driver::KeptInputs<'a>>) {
    let find = |id: &str| -> &'a Subject {
        let s = all
            .iter()
            .find(|s| s.descriptor().id == id)
            .unwrap_or_else(|| fail(format!("unknown subject `{id}`")));
        if let cryptoscope_catalogue::Availability::Unavailable(r) = &s.descriptor().availability {
            fail(format!("{id} is unavailable: {r}"));
        }
        s
    };
    match request {
        Request::Describe => emit(&Event::Describe {
            subjects: all.iter().map(|s| s.descriptor().clone()).collect(),
        }),
        r @ Request::Gate { .. } => gate(r, &find),
        Request::VerifyEncaps {
            subject,
            reference,
            encaps,
        } => {
            let check = family::of(find(&subject))
                .check_crosscheck(&reference, &encaps)
                .unwrap_or_else(|| Err(format!("{subject}: its family has no cross-checks")))
                .unwrap_or_else(|e| fail(e));
            emit(&Event::Verify { subject, check });
        }
        Request::VerifyFile {
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
        Request::Loop {
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
            if let Err(e) = driver::run_loop(find(&subject), op, iterations, warmup, marker) {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        r @ Request::Scale { .. } => scale(r, &find),
        Request::Counters {
            subject,
            events,
            calls,
            ops,
        } => {
            if let Err(e) = driver::counters_subject(find(&subject), &events, calls, ops.as_deref(), &mut |e| emit(&e))
            {
                fail(e);
            }
        }
        Request::Probes { subject, calls, ops } => {
            if let Err(e) = driver::probes_subject(find(&subject), calls.max(1), ops.as_deref(), &mut |e| emit(&e)) {
                fail(e);
            }
        }
        Request::Memory { subject, calls, ops } => {
            if let Err(e) = driver::memory_subject(find(&subject), calls, ops.as_deref(), &mut |e| emit(&e)) {
                fail(e);
            }
        }
        Request::CtMaterial { subject, out } => {
            let Subject::Kem(k) = find(&subject) else {
                fail("material is for KEMs only".into())
            };
            if let Err(e) = family::kem::write_material(k.as_ref(), &out) {
                fail(e);
            }
        }
        Request::CtMemcheck { subject, ops, material } => {
            let s = find(&subject);
            let ops: Vec<String> = match ops {
                Some(o) => o,
                None => s.descriptor().ct_operations().iter().map(|x| x.to_string()).collect(),
            };
            match ct::memcheck(s, &ops, material.as_deref()) {
                Ok(done) => done.into_iter().for_each(|a| emit(&Event::CtAudited(a))),
                Err(e) => fail(e),
            }
        }
        r @ Request::CtDudect { .. } => ct_dudect(r, &find),
        r @ Request::Measure { .. } => measure(r, &find, kept),
    }
}

/// The gate of one subject: its report, and for KEMs the entries and encapsulations
/// the harness asked to keep.
fn gate<'a>(request: Request, find: &dyn Fn(&str) -> &'a Subject) {
    let Request::Gate {
        subject,
        vectors,
        depth,
        keep,
        entries_out,
        reference,
        encaps_out,
    } = request
    else {
        unreachable!("dispatched on its variant")
    };
    let depth = match depth.as_str() {
        "single" => KatDepth::Single,
        "all" => KatDepth::All,
        d => fail(format!("unknown depth `{d}`")),
    };
    let ask = family::GateAsk {
        vectors: &vectors,
        depth,
        keep,
        entries_out: entries_out.as_ref(),
        reference: reference.as_ref(),
        encaps_out: encaps_out.as_ref(),
    };
    let report = family::of(find(&subject)).gate(&ask).unwrap_or_else(|e| fail(e));
    emit(&Event::Gate { subject, report });
}

/// Throughput of one operation on N threads.
fn scale<'a>(request: Request, find: &dyn Fn(&str) -> &'a Subject) {
    let Request::Scale {
        subject,
        op,
        threads,
        duration,
    } = request
    else {
        unreachable!("dispatched on its variant")
    };
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

/// dudect on one operation: fixed against random secret inputs.
fn ct_dudect<'a>(request: Request, find: &dyn Fn(&str) -> &'a Subject) {
    let Request::CtDudect {
        subject,
        op,
        samples,
        budget,
        cold,
        tsc_hz,
        record,
    } = request
    else {
        unreachable!("dispatched on its variant")
    };
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

/// The timing of every operation of one subject (or of `ops`).
fn measure<'a>(request: Request, find: &dyn Fn(&str) -> &'a Subject, kept: Option<&mut driver::KeptInputs<'a>>) {
    let Request::Measure {
        subject,
        plan,
        budget,
        ops,
        cpu,
        tsc_hz,
        force_tsc,
    } = request
    else {
        unreachable!("dispatched on its variant")
    };
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
        kept,
        &mut |e| emit(&e),
    );
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
