//! What the harness asks a worker: one typed [`Request`] per call.
//!
//! A long-lived worker (`<worker> serve`) reads requests as JSON, one per line. A one-shot
//! worker, and a worker run under valgrind, takes the same request as its command line
//! ([`Request::to_args`], read back by [`Request::from_args`]): `measure --subject ID --plan
//! JSON --budget S ...`. Both forms carry exactly the same fields, and the round trip is
//! tested. The answers are the worker's events (`cryptoscope_worker::Event`).

use crate::descriptor::Operation;
use cryptoscope_measure::sampler::Plan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One call of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum Request {
    /// The descriptors of every subject the provider offers.
    Describe,
    /// The correctness gate of one subject.
    Gate {
        subject: String,
        vectors: PathBuf,
        /// "single" or "all" KAT entries.
        depth: String,
        /// KAT entries to write to `entries_out` (KEMs; for cross-checking another subject).
        keep: usize,
        entries_out: Option<PathBuf>,
        /// KAT entries of a subject that passed, for a subject with its own randomness.
        reference: Option<PathBuf>,
        /// Where to write this subject's encapsulations to the reference's keys.
        encaps_out: Option<PathBuf>,
    },
    /// Decapsulates another subject's encapsulations to the reference keys.
    VerifyEncaps {
        subject: String,
        reference: PathBuf,
        encaps: PathBuf,
    },
    /// Runs a vector file brought by the user.
    VerifyFile {
        subject: String,
        file: PathBuf,
        format: String,
        keys_in: Option<PathBuf>,
        keys_out: Option<PathBuf>,
    },
    /// Calls one operation in a loop (under callgrind or perf).
    Loop {
        subject: String,
        op: Operation,
        iterations: u64,
        /// Fixed-seed randomness, so that two runs execute the same path.
        deterministic: bool,
        /// Calls a marker function around the measured calls (callgrind's toggle).
        marker: bool,
        warmup: u64,
    },
    /// Heap and stack of every operation (under the heap-counting preload library).
    Memory {
        subject: String,
        calls: usize,
        ops: Option<Vec<Operation>>,
    },
    /// perf events around each call.
    Counters {
        subject: String,
        events: Vec<String>,
        calls: usize,
        ops: Option<Vec<Operation>>,
    },
    /// The timing probes of a probed build.
    Probes {
        subject: String,
        calls: usize,
        ops: Option<Vec<Operation>>,
    },
    /// Throughput of one operation on several threads.
    Scale {
        subject: String,
        op: Operation,
        threads: usize,
        /// Seconds.
        duration: f64,
    },
    /// The constant-time audit under memcheck (run under valgrind).
    CtMemcheck {
        subject: String,
        /// Audited operations (`Descriptor::ct_operations` names); all when absent.
        ops: Option<Vec<String>>,
        material: Option<PathBuf>,
    },
    /// A KEM's key pair and ciphertext for the memcheck audit, written to `out`.
    CtMaterial { subject: String, out: PathBuf },
    /// dudect on one audited operation.
    CtDudect {
        subject: String,
        op: String,
        samples: u64,
        /// Seconds.
        budget: f64,
        /// Caches evicted before each call.
        cold: bool,
        tsc_hz: Option<f64>,
        /// Where to write every (class, time) pair.
        record: Option<PathBuf>,
    },
    /// The timing of every operation of one subject (or of `ops`).
    Measure {
        subject: String,
        plan: Plan,
        /// Seconds.
        budget: f64,
        ops: Option<Vec<Operation>>,
        cpu: Option<usize>,
        tsc_hz: Option<f64>,
        force_tsc: bool,
    },
}

/// The defaults a command line may leave out (as `Request::from_args` fills them).
const DEFAULT_DEPTH: &str = "all";
const DEFAULT_MEMORY_CALLS: usize = 3;
const DEFAULT_COUNTER_CALLS: usize = 101;
const DEFAULT_PROBE_CALLS: usize = 31;
const DEFAULT_DUDECT_SAMPLES: u64 = 20_000;
const DEFAULT_DUDECT_BUDGET: f64 = 10.0;

