//! The clients of the OpenVPN server study: each a thread that starts whole OpenVPN client
//! processes one after another, on its pace, and reads each one's log from a pipe until the
//! connection is up; and the reaper, which lets the ended clients say goodbye to the
//! server (`--explicit-exit-notify`, about a second) without holding up the next start.

use anyhow::Result;
use cryptoscope_measure::pace::{Next, Pace};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

/// The longest a client may take to connect before it counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// One completed connection.
#[derive(Debug, Clone)]
pub(super) struct Connection {
    /// When its "Initialization Sequence Completed" was read.
    pub(super) ready: Instant,
    /// First packet to ready, by the client's log stamps (ms).
    pub(super) connect_ms: f64,
    /// Process start to ready, by our clock (ms).
    pub(super) start_ms: f64,
    pub(super) control: String,
    pub(super) data: String,
}

/// What every client thread shares.
pub(super) struct Shared {
    pub(super) stop: AtomicBool,
    /// Connections completed from `from` on (the window's start), for the window's end.
    pub(super) completed: AtomicU64,
    pub(super) from: OnceLock<Instant>,
}

/// What one client thread hands back.
#[derive(Default)]
pub(super) struct Outcome {
    pub(super) done: Vec<Connection>,
    /// Processes that ended or timed out without connecting, with when.
    pub(super) failed: Vec<(Instant, String)>,
    /// Starts taken late, with when.
    pub(super) late: Vec<Instant>,
}

/// A log line's stamp (`--machine-readable-output`: `SECONDS.MICROS FLAGS TEXT`), in µs.
pub(super) fn stamp(line: &str) -> Option<i64> {
    let (s, us) = line.split_whitespace().next()?.split_once('.')?;
    if us.len() != 6 {
        return None;
    }
    Some(s.parse::<i64>().ok()? * 1_000_000 + us.parse::<i64>().ok()?)
}

/// What a client's log says about its connection.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Log {
    /// The stamp of "UDPv4 link remote": the socket is ready and the first packet goes next.
    pub(super) first_packet: Option<i64>,
    pub(super) ready: Option<i64>,
    pub(super) control: Option<String>,
    pub(super) data: Option<String>,
    /// The last line, for a failure's message.
    pub(super) last: String,
}

impl Log {
    /// Takes one line.
    pub(super) fn line(&mut self, line: &str) {
        let text = line.splitn(3, ' ').nth(2).unwrap_or(line).trim();
        if text.is_empty() {
            return;
        }
        if text.starts_with("UDPv4 link remote:") {
            self.first_packet = self.first_packet.or(stamp(line));
        } else if text == "Initialization Sequence Completed" {
            self.ready = stamp(line);
        } else if let Some(c) = text.strip_prefix("Control Channel: ") {
            self.control = Some(c.to_string());
        } else if let Some(d) = text.strip_prefix("Data Channel: ") {
            self.data = Some(d.split(", peer-id").next().unwrap_or(d).to_string());
        }
        self.last = text.to_string();
    }

    /// Whether everything the connection is judged on has been read.
    pub(super) fn complete(&self) -> bool {
        self.ready.is_some() && self.control.is_some() && self.data.is_some()
    }
}

/// Reads `out` line by line into `log` until it is complete, the process ends (EOF), the
/// deadline passes or `stop` is set; returns when the ready line was read.
fn follow(out: &mut ChildStdout, log: &mut Log, deadline: Instant, stop: &AtomicBool) -> Option<Instant> {
    let fd = out.as_raw_fd();
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let mut ready_at = None;
    while !log.complete() {
        let now = Instant::now();
        if now >= deadline || stop.load(Ordering::Relaxed) {
            break;
        }
        let wait = (deadline - now).min(Duration::from_millis(100));
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let r = unsafe { libc::poll(&mut p, 1, wait.as_millis().max(1) as i32) };
        if r <= 0 {
            continue;
        }
        let k = match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => k,
        };
        pending.extend_from_slice(&buf[..k]);
        while let Some(i) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=i).collect();
            let had = log.ready.is_some();
            log.line(&String::from_utf8_lossy(&line));
            if !had && log.ready.is_some() {
                ready_at = Some(Instant::now());
            }
        }
    }
    ready_at
}

