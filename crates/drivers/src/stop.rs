//! Stopping cleanly. Drivers that make namespaces, firewall rules and daemons catch SIGINT
//! (Ctrl-C), SIGTERM (`kill`, a job scheduler, a CI time limit) and SIGHUP (a closed
//! terminal) while they run: the signal sets a flag instead of ending the process, the
//! driver stops at its next check, its drop guards remove what it made, and what it
//! measured is kept. A signal the caller ignores (`nohup`, a background job's SIGINT) stays
//! ignored.

use anyhow::{Context, Result};
use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
}

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The handlers that were there before [`catch`]; put back when dropped.
pub struct Catching {
    old: Vec<(libc::c_int, libc::sighandler_t)>,
}

/// From now until the returned value is dropped, SIGINT, SIGTERM and SIGHUP only set the
/// flag [`requested`] reads.
pub fn catch() -> Catching {
    REQUESTED.store(false, Ordering::SeqCst);
    let mut old = Vec::new();
    for s in SIGNALS {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let before = unsafe { libc::signal(s, on_signal as *const () as libc::sighandler_t) };
        if before == libc::SIG_IGN {
            // SAFETY: as above; ignoring a signal has no preconditions.
            unsafe { libc::signal(s, libc::SIG_IGN) };
        }
        old.push((s, before));
    }
    Catching { old }
}

impl Drop for Catching {
    fn drop(&mut self) {
        for &(s, h) in &self.old {
            // SAFETY: restores the handler that was installed before `catch`.
            unsafe { libc::signal(s, h) };
        }
    }
}

/// Whether a stop was asked for since [`catch`].
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Runs `cmd` to its end and collects its output, as [`Command::output`] does, but stops
/// it (SIGTERM, then SIGKILL after 3 s) as soon as a stop is requested: a child in its own
/// process group, or one sent no signal of its own (`kill PID` reaches only us), would
/// otherwise run on.
pub fn output(cmd: &mut Command) -> Result<Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {:?}", cmd.get_program()))?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let mut stopping: Option<Instant> = None;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        match stopping {
            None if requested() => {
                // SAFETY: signals a child we started and have not reaped.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                stopping = Some(Instant::now());
            }
            Some(t) if t.elapsed() > Duration::from_secs(3) => {
                let _ = child.kill();
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}
