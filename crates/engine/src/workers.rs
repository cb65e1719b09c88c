//! Finding and running provider worker processes.
//!
//! Each call has a deadline. Its JSON-lines events are handed to the caller as they arrive,
//! so results survive a later crash. A worker that dies by a signal is reported as
//! "crashed: SIGSEGV"; one that outlives its deadline is killed and reported as "timed out
//! after N s". The gate and the timing calls go to one long-lived worker per provider
//! ([`served`]), the others (and all of them with `run --fresh-workers`) to a process of
//! their own.
//!
//! [`Workers`] is the one transport between a command and its workers, a value of the
//! command's context, and it can record and replay (docs/testing.md): recording, every call
//! is also appended to a file (JSON lines: the worker, its arguments, its events, how it
//! ended); replaying, no worker is started and each call gets the next recorded exchange of
//! the same worker, command and subject. Rounds, resuming, merging visits, the store,
//! exports and the report are then tested on recorded samples, the same on any machine,
//! in-process (`crates/engine/tests`). A replay can stop as its N-th `measure` call starts
//! ([`Stop`]): a kill at an exact point of a run. The CLI builds the transport from
//! `CRYPTOSCOPE_WORKER_DIR`, `CRYPTOSCOPE_WORKER_RUNNER`, `CRYPTOSCOPE_RECORD`,
//! `CRYPTOSCOPE_REPLAY` and `CRYPTOSCOPE_REPLAY_KILL_AT`.

use anyhow::Result;
use cryptoscope_catalogue::names;
use cryptoscope_model::protocol::Request;
use cryptoscope_worker::Event;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a worker call ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Exit status 0 after a `done` event.
    Completed,
    /// Killed by a signal.
    Crashed(String),
    /// Killed by us at the deadline.
    TimedOut(Duration),
    /// Exited with a non-zero status (its last stderr line).
    Failed(String),
}

impl Outcome {
    pub fn describe(&self) -> String {
        match self {
            Outcome::Completed => "completed".into(),
            Outcome::Crashed(s) => format!("crashed: {s}"),
            Outcome::TimedOut(d) => format!("timed out after {} s", d.as_secs()),
            Outcome::Failed(s) => format!("worker failed: {s}"),
        }
    }
}

/// Human name of a signal.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL (out of memory?)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGTRAP => "SIGTRAP",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// The default limit: half the machine's memory, at least 4 GiB.
pub fn default_memory_limit() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(16 << 30, |kb| kb * 1024);
    (total / 2).max(4 << 30)
}

/// Human form of a byte count in GiB.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Kills a worker and reaps it. Workers stay in our process group, so Ctrl-C reaches them
/// too; the reader threads are not joined here, so nothing can block on a pipe.
fn kill_group(child: &mut std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// How calls reach workers.
enum Mode {
    /// Workers are started.
    Live,
    /// Workers are started and every exchange is appended to this file.
    Recording(PathBuf),
    /// No worker is started: each call gets the next recorded exchange.
    Replaying(replay::Replay),
}

/// What a replay does as its N-th `measure` call starts: a kill at an exact point of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The process kills itself (SIGKILL): nothing after that point runs.
    Kill,
    /// The call panics with [`Stopped`]; a test running the command in-process catches the
    /// unwind and finds in the store what a kill at that point would have left.
    Unwind,
}

/// The panic payload of [`Stop::Unwind`]: the `measure` call it stopped at.
#[derive(Debug)]
pub struct Stopped(pub usize);

/// The worker transport of one context ([`crate::context::Ctx`]): where the workers are,
/// the program they run under, the address-space limit, the long-lived workers it keeps,
/// and whether calls are recorded or replayed. Dropping it ends its long-lived workers.
pub struct Workers {
    dir: PathBuf,
    runner: Vec<String>,
    /// Address-space limit (bytes) set on every worker process; 0 means none. A worker
    /// that exhausts it fails its next allocation and is reported as out of memory,
    /// instead of driving the machine into swap or the kernel's OOM killer.
    memory_limit: AtomicU64,
    /// Whether the commands that allow it go to one long-lived worker per provider
    /// ([`served`]); off (`run --fresh-workers`), every call starts a worker of its own.
    long_lived: AtomicBool,
    mode: Mode,
    /// The idle long-lived workers, by how they were started.
    idle: Mutex<HashMap<served::Server, served::Worker>>,
    /// Processes started so far.
    started: AtomicUsize,
    /// Variables set in every worker started from now on.
    worker_env: Mutex<Vec<(String, std::ffi::OsString)>>,
}