impl Request {
    /// The command's name, as on the command line (`measure`, `ct-dudect`).
    pub fn command(&self) -> &'static str {
        match self {
            Request::Describe => "describe",
            Request::Gate { .. } => "gate",
            Request::VerifyEncaps { .. } => "verify-encaps",
            Request::VerifyFile { .. } => "verify-file",
            Request::Loop { .. } => "loop",
            Request::Memory { .. } => "memory",
            Request::Counters { .. } => "counters",
            Request::Probes { .. } => "probes",
            Request::Scale { .. } => "scale",
            Request::CtMemcheck { .. } => "ct-memcheck",
            Request::CtMaterial { .. } => "ct-material",
            Request::CtDudect { .. } => "ct-dudect",
            Request::Measure { .. } => "measure",
        }
    }

    /// The subject the request is about (all but `describe`).
    pub fn subject(&self) -> Option<&str> {
        match self {
            Request::Describe => None,
            Request::Gate { subject, .. }
            | Request::VerifyEncaps { subject, .. }
            | Request::VerifyFile { subject, .. }
            | Request::Loop { subject, .. }
            | Request::Memory { subject, .. }
            | Request::Counters { subject, .. }
            | Request::Probes { subject, .. }
            | Request::Scale { subject, .. }
            | Request::CtMemcheck { subject, .. }
            | Request::CtMaterial { subject, .. }
            | Request::CtDudect { subject, .. }
            | Request::Measure { subject, .. } => Some(subject),
        }
    }

    /// The request as a worker's command line (without the program name).
    pub fn to_args(&self) -> Vec<String> {
        let mut a = Args(vec![self.command().to_string()]);
        if let Some(s) = self.subject() {
            a.opt("subject", s);
        }
        match self {
            Request::Describe => {}
            Request::Gate {
                vectors,
                depth,
                keep,
                entries_out,
                reference,
                encaps_out,
                ..
            } => {
                a.path("vectors", vectors);
                a.opt("depth", depth);
                if *keep > 0 {
                    a.opt("keep", keep);
                }
                a.path_if("entries-out", entries_out);
                a.path_if("reference", reference);
                a.path_if("encaps-out", encaps_out);
            }
            Request::VerifyEncaps { reference, encaps, .. } => {
                a.path("reference", reference);
                a.path("encaps", encaps);
            }
            Request::VerifyFile {
                file,
                format,
                keys_in,
                keys_out,
                ..
            } => {
                a.path("file", file);
                a.opt("format", format);
                a.path_if("keys-in", keys_in);
                a.path_if("keys-out", keys_out);
            }
            Request::Loop {
                op,
                iterations,
                deterministic,
                marker,
                warmup,
                ..
            } => {
                a.opt("op", op.as_str());
                a.opt("iterations", iterations);
                a.flag("deterministic", *deterministic);
                a.flag("marker", *marker);
                a.opt("warmup", warmup);
            }
            Request::Memory { calls, ops, .. } | Request::Probes { calls, ops, .. } => {
                a.opt("calls", calls);
                a.ops(ops);
            }
            Request::Counters { events, calls, ops, .. } => {
                a.opt("events", events.join(","));
                a.opt("calls", calls);
                a.ops(ops);
            }
            Request::Scale {
                op, threads, duration, ..
            } => {
                a.opt("op", op.as_str());
                a.opt("threads", threads);
                a.opt("duration", duration);
            }
            Request::CtMemcheck { ops, material, .. } => {
                if let Some(o) = ops {
                    a.opt("ops", o.join(","));
                }
                a.path_if("material", material);
            }
            Request::CtMaterial { out, .. } => a.path("out", out),
            Request::CtDudect {
                op,
                samples,
                budget,
                cold,
                tsc_hz,
                record,
                ..
            } => {
                a.opt("op", op);
                a.opt("samples", samples);
                a.opt("budget", budget);
                a.flag("cold", *cold);
                if let Some(hz) = tsc_hz {
                    a.opt("tsc-hz", format!("{hz:.0}"));
                }
                a.path_if("record", record);
            }
            Request::Measure {
                plan,
                budget,
                ops,
                cpu,
                tsc_hz,
                force_tsc,
                ..
            } => {
                a.opt("plan", serde_json::to_string(plan).expect("a plan serialises"));
                a.opt("budget", budget);
                a.ops(ops);
                if let Some(c) = cpu {
                    a.opt("cpu", c);
                }
                if let Some(hz) = tsc_hz {
                    a.opt("tsc-hz", format!("{hz:.0}"));
                }
                a.flag("force-tsc", *force_tsc);
            }
        }
        a.0
    }

    /// Reads a request from a worker's command line (without the program name): the command,
    /// then `--name value` options and `--flag` switches, in any order. An unknown command
    /// or option, a missing one or a value that does not parse is an error naming it.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Request, String> {
        let (command, rest) = args.split_first().ok_or("no command")?;
        let mut o = Options::parse(rest)?;
        let subject_arg = o.maybe("subject");
        let subject = || subject_arg.clone().ok_or("--subject is required");
        let r = match command.as_ref() {
            "describe" if subject_arg.is_some() => return Err("unknown option --subject".into()),
            "describe" => Request::Describe,
            "gate" => Request::Gate {
                subject: subject()?,
                vectors: o.take("vectors")?.into(),
                depth: o.maybe("depth").unwrap_or_else(|| DEFAULT_DEPTH.into()),
                keep: o.parsed_or("keep", 0)?,
                entries_out: o.maybe("entries-out").map(Into::into),
                reference: o.maybe("reference").map(Into::into),
                encaps_out: o.maybe("encaps-out").map(Into::into),
            },
            "verify-encaps" => Request::VerifyEncaps {
                subject: subject()?,
                reference: o.take("reference")?.into(),
                encaps: o.take("encaps")?.into(),
            },
            "verify-file" => Request::VerifyFile {
                subject: subject()?,
                file: o.take("file")?.into(),
                format: o.take("format")?,
                keys_in: o.maybe("keys-in").map(Into::into),
                keys_out: o.maybe("keys-out").map(Into::into),
            },
            "loop" => Request::Loop {
                subject: subject()?,
                op: operation(&o.take("op")?)?,
                iterations: o.parsed_or("iterations", 1)?,
                deterministic: o.flag("deterministic"),
                marker: o.flag("marker"),
                warmup: o.parsed_or("warmup", 0)?,
            },
            "memory" => Request::Memory {
                subject: subject()?,
                calls: o.parsed_or("calls", DEFAULT_MEMORY_CALLS)?,
                ops: o.maybe("ops").map(|l| operations(&l)).transpose()?,
            },
            "counters" => Request::Counters {
                subject: subject()?,
                events: o.take("events")?.split(',').map(|e| e.trim().to_string()).collect(),
                calls: o.parsed_or("calls", DEFAULT_COUNTER_CALLS)?,
                ops: o.maybe("ops").map(|l| operations(&l)).transpose()?,
            },
            "probes" => Request::Probes {
                subject: subject()?,
                calls: o.parsed_or("calls", DEFAULT_PROBE_CALLS)?,
                ops: o.maybe("ops").map(|l| operations(&l)).transpose()?,
            },
            "scale" => Request::Scale {
                subject: subject()?,
                op: operation(&o.take("op")?)?,
                threads: o.parsed("threads")?,
                duration: o.parsed("duration")?,
            },
            "ct-memcheck" => Request::CtMemcheck {
                subject: subject()?,
                ops: o
                    .maybe("ops")
                    .map(|l| l.split(',').map(|x| x.trim().to_string()).collect()),
                material: o.maybe("material").map(Into::into),
            },
            "ct-material" => Request::CtMaterial {
                subject: subject()?,
                out: o.take("out")?.into(),
            },
            "ct-dudect" => Request::CtDudect {
                subject: subject()?,
                op: o.take("op")?,
                samples: o.parsed_or("samples", DEFAULT_DUDECT_SAMPLES)?,
                budget: o.parsed_or("budget", DEFAULT_DUDECT_BUDGET)?,
                cold: o.flag("cold"),
                tsc_hz: o.maybe_parsed("tsc-hz")?,
                record: o.maybe("record").map(Into::into),
            },
            "measure" => Request::Measure {
                subject: subject()?,
                plan: serde_json::from_str(&o.take("plan")?).map_err(|e| format!("--plan: {e}"))?,
                budget: o.parsed("budget")?,
                ops: o.maybe("ops").map(|l| operations(&l)).transpose()?,
                cpu: o.maybe_parsed("cpu")?,
                tsc_hz: o.maybe_parsed("tsc-hz")?,
                force_tsc: o.flag("force-tsc"),
            },
            c => return Err(format!("unknown command `{c}`")),
        };
        o.finish()?;
        Ok(r)
    }
}

