//! `cryptoscope`: the command-line front end. It parses the arguments and hands each
//! command to the harness (`cryptoscope-engine`) or an application driver
//! (`cryptoscope-drivers`). Measuring happens in provider worker processes, never here.
//!
//! Exit codes: 0 success; 1 some subject failed its gate, crashed or timed out;
//! 2 usage or input error.
// Every name a module uses is written out (issue 54): no glob imports outside tests.
#![deny(clippy::wildcard_imports)]
// Output goes through the command's context (`context::Out`), never straight to the
// process's standard streams (issue 54); tests may print.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

mod commands;

use clap::Parser;
use commands::{stored_run_args, Cli, Cmd};
use cryptoscope_drivers::apps::cmd_driver;
use cryptoscope_engine::builds::{cmd_add, cmd_build};
use cryptoscope_engine::context::{Ctx, Env};
use cryptoscope_engine::ct_cmd::cmd_ct;
use cryptoscope_engine::external;
use cryptoscope_engine::listing::{cmd_list, cmd_verify};

use cryptoscope_engine::micro::cmd_micro;
use cryptoscope_engine::profile::cmd_profile;
use cryptoscope_engine::run::{cmd_memory, cmd_run, cmd_scale};

use cryptoscope_engine::stored::{cmd_compare, cmd_export, cmd_report, cmd_runs, cmd_show};
use cryptoscope_engine::workers::{self, Stop};
use std::io::Write;
use std::path::PathBuf;

/// A closed pipe (`cryptoscope list --json | head`) ends the output quietly with success, as
/// in ripgrep and cargo: `println!` panics when standard output has gone, and this hook turns
/// that one panic into exit 0 (every other panic is reported as before).
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Whether an error is a write to a closed pipe.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Says `text` on standard error (one line) and ends with `code`.
fn fail(text: &str, code: i32) -> ! {
    let _ = writeln!(std::io::stderr(), "{text}");
    std::process::exit(code)
}

/// The worker transport the environment asks for: the workers in `$CRYPTOSCOPE_WORKER_DIR`
/// (else beside this executable), under `$CRYPTOSCOPE_WORKER_RUNNER`; recorded to
/// `$CRYPTOSCOPE_RECORD`, or replayed from `$CRYPTOSCOPE_REPLAY` (killing this process as
/// its `$CRYPTOSCOPE_REPLAY_KILL_AT`-th `measure` call starts).
fn workers_from_env() -> anyhow::Result<workers::Workers> {
    let dir = match std::env::var_os("CRYPTOSCOPE_WORKER_DIR") {
        Some(d) => PathBuf::from(d),
        None => std::env::current_exe()
            .map_err(|e| anyhow::anyhow!("cannot locate the cryptoscope executable: {e}"))?
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
    };
    let runner: Vec<String> = std::env::var("CRYPTOSCOPE_WORKER_RUNNER")
        .map(|r| r.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let w = if let Some(file) = std::env::var_os("CRYPTOSCOPE_REPLAY") {
        let kill_at =
            match std::env::var("CRYPTOSCOPE_REPLAY_KILL_AT") {
                Ok(v) => Some(v.parse::<usize>().map_err(|_| {
                    cryptoscope_engine::ui::usage(format!("CRYPTOSCOPE_REPLAY_KILL_AT={v}: not a number"))
                })?),
                Err(_) => None,
            };
        workers::Workers::replaying(dir, std::path::Path::new(&file), kill_at.map(|n| (n, Stop::Kill)))
            .map_err(|e| cryptoscope_engine::ui::usage(format!("CRYPTOSCOPE_REPLAY={e}")))?
    } else if let Some(file) = std::env::var_os("CRYPTOSCOPE_RECORD") {
        workers::Workers::recording(dir, PathBuf::from(file))
    } else {
        workers::Workers::live(dir)
    };
    Ok(w.with_runner(runner))
}

/// The command's context: its workers, the process's output, the environment the engine
/// reads ([`Env::VARS`]) and the parser of stored `run` command lines.
fn context(quiet: bool, memory_limit: u64) -> anyhow::Result<Ctx> {
    let workers = workers_from_env()?;
    workers.set_memory_limit(memory_limit);
    let env = Env::of(
        Env::VARS
            .iter()
            .filter_map(|k| std::env::var_os(k).map(|v| (k.to_string(), v))),
    );
    Ok(Ctx::new(workers)
        .with_quiet(quiet)
        .with_env(env)
        .with_args(std::env::args())
        .with_run_parser(stored_run_args))
}

fn main() {
    quiet_on_closed_pipe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            // One line, as for every other usage error: clap's first line, which names the
            // flag and the problem (and its "did you mean" when it has one), then a pointer
            // to the help.
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty()).peekable();
            let mut first = lines.next().unwrap_or("error: bad arguments").to_string();
            // "the following required arguments were not provided:" lists them on the
            // lines below: name them on the one line.
            if first.ends_with(':') {
                let mut named = Vec::new();
                while let Some(l) = lines.next_if(|l| !l.starts_with("Usage:") && !l.starts_with("tip:")) {
                    named.push(l);
                }
                first = format!("{first} {}", named.join(", "));
            }
            let tip: String = lines
                .filter(|l| l.starts_with("tip:") || l.starts_with("[possible values"))
                .map(|t| format!(" ({})", t.trim_start_matches("tip:").trim_matches(['[', ']', ' '])))
                .collect();
            fail(&format!("{first}{tip}; see `cryptoscope --help`"), 2);
        }
        Err(e) => {
            let _ = e.print();
            std::process::exit(0);
        }
    };
    // The worker flags: after the command, or before it as earlier versions took them.
    let w = cli.cmd.workers();
    let quiet = cli.before.quiet || w.is_some_and(|w| w.quiet);
    let limit = match w.and_then(|w| w.memory_limit).or(cli.before.memory_limit) {
        None => workers::default_memory_limit(),
        Some(g) if g.is_finite() && g == 0.0 => 0,
        Some(g) if g.is_finite() && g >= 0.25 => (g * (1u64 << 30) as f64) as u64,
        Some(g) => fail(
            &format!("error: --memory-limit {g}: give GiB, at least 0.25 (or 0 for no limit)"),
            2,
        ),
    };
    let ctx = match context(quiet, limit) {
        Ok(c) => c,
        Err(e) => fail(&format!("error: {e:#}"), 2),
    };
    let r = dispatch(&cli.cmd, &ctx);
    // Long-lived workers end before the process does.
    drop(ctx);
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) if closed_pipe(&e) => std::process::exit(0),
        Err(e) => fail(&format!("error: {e:#}"), 2),
    }
}