impl Workers {
    /// Workers found in `dir` and started for each call (or kept, [`served`]).
    pub fn live(dir: PathBuf) -> Workers {
        Workers {
            dir,
            runner: Vec::new(),
            memory_limit: AtomicU64::new(0),
            long_lived: AtomicBool::new(true),
            mode: Mode::Live,
            idle: Mutex::new(HashMap::new()),
            started: AtomicUsize::new(0),
            worker_env: Mutex::new(Vec::new()),
        }
    }

    /// Workers started and every exchange appended to `file` (JSON lines: the worker, its
    /// arguments, its events, how it ended).
    pub fn recording(dir: PathBuf, file: PathBuf) -> Workers {
        let mut w = Workers::live(dir);
        w.mode = Mode::Recording(file);
        w
    }

    /// No worker started: each call gets the next exchange of the same worker, command and
    /// subject recorded in `file`. `stop_at`: what happens as the N-th `measure` call
    /// starts (a kill at an exact point of a run). A file that cannot be read or parsed is
    /// a usage error.
    pub fn replaying(dir: PathBuf, file: &Path, stop_at: Option<(usize, Stop)>) -> Result<Workers> {
        let mut w = Workers::live(dir);
        w.mode = Mode::Replaying(replay::Replay::load(file, stop_at)?);
        Ok(w)
    }

    /// Workers run under this program (words as cargo's `target.<triple>.runner`: e.g.
    /// `qemu-aarch64 -L /usr/aarch64-linux-gnu` for AArch64 workers on an x86-64 machine
    /// without binfmt_misc); empty: none.
    pub fn with_runner(mut self, runner: Vec<String>) -> Workers {
        self.runner = runner;
        self
    }

    /// Where the worker binaries are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The program workers run under (empty: none).
    pub fn runner(&self) -> &[String] {
        &self.runner
    }

    /// The worker binary of a provider, if present (replaying: if the recording has its
    /// exchanges, present or not).
    pub fn worker_path(&self, provider: &str) -> Option<PathBuf> {
        let p = self.dir.join(names::worker_binary(provider));
        match &self.mode {
            Mode::Replaying(r) if r.has_worker(&p) => Some(p),
            _ => p.is_file().then_some(p),
        }
    }

    /// Sets a variable in every worker started from now on (`micro`: build subjects load
    /// their probed libraries in every worker, so the gate checks the code that is timed).
    pub fn set_worker_env(&self, name: &str, value: &std::ffi::OsStr) {
        self.worker_env
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((name.to_string(), value.to_os_string()));
    }

    /// Sets the address-space limit for workers started from now on (0: none).
    pub fn set_memory_limit(&self, bytes: u64) {
        self.memory_limit.store(bytes, Ordering::Relaxed);
    }

    fn memory_limit(&self) -> u64 {
        self.memory_limit.load(Ordering::Relaxed)
    }

    /// Long-lived workers on or off for the calls from now on.
    pub fn set_long_lived(&self, on: bool) {
        self.long_lived.store(on, Ordering::Relaxed);
    }

    /// Ends every idle long-lived worker: the next call starts a fresh process (new
    /// addresses, newly prepared inputs). `ab` does this between epochs so that where a
    /// process happened to place code and data is not taken for a difference between A and B.
    pub fn retire_long_lived(&self) {
        served::retire_all(self);
    }

    /// How many worker processes (or programs) this transport has started.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }

    /// Runs `request` on the worker `bin`, feeding events to `on_event`, killing it at
    /// `timeout`.
    pub fn call(&self, bin: &Path, request: &Request, timeout: Duration, on_event: &mut dyn FnMut(Event)) -> Outcome {
        self.call_env(bin, request, &[], timeout, on_event)
    }