/// Builds a command line.
struct Args(Vec<String>);

impl Args {
    fn opt(&mut self, name: &str, value: impl ToString) {
        self.0.push(format!("--{name}"));
        self.0.push(value.to_string());
    }

    fn path(&mut self, name: &str, p: &std::path::Path) {
        self.opt(name, p.display());
    }

    fn path_if(&mut self, name: &str, p: &Option<PathBuf>) {
        if let Some(p) = p {
            self.path(name, p);
        }
    }

    fn flag(&mut self, name: &str, on: bool) {
        if on {
            self.0.push(format!("--{name}"));
        }
    }

    fn ops(&mut self, ops: &Option<Vec<Operation>>) {
        if let Some(o) = ops {
            let list: Vec<&str> = o.iter().map(|o| o.as_str()).collect();
            self.opt("ops", list.join(","));
        }
    }
}

/// The options of a command line: `--name value`, or `--flag` (no value: followed by another
/// option or nothing). Every option must be taken once; what is left is an error.
struct Options(BTreeMap<String, Option<String>>);

impl Options {
    fn parse<S: AsRef<str>>(rest: &[S]) -> Result<Options, String> {
        let mut m = BTreeMap::new();
        let mut i = 0;
        while i < rest.len() {
            let a = rest[i].as_ref();
            let name = a
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument `{a}`"))?;
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => match rest.get(i + 1).map(|v| v.as_ref()) {
                    Some(v) if !v.starts_with("--") => {
                        i += 1;
                        (name.to_string(), Some(v.to_string()))
                    }
                    _ => (name.to_string(), None),
                },
            };
            if m.insert(name.clone(), value).is_some() {
                return Err(format!("--{name} given twice"));
            }
            i += 1;
        }
        Ok(Options(m))
    }

    fn maybe(&mut self, name: &str) -> Option<String> {
        self.0.remove(name).flatten()
    }

    fn take(&mut self, name: &str) -> Result<String, String> {
        self.maybe(name).ok_or_else(|| format!("--{name} is required"))
    }

    fn flag(&mut self, name: &str) -> bool {
        self.0.remove(name).is_some()
    }

    fn maybe_parsed<T: std::str::FromStr>(&mut self, name: &str) -> Result<Option<T>, String> {
        self.maybe(name)
            .map(|v| v.parse().map_err(|_| format!("--{name}: `{v}` does not parse")))
            .transpose()
    }

    fn parsed<T: std::str::FromStr>(&mut self, name: &str) -> Result<T, String> {
        self.maybe_parsed(name)?.ok_or_else(|| format!("--{name} is required"))
    }

    fn parsed_or<T: std::str::FromStr>(&mut self, name: &str, default: T) -> Result<T, String> {
        Ok(self.maybe_parsed(name)?.unwrap_or(default))
    }

    fn finish(self) -> Result<(), String> {
        match self.0.keys().next() {
            Some(k) => Err(format!("unknown option --{k}")),
            None => Ok(()),
        }
    }
}