/// Stops the ended clients: SIGTERM has been sent; each gets 10 s to tell the server and
/// exit, then is killed. Its pipe is kept open until then, so its last lines have somewhere
/// to go.
pub(super) fn reaper(rx: mpsc::Receiver<(Child, ChildStdout)>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut dying: Vec<(Child, ChildStdout, Instant)> = Vec::new();
        let mut open = true;
        while open || !dying.is_empty() {
            loop {
                match rx.try_recv() {
                    Ok((c, o)) => dying.push((c, o, Instant::now())),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
            dying.retain_mut(|(c, out, since)| {
                let mut sink = [0u8; 4096];
                let mut p = libc::pollfd {
                    fd: out.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                if unsafe { libc::poll(&mut p, 1, 0) } > 0 {
                    let _ = out.read(&mut sink);
                }
                if let Ok(Some(_)) = c.try_wait() {
                    return false;
                }
                if since.elapsed() > Duration::from_secs(10) {
                    let _ = c.kill();
                    let _ = c.wait();
                    return false;
                }
                true
            });
            std::thread::sleep(Duration::from_millis(20));
        }
    })
}

/// One client thread: connections started on `pace` (the common start being `t0`) until
/// `stop`. `command` makes a fresh client process's command (namespace, CPUs, environment).
pub(super) fn client(
    mut pace: Pace,
    t0: Instant,
    shared: Arc<Shared>,
    command: impl Fn() -> Command,
    reaper: mpsc::Sender<(Child, ChildStdout)>,
) -> Result<Outcome> {
    let mut o = Outcome::default();
    let mut consecutive = 0u32;
    while !shared.stop.load(Ordering::Relaxed) {
        match pace.next(t0.elapsed()) {
            Next::Wait(d) => {
                std::thread::sleep(d.min(Duration::from_millis(100)));
                continue;
            }
            Next::Now { late } => {
                if late {
                    o.late.push(Instant::now());
                }
            }
        }
        let mut cmd = command();
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
        let started = Instant::now();
        let mut child = cmd.spawn()?;
        let mut out = child.stdout.take().expect("piped");
        let mut log = Log::default();
        let ready = follow(&mut out, &mut log, started + CONNECT_TIMEOUT, &shared.stop);
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = reaper.send((child, out));
        match (ready, log.first_packet, log.ready) {
            (Some(at), Some(first), Some(done)) if log.complete() => {
                consecutive = 0;
                if shared.from.get().is_some_and(|f| at >= *f) {
                    shared.completed.fetch_add(1, Ordering::Relaxed);
                }
                o.done.push(Connection {
                    ready: at,
                    connect_ms: (done - first) as f64 / 1000.0,
                    start_ms: (at - started).as_secs_f64() * 1000.0,
                    control: log.control.unwrap_or_default(),
                    data: log.data.unwrap_or_default(),
                });
            }
            _ if shared.stop.load(Ordering::Relaxed) => break,
            _ => {
                consecutive += 1;
                let why = if started.elapsed() >= CONNECT_TIMEOUT {
                    format!(
                        "not connected after {} s; its last line: {}",
                        CONNECT_TIMEOUT.as_secs(),
                        log.last
                    )
                } else {
                    format!("ended without connecting: {}", log.last)
                };
                o.failed.push((Instant::now(), why));
                if consecutive >= 10 {
                    break; // the server is not serving: no point going on
                }
            }
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a real OpenVPN 2.6.14 client's log (`--machine-readable-output --verb 3`),
    /// trimmed, from a connection to a server with an RSA-2048 certificate and DHE.
    const LOG: &str = "\
1795939396.178063 1 UDPv4 link remote: [AF_INET]10.98.0.2:1194
1795939396.178964 14000003 TLS: Initial packet from [AF_INET]10.98.0.2:1194, sid=630294b1 ae648ee5
1795939396.199669 14000002 Control Channel: TLSv1.2, cipher TLSv1.2 DHE-RSA-AES256-GCM-SHA384, peer certificate: 2048 bits RSA, signature: RSA-SHA256, peer temporary key: 2048 bits DH
1795939396.200897 1 Initialization Sequence Completed
1795939396.200903 14000002 Data Channel: cipher 'AES-256-CBC', auth 'SHA256', peer-id: 0
";

    #[test]
    fn a_client_log_gives_the_connection_time_and_both_channels() {
        let mut log = Log::default();
        for l in LOG.lines() {
            assert!(!log.complete());
            log.line(l);
        }
        assert!(log.complete());
        assert_eq!(log.ready.unwrap() - log.first_packet.unwrap(), 22_834);
        assert!(log.control.as_deref().unwrap().contains("DHE-RSA-AES256-GCM-SHA384"));
        assert_eq!(log.data.as_deref(), Some("cipher 'AES-256-CBC', auth 'SHA256'"));
    }

    #[test]
    fn stamps_need_six_digits_of_microseconds() {
        assert_eq!(stamp("1795939396.000001 1 x"), Some(1_795_939_396_000_001));
        assert_eq!(stamp("1795939396.1 1 x"), None);
        assert_eq!(stamp("Sun Nov 29 x"), None);
    }
}
