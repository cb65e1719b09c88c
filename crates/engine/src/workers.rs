//! Finding and running provider worker processes.
//!
//! Each call has a deadline. Its JSON-lines events are handed to the caller as they arrive,
//! so results survive a later crash. A worker that dies by a signal is reported as
//! "crashed: SIGSEGV"; one that outlives its deadline is killed and reported as "timed out
//! after N s". The gate and the timing calls go to one long-lived worker per provider
//! ([`served`]), the others (and all of them with `run --fresh-workers`) to a process of
//! their own.
//!
//! This is the one transport between the CLI and its workers, and it can record and
//! replay (docs/testing.md): with `CRYPTOSCOPE_RECORD=FILE` every call is also appended to
//! FILE (JSON lines: the worker, its arguments, its events, how it ended); with
//! `CRYPTOSCOPE_REPLAY=FILE` no worker is started and each call gets the next recorded
//! exchange of the same worker, command and subject. Rounds, resuming, merging visits,
//! the store, exports and the report are then tested on recorded samples, the same on
//! any machine. `CRYPTOSCOPE_REPLAY_KILL_AT=N` makes a replaying process kill itself
//! (SIGKILL) as its N-th `measure` call starts: a kill at an exact point of a run.

use anyhow::{Context, Result};
use cryptoscope_catalogue::names;
use cryptoscope_model::protocol::Request;
use cryptoscope_worker::Event;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
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