fn operation(s: &str) -> Result<Operation, String> {
    Operation::parse(s).ok_or_else(|| format!("unknown operation `{s}`"))
}

fn operations(list: &str) -> Result<Vec<Operation>, String> {
    list.split(',').map(|o| operation(o.trim())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn every_kind() -> Vec<Request> {
        let p = |s: &str| PathBuf::from(s);
        vec![
            Request::Describe,
            Request::Gate {
                subject: "ML-KEM-768/liboqs/dispatch".into(),
                vectors: p("/v"),
                depth: "single".into(),
                keep: 3,
                entries_out: Some(p("/tmp/e.json")),
                reference: None,
                encaps_out: Some(p("/tmp/c.json")),
            },
            Request::VerifyEncaps {
                subject: "s".into(),
                reference: p("/r"),
                encaps: p("/e"),
            },
            Request::VerifyFile {
                subject: "s".into(),
                file: p("/f.rsp"),
                format: "nist-kem-kat".into(),
                keys_in: None,
                keys_out: Some(p("/k")),
            },
            Request::Loop {
                subject: "s".into(),
                op: Operation::Decaps,
                iterations: 7,
                deterministic: true,
                marker: false,
                warmup: 1,
            },
            Request::Memory {
                subject: "s".into(),
                calls: 3,
                ops: Some(vec![Operation::Hash(64), Operation::Stream(1 << 20)]),
            },
            Request::Counters {
                subject: "s".into(),
                events: vec!["cycles".into(), "instructions".into()],
                calls: 101,
                ops: None,
            },
            Request::Probes {
                subject: "s".into(),
                calls: 31,
                ops: Some(vec![Operation::Keypair]),
            },
            Request::Scale {
                subject: "s".into(),
                op: Operation::Seal(1536),
                threads: 4,
                duration: 0.25,
            },
            Request::CtMemcheck {
                subject: "s".into(),
                ops: Some(vec!["decaps".into(), "decaps-rejected".into()]),
                material: Some(p("/m.json")),
            },
            Request::CtMaterial {
                subject: "s".into(),
                out: p("/o"),
            },
            Request::CtDudect {
                subject: "s".into(),
                op: "open-forged".into(),
                samples: 20_000,
                budget: 2.5,
                cold: true,
                tsc_hz: Some(2_600_000_000.0),
                record: None,
            },
            Request::Measure {
                subject: "X25519/rustcrypto/default".into(),
                plan: Plan::quick(Duration::from_secs(1)),
                budget: 0.2,
                ops: Some(vec![Operation::Hash(0), Operation::Hash(4096)]),
                cpu: Some(1),
                tsc_hz: Some(2_000_000_000.0),
                force_tsc: false,
            },
        ]
    }

    #[test]
    fn every_request_survives_the_command_line_and_json() {
        for r in every_kind() {
            let args = r.to_args();
            assert_eq!(args[0], r.command());
            assert_eq!(Request::from_args(&args).as_ref(), Ok(&r), "{args:?}");
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Request>(&json).unwrap(), r, "{json}");
        }
    }

    #[test]
    fn command_lines_as_workers_have_always_taken_them() {
        let r = Request::from_args(&["gate", "--subject", "s", "--vectors", "/v"]).unwrap();
        assert_eq!(
            r,
            Request::Gate {
                subject: "s".into(),
                vectors: "/v".into(),
                depth: "all".into(),
                keep: 0,
                entries_out: None,
                reference: None,
                encaps_out: None,
            }
        );
        let r = Request::from_args(&["ct-dudect", "--subject", "s", "--op", "hash", "--cold"]).unwrap();
        assert!(matches!(
            r,
            Request::CtDudect {
                samples: 20_000,
                cold: true,
                ..
            }
        ));
        assert_eq!(Request::from_args(&["describe"]), Ok(Request::Describe));
    }

    #[test]
    fn bad_command_lines_are_errors_that_name_the_problem() {
        for (args, says) in [
            (&["nope"][..], "unknown command `nope`"),
            (&["gate", "--subject", "s"][..], "--vectors is required"),
            (&["describe", "--subject", "s"][..], "unknown option --subject"),
            (
                &[
                    "scale",
                    "--subject",
                    "s",
                    "--op",
                    "keypair",
                    "--threads",
                    "x",
                    "--duration",
                    "1",
                ][..],
                "--threads: `x`",
            ),
            (
                &["loop", "--subject", "s", "--op", "frobnicate"][..],
                "unknown operation `frobnicate`",
            ),
            (
                &["memory", "--subject", "s", "--subject", "t"][..],
                "--subject given twice",
            ),
            (&["memory", "stray"][..], "unexpected argument `stray`"),
            (&[][..], "no command"),
        ] {
            let e = Request::from_args(args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
        }
    }
}
