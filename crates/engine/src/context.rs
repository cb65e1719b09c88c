//! What a command runs with ([`Ctx`]): the worker transport, where its output and messages
//! go, the settings the process environment gave, and the parser for stored command lines.
//! The CLI builds one from the process (`Ctx::from_process` there reads the environment);
//! a test builds one with a replaying transport and captured output, and runs commands
//! in-process, several at once. Nothing below the CLI reads the environment, keeps
//! process-wide state or ends the process.

use crate::run::RunParser;
use crate::workers::Workers;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a command has been going, for the decisions that depend on it (when `ab`'s
/// `--time` is spent, when its next epoch starts). Live, the monotonic clock; in a test, a
/// scripted clock that moves on by a fixed step each time it is read, so that such a loop
/// makes the same worker calls on any machine under any load (and a replayed recording
/// holds them). Measurements never read it: they are timed in the workers.
#[derive(Clone, Debug)]
pub enum Time {
    Live(Instant),
    Scripted { step: Duration, read: Arc<AtomicU64> },
}

impl Time {
    /// The monotonic clock, from now.
    pub fn live() -> Time {
        Time::Live(Instant::now())
    }

    /// A clock at zero that moves on by `step` each time it is read.
    pub fn scripted(step: Duration) -> Time {
        Time::Scripted {
            step,
            read: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The time since this clock's start.
    pub fn now(&self) -> Duration {
        match self {
            Time::Live(start) => start.elapsed(),
            Time::Scripted { step, read } => *step * read.fetch_add(1, Ordering::Relaxed) as u32,
        }
    }
}

/// The settings a command takes from the process environment, read once by the CLI
/// ([`Env::VARS`] are all the engine and the drivers look at).
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: BTreeMap<String, OsString>,
}

impl Env {
    /// The variables read below the CLI.
    pub const VARS: &'static [&'static str] = &[
        "CRYPTOSCOPE_VECTORS",
        "CRYPTOSCOPE_DB",
        "XDG_DATA_HOME",
        "CRYPTOSCOPE_PUBLISHED",
        "CRYPTOSCOPE_RUN_GROUP",
        "CRYPTOSCOPE_TAHOE_VENV",
        "CRYPTOSCOPE_PYTHON_SRC",
        "SLURM_ARRAY_JOB_ID",
        "CARGO_HOME",
        "HOME",
        "XDG_CACHE_HOME",
        "PATH",
    ];

    /// No variables at all.
    pub fn empty() -> Env {
        Env::default()
    }

    /// These variables, as given (the CLI passes the process's).
    pub fn of<K: Into<String>, V: Into<OsString>>(vars: impl IntoIterator<Item = (K, V)>) -> Env {
        Env {
            vars: vars.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
        }
    }

    /// With `name` set to `value`.
    pub fn with(mut self, name: &str, value: impl Into<OsString>) -> Env {
        self.vars.insert(name.to_string(), value.into());
        self
    }

    /// A variable's value, if set.
    pub fn var_os(&self, name: &str) -> Option<&OsString> {
        self.vars.get(name)
    }

    /// A variable's value as text, if set and valid UTF-8.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).and_then(|v| v.to_str())
    }

    /// A variable as a path, if set and not empty.
    pub fn path(&self, name: &str) -> Option<PathBuf> {
        self.var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
    }

    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    pub fn cache_home(&self) -> Option<PathBuf> {
        self.path("XDG_CACHE_HOME")
            .or_else(|| self.path("HOME").map(|h| h.join(".cache")))
    }
}

type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

/// Where a command's output (tables, answers, JSON asked for on standard output) and its
/// messages (warnings, progress lines, errors it reports and goes on) go. Writing never
/// fails a command: output to a closed pipe is dropped, as `head` asks for.
#[derive(Clone)]
pub struct Out {
    stdout: Sink,
    stderr: Sink,
    /// Whether messages go to a terminal (a progress bar is drawn there).
    terminal: bool,
}