/// Runs one command.
fn dispatch(cmd: &Cmd, ctx: &Ctx) -> anyhow::Result<i32> {
    match cmd {
        Cmd::List { sel, json, .. } => cmd_list(ctx, sel, json.as_deref()),
        Cmd::Verify { sel, gate, json, .. } => external::verify_file_mode(sel, gate, json.as_deref(), ctx)
            .and_then(|file| file.map_or_else(|| cmd_verify(sel, gate, ctx), Ok)),
        Cmd::Run { args, .. } => cmd_run(args, ctx),
        Cmd::Memory { args, .. } => cmd_memory(args, ctx),
        Cmd::Profile { args, .. } => cmd_profile(args, ctx),
        Cmd::Micro { args, .. } => cmd_micro(args, ctx),
        Cmd::Build { args, .. } => cmd_build(args, ctx),
        Cmd::Add { args, .. } => cmd_add(args, ctx),
        Cmd::Ab { args, .. } => cryptoscope_engine::ab::cmd_ab(args, ctx),
        Cmd::Scale { args, .. } => cmd_scale(args, ctx),
        Cmd::Tahoe { args, .. } => cmd_driver(args, ctx),
        Cmd::Ct { args, .. } => cmd_ct(args, ctx),
        Cmd::Tls { args, .. } => cmd_driver(args, ctx),
        Cmd::Tunnel { args, .. } => cmd_driver(args, ctx),
        Cmd::OpenvpnServer { args, .. } => cmd_driver(args, ctx),
        Cmd::Preflight { cpu, json } => cryptoscope_engine::preflight_cmd::cmd_preflight(ctx, *cpu, json.as_deref()),
        Cmd::Runs { prune, db } => cmd_runs(ctx, *prune, db),
        Cmd::Group { name, shards, db } => cryptoscope_engine::groups::cmd_group(ctx, name, *shards, db),
        Cmd::Report { runs, out, db } => cmd_report(ctx, runs, out.as_deref(), db),
        Cmd::Show {
            run,
            baseline,
            against,
            filter,
            db,
        } => cmd_show(ctx, run, baseline.as_deref(), against.as_deref(), filter, db),
        Cmd::Export {
            run,
            format,
            out,
            filter,
            db,
        } => cmd_export(ctx, run, format, out.as_deref(), filter, db),
        Cmd::Compare { args } => cmd_compare(ctx, args),
    }
}