    /// Like [`Workers::call`], with extra environment variables for the worker (it then gets
    /// a process of its own).
    pub fn call_env(
        &self,
        bin: &Path,
        request: &Request,
        env: &[(&str, &std::ffi::OsStr)],
        timeout: Duration,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        let args = request.to_args();
        self.exchange(bin, &args, on_event, &mut |on_event| {
            self.transport(bin, request, &args, env, timeout, on_event)
        })
    }

    /// A call the run does not make because its answer is already stored (a resumed
    /// subject's stored visits). A replay drops the recorded exchange that call would have
    /// had, so the calls that follow get those of an uninterrupted run; otherwise nothing
    /// happens.
    pub fn skip_stored(&self, bin: &Path, request: &Request) {
        if let Mode::Replaying(r) = &self.mode {
            r.skip(bin, &request.to_args());
        }
    }

    /// A program that runs a worker (valgrind with the worker's command line after its own
    /// options): its events read, recorded and replayed like a worker's.
    pub fn call_program(
        &self,
        bin: &Path,
        args: &[String],
        timeout: Duration,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        self.exchange(bin, args, on_event, &mut |on_event| {
            self.spawn(bin, args, &[], timeout, on_event)
        })
    }

    /// One exchange through `run`, or replayed, or recorded as it runs.
    fn exchange(&self, bin: &Path, args: &[String], on_event: &mut dyn FnMut(Event), run: &mut Call<'_>) -> Outcome {
        match &self.mode {
            Mode::Replaying(r) => r.call(bin, args, on_event),
            Mode::Recording(path) => {
                let mut events = Vec::new();
                let outcome = run(&mut |ev| {
                    events.push(ev.clone());
                    on_event(ev)
                });
                match replay::append(path, bin, args, events, &outcome) {
                    Ok(()) => outcome,
                    Err(e) => Outcome::Failed(format!("cannot record to {}: {e}", path.display())),
                }
            }
            Mode::Live => run(on_event),
        }
    }

    /// A long-lived worker for the calls that allow one, a new process for the others.
    fn transport(
        &self,
        bin: &Path,
        request: &Request,
        args: &[String],
        env: &[(&str, &std::ffi::OsStr)],
        timeout: Duration,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        let served = env.is_empty() && self.long_lived.load(Ordering::Relaxed) && SERVED.contains(&request.command());
        if served {
            served::call(self, &served::Server::of(bin), request, timeout, on_event)
        } else {
            self.spawn(bin, args, env, timeout, on_event)
        }
    }