/// The text a captured [`Out`] received.
#[derive(Clone, Default)]
pub struct Captured {
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Captured {
    /// Everything written to the output so far.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Every message written so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

/// A writer into a shared buffer.
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Out {
    /// The process's standard output and standard error.
    pub fn std() -> Out {
        use std::io::IsTerminal;
        Out {
            stdout: Arc::new(Mutex::new(Box::new(std::io::stdout()))),
            stderr: Arc::new(Mutex::new(Box::new(std::io::stderr()))),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Output and messages kept in memory, readable through the [`Captured`] handle.
    pub fn captured() -> (Out, Captured) {
        let c = Captured::default();
        let out = Out {
            stdout: Arc::new(Mutex::new(Box::new(Buffer(Arc::clone(&c.stdout))))),
            stderr: Arc::new(Mutex::new(Box::new(Buffer(Arc::clone(&c.stderr))))),
            terminal: false,
        };
        (out, c)
    }

    /// Writes `text` to the output as it is.
    pub fn print(&self, text: &str) {
        let mut w = self.stdout.lock().unwrap_or_else(|e| e.into_inner());
        let _ = w.write_all(text.as_bytes()).and_then(|()| w.flush());
    }

    /// Writes `text` and a newline to the output.
    pub fn line(&self, text: &str) {
        self.print(&format!("{text}\n"));
    }

    /// Writes `text` and a newline to the messages.
    pub fn note(&self, text: &str) {
        let mut w = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let _ = w.write_all(format!("{text}\n").as_bytes()).and_then(|()| w.flush());
    }

    /// Whether messages go to a terminal.
    pub fn terminal(&self) -> bool {
        self.terminal
    }
}

/// Writes a formatted line to a context's output: `outln!(ctx, "{x}")`.
#[macro_export]
macro_rules! outln {
    ($ctx:expr) => { $ctx.out.line("") };
    ($ctx:expr, $($arg:tt)*) => { $ctx.out.line(&format!($($arg)*)) };
}

/// Writes formatted text (no newline added) to a context's output.
#[macro_export]
macro_rules! out {
    ($ctx:expr, $($arg:tt)*) => { $ctx.out.print(&format!($($arg)*)) };
}

/// Writes a formatted line to a context's messages: `errln!(ctx, "warning: {x}")`.
#[macro_export]
macro_rules! errln {
    ($ctx:expr) => { $ctx.out.note("") };
    ($ctx:expr, $($arg:tt)*) => { $ctx.out.note(&format!($($arg)*)) };
}

/// What a command runs with.
#[derive(Clone)]
pub struct Ctx {
    /// How workers are reached: started, recorded or replayed.
    pub workers: Arc<Workers>,
    /// Where a command reads how long it has been going (`ab --time`, its epochs).
    pub time: Time,
    pub out: Out,
    /// No progress bar or progress lines.
    pub quiet: bool,
    pub env: Env,
    /// Parses a stored command line back into `run`'s arguments (`run --resume`); the
    /// CLI owns the parser.
    pub run_parser: Option<RunParser>,
    /// The command line as typed (`cryptoscope run …`): what a run records, and what
    /// `run --resume` checks for flags it would ignore.
    pub args: Vec<String>,
}

impl Ctx {
    /// A context over these workers, writing to the process's output, with no environment.
    pub fn new(workers: Workers) -> Ctx {
        Ctx {
            workers: Arc::new(workers),
            time: Time::live(),
            out: Out::std(),
            quiet: false,
            env: Env::empty(),
            run_parser: None,
            args: Vec::new(),
        }
    }

    /// A quiet context over these workers whose output and messages are kept, with no
    /// environment: what a test runs a command in.
    pub fn captured(workers: Workers) -> (Ctx, Captured) {
        let (out, captured) = Out::captured();
        (Ctx::new(workers).with_out(out).with_quiet(true), captured)
    }

    /// With this time (a scripted one in tests).
    pub fn with_time(mut self, time: Time) -> Ctx {
        self.time = time;
        self
    }

    /// With this output.
    pub fn with_out(mut self, out: Out) -> Ctx {
        self.out = out;
        self
    }

    /// With progress off (or on).
    pub fn with_quiet(mut self, quiet: bool) -> Ctx {
        self.quiet = quiet;
        self
    }

    /// With this environment.
    pub fn with_env(mut self, env: Env) -> Ctx {
        self.env = env;
        self
    }

    /// With this command line (what the run records).
    pub fn with_args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Ctx {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// With this parser for stored `run` command lines.
    pub fn with_run_parser(mut self, parse: RunParser) -> Ctx {
        self.run_parser = Some(parse);
        self
    }
}