/// Address-space limit (bytes) set on every worker process; 0 means none. A worker that
/// exhausts it fails its next allocation and is reported as out of memory, instead of
/// driving the machine into swap or the kernel's OOM killer.
static MEMORY_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the address-space limit for workers started from now on (0: none).
pub fn set_memory_limit(bytes: u64) {
    MEMORY_LIMIT.store(bytes, Ordering::Relaxed);
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

/// Where the worker binaries are: `$CRYPTOSCOPE_WORKER_DIR`, else next to this executable.
pub fn worker_dir() -> Result<PathBuf> {
    if let Ok(d) = std::env::var("CRYPTOSCOPE_WORKER_DIR") {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe().context("cannot locate the cryptoscope executable")?;
    Ok(exe.parent().map(Path::to_path_buf).unwrap_or_default())
}

/// The worker binary of a provider, if present.
pub fn worker_path(dir: &Path, provider: &str) -> Option<PathBuf> {
    let p = dir.join(names::worker_binary(provider));
    p.is_file().then_some(p)
}

/// Kills a worker and reaps it. Workers stay in our process group, so Ctrl-C reaches them
/// too; the reader threads are not joined here, so nothing can block on a pipe.
fn kill_group(child: &mut std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `request` on the worker `bin`, feeding events to `on_event`, killing it at `timeout`.
pub fn call(bin: &Path, request: &Request, timeout: Duration, on_event: &mut dyn FnMut(Event)) -> Outcome {
    call_env(bin, request, &[], timeout, on_event)
}

/// Like [`call`], with extra environment variables for the worker (it then gets a process of
/// its own).
pub fn call_env(
    bin: &Path,
    request: &Request,
    env: &[(&str, &std::ffi::OsStr)],
    timeout: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Outcome {
    let args = request.to_args();
    exchange(bin, &args, on_event, &mut |on_event| {
        transport(bin, request, &args, env, timeout, on_event)
    })
}

/// A call the run does not make because its answer is already stored (a resumed subject's
/// stored visits). A replay drops the recorded exchange that call would have had, so the
/// calls that follow get those of an uninterrupted run; otherwise nothing happens.
pub fn skip_stored(bin: &Path, request: &Request) {
    if let Some(r) = replay::replaying() {
        r.skip(bin, &request.to_args());
    }
}

/// A program that runs a worker (valgrind with the worker's command line after its own
/// options): its events read, recorded and replayed like a worker's.
pub fn call_program(bin: &Path, args: &[String], timeout: Duration, on_event: &mut dyn FnMut(Event)) -> Outcome {
    exchange(bin, args, on_event, &mut |on_event| {
        spawn(bin, args, &[], timeout, on_event)
    })
}

/// A transport: runs one call, handing its events on.
type Transport<'a> = dyn FnMut(&mut dyn FnMut(Event)) -> Outcome + 'a;

/// One exchange through `run`, or replayed, or recorded as it runs.
fn exchange(bin: &Path, args: &[String], on_event: &mut dyn FnMut(Event), run: &mut Transport<'_>) -> Outcome {
    if let Some(r) = replay::replaying() {
        return r.call(bin, args, on_event);
    }
    if let Some(path) = replay::recording() {
        let mut events = Vec::new();
        let outcome = run(&mut |ev| {
            events.push(ev.clone());
            on_event(ev)
        });
        replay::append(&path, bin, args, events, &outcome);
        return outcome;
    }
    run(on_event)
}

/// Whether the commands that allow it go to one long-lived worker per provider
/// ([`served`]); off (`run --fresh-workers`), every call starts a worker of its own.
static LONG_LIVED: AtomicBool = AtomicBool::new(true);

/// Long-lived workers on or off for the calls from now on.
pub fn set_long_lived(on: bool) {
    LONG_LIVED.store(on, Ordering::Relaxed);
}

/// Ends every idle long-lived worker: the next call starts a fresh process (new addresses,
/// newly prepared inputs). `ab` does this between epochs so that where a process happened
/// to place code and data is not taken for a difference between A and B.
pub fn retire_long_lived() {
    served::retire_all();
}

/// The commands a long-lived worker serves: those a run makes once per subject and visit.
/// Others (memory under a preload library, valgrind, probes, scale's threads) keep a process
/// of their own.
const SERVED: &[&str] = &["gate", "measure", "verify-encaps"];

/// A long-lived worker for the calls that allow one, a new process for the others.
fn transport(
    bin: &Path,
    request: &Request,
    args: &[String],
    env: &[(&str, &std::ffi::OsStr)],
    timeout: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Outcome {
    let served = env.is_empty() && LONG_LIVED.load(Ordering::Relaxed) && SERVED.contains(&request.command());
    if served {
        served::call(&served::Server::of(bin), request, timeout, on_event)
    } else {
        spawn(bin, args, env, timeout, on_event)
    }
}

/// The program a worker runs under, from `CRYPTOSCOPE_WORKER_RUNNER` (words split on
/// spaces, as cargo's `target.<triple>.runner`): e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu`
/// for AArch64 workers on an x86-64 machine without binfmt_misc. Empty: none.
pub fn runner() -> Vec<String> {
    std::env::var("CRYPTOSCOPE_WORKER_RUNNER")
        .map(|r| r.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// The worker command with the address-space limit applied between fork and exec; under a
/// runner, the runner with the worker as its first argument, and no address-space limit
/// (an emulator reserves the guest's whole address space up front).
fn command(bin: &Path) -> Command {
    let runner = runner();
    let limit = if runner.is_empty() {
        MEMORY_LIMIT.load(Ordering::Relaxed)
    } else {
        0
    };
    let mut cmd = match runner.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(bin);
            c
        }
        None => Command::new(bin),
    };
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
fn ended(status: ExitStatus, err_text: &str, done: bool, protocol_error: Option<String>) -> Outcome {
    let limit = MEMORY_LIMIT.load(Ordering::Relaxed);
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

/// Starts a worker for one call and reads its events (the one-shot transport).
fn spawn(
    bin: &Path,
    args: &[String],
    env: &[(&str, &std::ffi::OsStr)],
    timeout: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Outcome {
    let mut cmd = command(bin);
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
    ended(status, &err_reader.join().unwrap_or_default(), done, protocol_error)
}

/// Long-lived workers: one `<worker> serve` process per provider binary, kept between calls
/// (a run's gate and every visit of every subject go to the same process) instead of one
/// process per call. Each request is a line of the call's arguments as JSON; the answer is
/// its events up to `done`, exactly as a one-shot worker writes them. A worker that
/// crashes, fails a request (it exits as a one-shot worker would) or passes its deadline
/// (killed) is reported as before and replaced at the next call.
mod served {
    use super::{
        command, ended, kill_group, mpsc, read_events, wait_until, Duration, Event, Instant, Outcome, Path, PathBuf,
        Read, Request, Result, Stdio,
    };
    use std::collections::HashMap;
    use std::io::Write;
    use std::process::{Child, ChildStdin};
    use std::sync::{Arc, Mutex};

    /// How to start a long-lived worker: `<bin> serve` (tests start stand-ins).
    #[derive(Clone, PartialEq, Eq, Hash)]
    pub struct Server {
        pub bin: PathBuf,
        pub args: Vec<String>,
    }

    impl Server {
        pub fn of(bin: &Path) -> Server {
            Server {
                bin: bin.to_path_buf(),
                args: vec!["serve".into()],
            }
        }
    }

    struct Worker {
        child: Child,
        stdin: ChildStdin,
        events: mpsc::Receiver<Result<Event, String>>,
        /// What it wrote to stderr since the current request began.
        stderr: Arc<Mutex<String>>,
        /// The stderr pipe, kept open for [`settle`] to see what is still unread in it.
        stderr_pipe: Arc<std::fs::File>,
        stderr_reader: std::thread::JoinHandle<()>,
    }

    /// Bytes written to the pipe and not yet read.
    fn unread(pipe: &std::fs::File) -> libc::c_int {
        use std::os::fd::AsRawFd;
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int; the descriptor is open while `pipe` lives.
        if unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut n) } != 0 {
            return 0;
        }
        n
    }

    /// Starts a request's stderr afresh: once everything the worker wrote before it has
    /// been read (the reader takes data only while holding the buffer's lock, so with the
    /// lock held and the pipe empty nothing earlier is in flight), the buffer is cleared.
    /// A reader that is slow to be scheduled cannot make the worker's start-up lines look
    /// like the request's.
    fn settle(w: &Worker) {
        for _ in 0..100_000 {
            let mut s = w.stderr.lock().unwrap_or_else(|e| e.into_inner());
            if unread(&w.stderr_pipe) == 0 {
                s.clear();
                return;
            }
            drop(s);
            std::thread::yield_now();
        }
        w.stderr.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The idle workers, by how they were started.
    static IDLE: Mutex<Option<HashMap<Server, Worker>>> = Mutex::new(None);

    fn start(server: &Server) -> std::result::Result<Worker, Outcome> {
        let bin = &server.bin;
        let mut cmd = command(bin);
        cmd.args(&server.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| Outcome::Failed(format!("cannot start {}: {e}", bin.display())))?;
        let events = read_events(child.stdout.take().expect("piped"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = Arc::new(std::fs::File::from(std::os::fd::OwnedFd::from(
            child.stderr.take().expect("piped"),
        )));
        let (sink, reader_pipe) = (Arc::clone(&stderr), Arc::clone(&pipe));
        let stderr_reader = std::thread::spawn(move || {
            use std::os::fd::AsRawFd;
            let mut buf = [0u8; 4096];
            loop {
                // Wait until there is data, then take it with the lock held (see `settle`).
                let mut p = libc::pollfd {
                    fd: reader_pipe.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, on a descriptor open while `reader_pipe` lives.
                if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
                    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    break;
                }
                let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                match (&*reader_pipe).read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => s.push_str(&String::from_utf8_lossy(&buf[..n])),
                }
            }
        });
        Ok(Worker {
            stdin: child.stdin.take().expect("piped"),
            child,
            events,
            stderr,
            stderr_pipe: pipe,
            stderr_reader,
        })
    }

    /// Kills and reaps every idle worker.
    pub fn retire_all() {
        let drained: Vec<Worker> = idle().take().map(|m| m.into_values().collect()).unwrap_or_default();
        for mut w in drained {
            kill_group(&mut w.child);
            let _ = w.stderr_reader.join();
        }
    }

    fn idle() -> std::sync::MutexGuard<'static, Option<HashMap<Server, Worker>>> {
        IDLE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One call on the provider's long-lived worker (started if there is none idle).
    pub fn call(server: &Server, request: &Request, timeout: Duration, on_event: &mut dyn FnMut(Event)) -> Outcome {
        let taken = idle().get_or_insert_with(HashMap::new).remove(server);
        let mut w = match taken {
            Some(w) => w,
            None => match start(server) {
                Ok(w) => w,
                Err(o) => return o,
            },
        };
        settle(&w);
        let deadline = Instant::now() + timeout;
        let line = serde_json::to_string(request).expect("a request serialises") + "\n";
        // A worker that cannot take the request has ended: what it says is below.
        let _ = w.stdin.write_all(line.as_bytes()).and_then(|()| w.stdin.flush());
        let mut protocol_error = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                kill_group(&mut w.child);
                return Outcome::TimedOut(timeout);
            }
            match w.events.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(Ok(Event::Done)) => {
                    if let Some(e) = protocol_error {
                        kill_group(&mut w.child);
                        return Outcome::Failed(e);
                    }
                    let mut pool = idle();
                    let pool = pool.get_or_insert_with(HashMap::new);
                    if pool.contains_key(server) {
                        // A concurrent call started a second one: one idle worker is enough.
                        kill_group(&mut w.child);
                    } else {
                        pool.insert(server.clone(), w);
                    }
                    return Outcome::Completed;
                }
                Ok(Ok(ev)) => on_event(ev),
                Ok(Err(e)) => protocol_error = Some(e),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        // It ended during the request: told as a one-shot worker's end.
        let status = match wait_until(&mut w.child, deadline) {
            Ok(Some(s)) => s,
            Ok(None) => return Outcome::TimedOut(timeout),
            Err(e) => return Outcome::Failed(e),
        };
        let _ = w.stderr_reader.join();
        let err_text = w.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
        ended(status, &err_text, false, protocol_error)
    }
}

/// Recording worker exchanges, and replaying them instead of starting workers.
mod replay {
    use super::Outcome;
    use cryptoscope_worker::Event;
    use serde::{Deserialize, Serialize};
    use std::collections::{HashMap, VecDeque};
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, OnceLock};

    /// One call as recorded.
    #[derive(Serialize, Deserialize)]
    struct Exchange {
        /// The worker's file name.
        worker: String,
        args: Vec<String>,
        events: Vec<Event>,
        outcome: Outcome,
    }

    /// What identifies a call across runs: the worker, its command and its subject (the
    /// other arguments carry paths, plans and clock rates that differ between runs).
    fn key(bin: &Path, args: &[String]) -> String {
        let worker = bin
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let subject = args
            .iter()
            .position(|a| a == "--subject")
            .and_then(|i| args.get(i + 1))
            .map_or("", String::as_str);
        format!("{worker} {} {subject}", args.first().map_or("", String::as_str))
    }

    pub struct Replay {
        queues: Mutex<(HashMap<String, VecDeque<Exchange>>, usize)>,
        kill_at: Option<usize>,
        file: PathBuf,
    }

    /// The replay of this process, if `CRYPTOSCOPE_REPLAY` names one. A file that cannot
    /// be read or parsed is a usage error at the first call: one line, exit status 2.
    pub fn replaying() -> Option<&'static Replay> {
        static R: OnceLock<Option<Replay>> = OnceLock::new();
        R.get_or_init(|| {
            let file = PathBuf::from(std::env::var_os("CRYPTOSCOPE_REPLAY")?);
            let fail = |why: String| -> ! {
                eprintln!("error: CRYPTOSCOPE_REPLAY={}: {why}", file.display());
                std::process::exit(2)
            };
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| fail(e.to_string()));
            let mut queues: HashMap<String, VecDeque<Exchange>> = HashMap::new();
            for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let x: Exchange = serde_json::from_str(line).unwrap_or_else(|e| fail(format!("line {}: {e}", n + 1)));
                queues
                    .entry(key(Path::new(&x.worker), &x.args))
                    .or_default()
                    .push_back(x);
            }
            let kill_at = std::env::var("CRYPTOSCOPE_REPLAY_KILL_AT").ok().map(|v| {
                v.parse()
                    .unwrap_or_else(|_| fail(format!("CRYPTOSCOPE_REPLAY_KILL_AT={v}: not a number")))
            });
            Some(Replay {
                queues: Mutex::new((queues, 0)),
                kill_at,
                file: file.clone(),
            })
        })
        .as_ref()
    }

    impl Replay {
        /// Drops the next recorded exchange of this call ([`super::skip_stored`]); not a
        /// call, so not counted for `CRYPTOSCOPE_REPLAY_KILL_AT`.
        pub fn skip(&self, bin: &Path, args: &[String]) {
            let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            q.0.get_mut(&key(bin, args)).and_then(VecDeque::pop_front);
        }

        /// Hands `on_event` the next recorded exchange of this call. With `--ops`, only
        /// the listed operations' results are handed on, as a worker asked for those alone
        /// would (`run --resume`). No recorded exchange left: the call fails, saying so.
        pub fn call(&self, bin: &Path, args: &[String], on_event: &mut dyn FnMut(Event)) -> Outcome {
            let k = key(bin, args);
            let x = {
                let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
                if args.first().is_some_and(|c| c == "measure") {
                    q.1 += 1;
                    if self.kill_at == Some(q.1) {
                        // SAFETY: kill and getpid have no preconditions.
                        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
                    }
                }
                q.0.get_mut(&k).and_then(VecDeque::pop_front)
            };
            let Some(x) = x else {
                return Outcome::Failed(format!(
                    "no recorded exchange for `{k}` left in {}",
                    self.file.display()
                ));
            };
            let ops: Option<Vec<&str>> = args
                .iter()
                .position(|a| a == "--ops")
                .and_then(|i| args.get(i + 1))
                .map(|l| l.split(',').collect());
            for ev in x.events {
                let op = match &ev {
                    Event::Measured(m) => Some(m.operation.as_str().to_string()),
                    Event::OpFailed { operation, .. } => Some(operation.as_str().to_string()),
                    _ => None,
                };
                if let (Some(ops), Some(op)) = (&ops, op) {
                    if !ops.contains(&op.as_str()) {
                        continue;
                    }
                }
                on_event(ev);
            }
            x.outcome
        }
    }

    /// The file `CRYPTOSCOPE_RECORD` names, if any.
    pub fn recording() -> Option<PathBuf> {
        std::env::var_os("CRYPTOSCOPE_RECORD").map(PathBuf::from)
    }

    /// Appends one exchange to the recording (one line, in append mode).
    pub fn append(path: &Path, bin: &Path, args: &[String], events: Vec<Event>, outcome: &Outcome) {
        let x = Exchange {
            worker: bin
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            args: args.to_vec(),
            events,
            outcome: outcome.clone(),
        };
        let line = serde_json::to_string(&x).expect("events serialise") + "\n";
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("warning: CRYPTOSCOPE_RECORD={}: {e}", path.display());
        }
    }
}

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
        let o = call_program(
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
    fn ask(server: &served::Server, what: &str, timeout_ms: u64) -> (Outcome, Option<String>) {
        let mut pid = None;
        let request = Request::CtMaterial {
            subject: what.to_string(),
            out: "/nowhere".into(),
        };
        let o = served::call(server, &request, Duration::from_millis(timeout_ms), &mut |e| {
            if let Event::OpFailed { subject, .. } = e {
                pid = Some(subject)
            }
        });
        (o, pid)
    }

    #[test]
    fn a_long_lived_worker_serves_call_after_call_and_is_replaced_when_it_ends() {
        let p = script(SERVER);
        let server = served::Server {
            bin: PathBuf::from("/bin/sh"),
            args: vec![p.display().to_string()],
        };
        let (o, first) = ask(&server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        let (o, again) = ask(&server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(
            first.is_some() && first == again,
            "one process served both: {first:?} {again:?}"
        );
        // A crash is the call's outcome; the next call gets a new process.
        assert_eq!(ask(&server, "crash", 5_000).0, Outcome::Crashed("SIGSEGV".into()));
        let (o, third) = ask(&server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(third.is_some() && third != first, "a new process after the crash");
        // A failing request: its own message, not what the process wrote before it.
        assert_eq!(
            ask(&server, "fail", 5_000).0,
            Outcome::Failed("error: unknown subject `x`".into())
        );
        // A hang: killed at the deadline, and replaced.
        assert_eq!(
            ask(&server, "hang", 300).0,
            Outcome::TimedOut(Duration::from_millis(300))
        );
        let (o, fourth) = ask(&server, "measure", 5_000);
        assert_eq!(o, Outcome::Completed);
        assert!(fourth.is_some() && fourth != third);
        // Retired, the idle worker is gone: the next call is served by a new process.
        served::retire_all();
        let (o, fifth) = ask(&server, "measure", 5_000);
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
