//! Finding and running provider worker processes.
//!
//! Each call runs one worker process with a deadline. Its JSON-lines events are handed to
//! the caller as they arrive, so results survive a later crash. A worker that dies by a
//! signal is reported as "crashed: SIGSEGV"; one that outlives its deadline is killed
//! and reported as "timed out after N s".
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
use cryptoscope_worker::Event;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Runs `bin args...`, feeding events to `on_event`, killing it at `timeout`.
pub fn call(bin: &Path, args: &[String], timeout: Duration, on_event: &mut dyn FnMut(Event)) -> Outcome {
    call_env(bin, args, &[], timeout, on_event)
}

/// Like [`call`], with extra environment variables for the worker.
pub fn call_env(
    bin: &Path,
    args: &[String],
    env: &[(&str, &std::ffi::OsStr)],
    timeout: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Outcome {
    if let Some(r) = replay::replaying() {
        return r.call(bin, args, on_event);
    }
    if let Some(path) = replay::recording() {
        let mut events = Vec::new();
        let outcome = spawn(bin, args, env, timeout, &mut |ev| {
            events.push(ev.clone());
            on_event(ev)
        });
        replay::append(&path, bin, args, events, &outcome);
        return outcome;
    }
    spawn(bin, args, env, timeout, on_event)
}

/// Starts the worker and reads its events (the transport itself).
fn spawn(
    bin: &Path,
    args: &[String],
    env: &[(&str, &std::ffi::OsStr)],
    timeout: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Outcome {
    let limit = MEMORY_LIMIT.load(Ordering::Relaxed);
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("cannot start {}: {e}", bin.display())),
    };
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel::<Result<Event, String>>();
    let reader = std::thread::spawn(move || {
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
    let _ = reader.join();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                kill_group(&mut child);
                return Outcome::TimedOut(timeout);
            }
            Err(e) => return Outcome::Failed(e.to_string()),
        }
    };
    let err_text = err_reader.join().unwrap_or_default();
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
        let o = call(
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

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGBUS), "SIGBUS");
        assert_eq!(signal_name(64), "signal 64");
    }
}