    /// The worker command with the address-space limit applied between fork and exec; under
    /// a runner, the runner with the worker as its first argument, and no address-space
    /// limit (an emulator reserves the guest's whole address space up front).
    fn command(&self, bin: &Path) -> Command {
        let limit = if self.runner.is_empty() { self.memory_limit() } else { 0 };
        self.started.fetch_add(1, Ordering::Relaxed);
        let mut cmd = match self.runner.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.envs(
            self.worker_env
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        if limit > 0 {
            // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let r = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        cmd
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        served::retire_all(self);
    }
}

/// A call through one transport: runs it, handing its events on.
type Call<'a> = dyn FnMut(&mut dyn FnMut(Event)) -> Outcome + 'a;

/// The commands a long-lived worker serves: those a run makes once per subject and visit.
/// Others (memory under a preload library, valgrind, probes, scale's threads) keep a process
/// of their own.
const SERVED: &[&str] = &["gate", "measure", "verify-encaps"];

/// Reads a worker's standard output into events (or protocol errors) on a thread of its own.
fn read_events(stdout: std::process::ChildStdout) -> mpsc::Receiver<Result<Event, String>> {
    let (tx, rx) = mpsc::channel::<Result<Event, String>>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let ev = serde_json::from_str::<Event>(&line)
                .map_err(|e| format!("unreadable worker output ({e}): {line:.120}"));
            if tx.send(ev).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (until `deadline`) for a worker whose output has ended; `None` if it had to be
/// killed at the deadline.
fn wait_until(child: &mut std::process::Child, deadline: Instant) -> std::result::Result<Option<ExitStatus>, String> {
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Ok(Some(s)),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                kill_group(child);
                return Ok(None);
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// How a call ended, from the worker's exit status and what it wrote to stderr during the
/// call: a signal (out of memory told apart), a failure with its last stderr line, or
/// completion when it said `done`.
fn ended(status: ExitStatus, err_text: &str, done: bool, protocol_error: Option<String>, limit: u64) -> Outcome {
    let last_err = err_text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    if let Some(sig) = status.signal() {
        // Rust's allocator aborts with this message; C code under the limit gets NULL
        // from malloc and usually crashes soon after.
        if let Some(line) = err_text.lines().find(|l| l.contains("memory allocation of")) {
            let limit = if limit > 0 {
                format!(", limit {}", gib(limit))
            } else {
                String::new()
            };
            return Outcome::Crashed(format!("out of memory ({}{limit})", line.trim()));
        }
        let mut s = signal_name(sig);
        if !last_err.is_empty() {
            s = format!("{s} ({last_err})");
        }
        return Outcome::Crashed(s);
    }
    if !status.success() {
        let code = status.code().unwrap_or(-1);
        return Outcome::Failed(if last_err.is_empty() {
            format!("exit status {code}")
        } else {
            last_err
        });
    }
    match (done, protocol_error) {
        (true, None) => Outcome::Completed,
        (_, Some(e)) => Outcome::Failed(e),
        (false, None) => Outcome::Failed("worker ended without finishing".into()),
    }
}

impl Workers {
    /// Starts a worker for one call and reads its events (the one-shot transport).
    fn spawn(
        &self,
        bin: &Path,
        args: &[String],
        env: &[(&str, &std::ffi::OsStr)],
        timeout: Duration,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        let mut cmd = self.command(bin);
        cmd.args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("cannot start {}: {e}", bin.display())),
        };
        let rx = read_events(child.stdout.take().expect("piped"));
        let mut stderr = child.stderr.take().expect("piped");
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let deadline = Instant::now() + timeout;
        let mut done = false;
        let mut protocol_error = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                kill_group(&mut child);
                return Outcome::TimedOut(timeout);
            }
            match rx.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(Ok(Event::Done)) => done = true,
                Ok(Ok(ev)) => on_event(ev),
                Ok(Err(e)) => protocol_error = Some(e),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = match wait_until(&mut child, deadline) {
            Ok(Some(s)) => s,
            Ok(None) => return Outcome::TimedOut(timeout),
            Err(e) => return Outcome::Failed(e),
        };
        ended(
            status,
            &err_reader.join().unwrap_or_default(),
            done,
            protocol_error,
            self.memory_limit(),
        )
    }
}

mod served;

mod replay;

#[cfg(test)]
mod tests {
    //! The process mechanics with stand-in workers (shell scripts): a crash, a hang, a
    //! failure and garbage output are each reported as such, and events emitted before a
    //! crash are still delivered.
    use super::*;

    fn script(body: &str) -> PathBuf {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("cs-fake-worker-{}-{k}.sh", std::process::id()));
        std::fs::write(&p, format!("{body}\n")).unwrap();
        p
    }

    /// Runs the stand-in as `sh SCRIPT`: executing a file just written fails with "text
    /// file busy" when a parallel test forks while it is still open for writing.
    fn run(body: &str, timeout_ms: u64) -> (Outcome, usize) {
        let p = script(body);
        let mut n = 0;
        let args = [p.display().to_string()];
        let o = Workers::live(PathBuf::new()).call_program(
            Path::new("/bin/sh"),
            &args,
            Duration::from_millis(timeout_ms),
            &mut |_| n += 1,
        );
        let _ = std::fs::remove_file(p);
        (o, n)
    }

