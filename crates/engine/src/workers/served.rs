//! Long-lived workers: one `<worker> serve` process per provider binary, kept between calls
//! (a run's gate and every visit of every subject go to the same process) instead of one
//! process per call. Each request is a line of the call's arguments as JSON; the answer is
//! its events up to `done`, exactly as a one-shot worker writes them. A worker that
//! crashes, fails a request (it exits as a one-shot worker would) or passes its deadline
//! (killed) is reported as before and replaced at the next call.

use super::{
    ended, kill_group, mpsc, read_events, wait_until, Duration, Event, Instant, Outcome, Path, PathBuf, Read, Request,
    Result, Stdio, Workers,
};
use std::collections::HashMap;
use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex, MutexGuard};

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

pub struct Worker {
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

fn start(workers: &Workers, server: &Server) -> std::result::Result<Worker, Outcome> {
    let bin = &server.bin;
    let mut cmd = workers.command(bin);
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
pub fn retire_all(workers: &Workers) {
    let drained: Vec<Worker> = idle(workers).drain().map(|(_, w)| w).collect();
    for mut w in drained {
        kill_group(&mut w.child);
        let _ = w.stderr_reader.join();
    }
}

fn idle(workers: &Workers) -> MutexGuard<'_, HashMap<Server, Worker>> {
    workers.idle.lock().unwrap_or_else(|e| e.into_inner())
}

/// One call on the provider's long-lived worker (started if there is none idle).
pub fn call(
    workers: &Workers,
    server: &Server,
    request: &Request,
    timeout: Duration,
    on_event: &mut dyn FnMut(Event),
) -> Outcome {
    let taken = idle(workers).remove(server);
    let mut w = match taken {
        Some(w) => w,
        None => match start(workers, server) {
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
                let mut pool = idle(workers);
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
    ended(status, &err_text, false, protocol_error, workers.memory_limit())
}
