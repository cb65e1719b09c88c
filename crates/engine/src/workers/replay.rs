//! Recording worker exchanges, and replaying them instead of starting workers.

use super::{Outcome, Stop, Stopped};
use crate::ui::usage;
use cryptoscope_worker::Event;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    /// The workers the recording has exchanges of (file names).
    workers: HashSet<String>,
    stop_at: Option<(usize, Stop)>,
    file: PathBuf,
}

impl Replay {
    /// Reads a recording. A file that cannot be read or parsed is a usage error.
    pub fn load(file: &Path, stop_at: Option<(usize, Stop)>) -> anyhow::Result<Replay> {
        let fail = |why: String| usage(format!("{}: {why}", file.display()));
        let text = std::fs::read_to_string(file).map_err(|e| fail(e.to_string()))?;
        let mut queues: HashMap<String, VecDeque<Exchange>> = HashMap::new();
        let mut workers = HashSet::new();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let x: Exchange = serde_json::from_str(line).map_err(|e| fail(format!("line {}: {e}", n + 1)))?;
            workers.insert(x.worker.clone());
            queues
                .entry(key(Path::new(&x.worker), &x.args))
                .or_default()
                .push_back(x);
        }
        Ok(Replay {
            queues: Mutex::new((queues, 0)),
            workers,
            stop_at,
            file: file.to_path_buf(),
        })
    }

    /// Whether the recording has exchanges of this worker.
    pub fn has_worker(&self, bin: &Path) -> bool {
        bin.file_name()
            .is_some_and(|f| self.workers.contains(f.to_string_lossy().as_ref()))
    }

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
                match self.stop_at {
                    Some((n, Stop::Kill)) if n == q.1 => {
                        // SAFETY: kill and getpid have no preconditions.
                        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
                    }
                    Some((n, Stop::Unwind)) if n == q.1 => {
                        drop(q);
                        std::panic::panic_any(Stopped(n));
                    }
                    _ => {}
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
        // The recording's samples are timed from when it was made; replayed, they are
        // timed from now, the exchange's own spacing kept (a run's `raw_t_s` are seconds
        // since the run started).
        let first = x.events.iter().find_map(|e| match e {
            Event::Measured(m) => Some(m.samples.started_unix_ms),
            _ => None,
        });
        let shift = first.map_or(0.0, |t| crate::util::unix_ms() - t);
        for mut ev in x.events {
            if let Event::Measured(m) = &mut ev {
                m.samples.started_unix_ms += shift;
            }
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

/// Appends one exchange to the recording (one line, in append mode).
pub fn append(path: &Path, bin: &Path, args: &[String], events: Vec<Event>, outcome: &Outcome) -> std::io::Result<()> {
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
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
}