    #[test]
    fn completed() {
        let (o, n) = run(r#"echo '{"type":"done"}'"#, 5_000);
        assert_eq!(o, Outcome::Completed);
        assert_eq!(n, 0);
    }

    #[test]
    fn segfault_is_a_crash_and_earlier_events_survive() {
        let (o, n) = run(
            r#"echo '{"type":"op-failed","subject":"x","operation":"keypair","error":"e"}'; kill -SEGV $$"#,
            5_000,
        );
        assert_eq!(o, Outcome::Crashed("SIGSEGV".into()));
        assert_eq!(n, 1, "the event before the crash is kept");
    }

    #[test]
    fn abort_is_a_crash() {
        let (o, _) = run("kill -ABRT $$", 5_000);
        assert!(
            matches!(o, Outcome::Crashed(ref s) if s.starts_with("SIGABRT")),
            "{o:?}"
        );
    }

    #[test]
    fn hang_times_out() {
        let t = std::time::Instant::now();
        let (o, _) = run("exec sleep 30", 300);
        assert_eq!(o, Outcome::TimedOut(Duration::from_millis(300)));
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(o.describe(), "timed out after 0 s");
    }

    #[test]
    fn nonzero_exit_reports_stderr() {
        let (o, _) = run("echo 'error: unknown subject' >&2; exit 2", 5_000);
        assert_eq!(o, Outcome::Failed("error: unknown subject".into()));
    }

    #[test]
    fn garbage_output_is_a_protocol_failure() {
        let (o, _) = run(r#"echo 'hello'; echo '{"type":"done"}'"#, 5_000);
        assert!(
            matches!(o, Outcome::Failed(ref s) if s.contains("unreadable worker output")),
            "{o:?}"
        );
    }

    /// A stand-in long-lived worker: answers each request line with its pid (as the
    /// subject of an event) and `done`; the request `crash` kills it, `fail` makes it exit
    /// 2 with a message, `hang` never answers.
    const SERVER: &str = r#"
echo 'started' >&2
while read -r line; do
  case "$line" in
    *crash*) kill -SEGV $$ ;;
    *fail*) echo 'error: unknown subject `x`' >&2; exit 2 ;;
    *hang*) exec sleep 30 ;;
  esac
  echo "{\"type\":\"op-failed\",\"subject\":\"$$\",\"operation\":\"keypair\",\"error\":\"e\"}"
  echo '{"type":"done"}'
done"#;

    /// One request to the stand-in: its outcome and the pid that answered, if any.
    fn ask(workers: &Workers, server: &served::Server, what: &str, timeout_ms: u64) -> (Outcome, Option<String>) {
        let mut pid = None;
        let request = Request::CtMaterial {
            subject: what.to_string(),
            out: "/nowhere".into(),
        };
        let o = served::call(workers, server, &request, Duration::from_millis(timeout_ms), &mut |e| {
            if let Event::OpFailed { subject, .. } = e {
                pid = Some(subject)
            }
        });
        (o, pid)
    }

    #[test]
    fn a_long_lived_worker_serves_call_after_call_and_is_replaced_when_it_ends() {
        let p = script(SERVER);
        let w = Workers::live(PathBuf::new());
        let server = served::Server {
            bin: PathBuf::from("/bin/sh"),
            args: vec![p.display().to_string()],
        };
        let (o, first) = ask(&w, &server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        let (o, again) = ask(&w, &server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(
            first.is_some() && first == again,
            "one process served both: {first:?} {again:?}"
        );
        // A crash is the call's outcome; the next call gets a new process.
        assert_eq!(ask(&w, &server, "crash", 5_000).0, Outcome::Crashed("SIGSEGV".into()));
        let (o, third) = ask(&w, &server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(third.is_some() && third != first, "a new process after the crash");
        // A failing request: its own message, not what the process wrote before it.
        assert_eq!(
            ask(&w, &server, "fail", 5_000).0,
            Outcome::Failed("error: unknown subject `x`".into())
        );
        // A hang: killed at the deadline, and replaced.
        assert_eq!(
            ask(&w, &server, "hang", 300).0,
            Outcome::TimedOut(Duration::from_millis(300))
        );
        let (o, fourth) = ask(&w, &server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(fourth.is_some() && fourth != third);
        // Retired, the idle worker is gone: the next call is served by a new process.
        w.retire_long_lived();
        let (o, fifth) = ask(&w, &server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(fifth.is_some() && fifth != fourth, "{fourth:?} {fifth:?}");
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGBUS), "SIGBUS");
        assert_eq!(signal_name(64), "signal 64");
    }
}
