//! `cryptoscope ct`: the constant-time audit of gated subjects, by two methods.
//!
//! - memcheck (TIMECOP, ctgrind): the subject's worker runs under valgrind memcheck with
//!   its secret inputs marked undefined; every conditional branch or memory address
//!   computed from them is a report, with function and source line. Each operation runs in
//!   its own valgrind process: valgrind merges errors whose innermost frames agree, so in
//!   one process a second operation's reports were counted under the first.
//! - dudect: Welch's t between fixed and random secret inputs, timed in the worker; a
//!   |t| above 4.5 is confirmed by a second, independent measurement before it counts,
//!   because this machine's noise comes in bursts that inflate single tests.
//!
//! Results are application items of driver `ct`, one per (subject, operation), stored like
//! any run, printed as a table beside the subject's latest speed from the store.

use cryptoscope_catalogue::descriptor::{Descriptor, Family};
use cryptoscope_measure::memcheck::{self, MemcheckError};
pub use cryptoscope_model::apps::ct::Finding;
use cryptoscope_model::apps::ct::{Audited, Dudect, Memcheck};
use cryptoscope_model::protocol::Request;
use cryptoscope_worker::{CtAudited, CtStat, Event};
use std::path::Path;
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::workers::Outcome;

/// One entry of `reference/ct-declassified.json`: values the specification makes public
/// although memcheck sees them computed from a secret (see the file's `_about`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Declared {
    pub algorithms: Vec<String>,
    pub operations: Vec<String>,
    /// "public" or "rejection".
    pub kind: String,
    pub what: String,
    pub source: String,
    pub functions: Vec<String>,
    /// Match the reporting function only, not the frames above it.
    #[serde(default)]
    pub innermost: bool,
    /// How the value makes the operation's time vary (dudect cannot tell it from a leak).
    #[serde(default)]
    pub timing: Option<String>,
    /// The kinds of memcheck report the entry covers ("branch", "index", "value"); all
    /// three when empty.
    #[serde(default)]
    pub reports: Vec<String>,
}

#[derive(serde::Deserialize)]
struct DeclaredFile {
    entries: Vec<Declared>,
}

/// The repository's declarations, compiled in.
const DECLASSIFIED: &str = include_str!("../../../reference/ct-declassified.json");

/// Parses the declarations; an entry of an unknown kind, or without functions, is an error.
pub fn declarations() -> Result<Vec<Declared>, String> {
    let f: DeclaredFile =
        serde_json::from_str(DECLASSIFIED).map_err(|e| format!("reference/ct-declassified.json is malformed: {e}"))?;
    for e in &f.entries {
        if !matches!(e.kind.as_str(), "public" | "rejection")
            || e.functions.is_empty()
            || e.source.is_empty()
            || e.reports
                .iter()
                .any(|r| !matches!(r.as_str(), "branch" | "index" | "value"))
        {
            return Err(format!(
                "reference/ct-declassified.json: an entry for {} needs kind public or rejection, functions, a source, and reports among branch, index and value",
                e.algorithms.join(", ")
            ));
        }
    }
    Ok(f.entries)
}

fn applies<'a>(decls: &'a [Declared], algorithm: &'a str, op: &'a str) -> impl Iterator<Item = &'a Declared> {
    decls
        .iter()
        .filter(move |e| e.algorithms.iter().any(|a| a == algorithm) && e.operations.iter().any(|o| o == op))
}

/// Re-labels the findings a declaration covers as `public` or `rejection`. A `public` entry
/// also covers findings traced to memory never written: it says every value its functions
/// handle is public, whatever memcheck's one origin per value names. A `rejection` entry
/// does not: it names one test inside code that handles secrets, and a report whose
/// undefined bits are traced elsewhere cannot be shown to be that test.
fn declare(decls: &[Declared], algorithm: &str, op: &str, findings: &mut [Finding]) {
    for f in findings
        .iter_mut()
        .filter(|f| matches!(f.kind.as_str(), "branch" | "index" | "value" | "uninitialised"))
    {
        let seen = f.seen.clone().unwrap_or_else(|| f.kind.clone());
        let hit = applies(decls, algorithm, op).find(|e| {
            if !e.reports.is_empty() && !e.reports.contains(&seen) {
                return false;
            }
            if f.kind == "uninitialised" && e.kind != "public" {
                return false;
            }
            let names: Vec<&str> = if e.innermost {
                vec![f.function.as_str()]
            } else {
                std::iter::once(f.function.as_str())
                    .chain(f.stack.iter().map(String::as_str))
                    .collect()
            };
            e.functions.iter().any(|p| names.iter().any(|n| n.contains(p.as_str())))
        });
        if let Some(e) = hit {
            f.kind = e.kind.clone();
            f.declared = Some(e.what.clone());
            f.declared_source = Some(e.source.clone());
        }
    }
}

/// What a declaration says about the timing of `op`, when one covers it.
pub fn declared_timing(decls: &[Declared], algorithm: &str, op: &str) -> Option<String> {
    applies(decls, algorithm, op).find_map(|e| e.timing.clone())
}

/// Finding kinds that are not leaks: the accept/reject decision of an AEAD open and the
/// declared public values.
const NOT_LEAKS: &[&str] = &["decision", "public", "rejection"];

/// What memcheck found for each operation of one subject.
pub struct MemcheckRun {
    /// Per operation: what was marked secret, and the findings.
    pub ops: Vec<(CtAudited, Vec<Finding>)>,
    /// Reports outside the audited operations (harness set-up; normally none).
    pub outside: usize,
}

fn is_name(f: &str) -> bool {
    !(f == "???" || f == "UnknownInlinedFun" || f.is_empty())
}

/// The operation an error belongs to, from the `cryptoscope_ct_op_<op>` frame of its stack.
fn operation_of(e: &MemcheckError) -> Option<(String, usize)> {
    e.stack.iter().enumerate().find_map(|(i, f)| {
        let at = f.function.find("cryptoscope_ct_op_")?;
        let rest = &f.function[at + "cryptoscope_ct_op_".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        Some((name.replace('_', "-"), i))
    })
}

/// Turns memcheck's errors into findings per operation.
pub fn findings(errors: &[MemcheckError]) -> (Vec<(String, Finding)>, usize) {
    let mut out = Vec::new();
    let mut outside = 0;
    for e in errors {
        let Some((op, at)) = operation_of(e) else {
            outside += 1;
            continue;
        };
        let kind = match e.kind.as_str() {
            "UninitCondition" => "branch",
            // "Use of uninitialised value of size N": an address is a pointer (8 bytes on
            // the 64-bit targets we run); memcheck also refuses undefined operands of a few
            // other kinds (vector shift counts: size 1), which are not addresses.
            "UninitValue" if value_size(&e.what).is_none_or(|n| n == std::mem::size_of::<usize>()) => "index",
            "UninitValue" => "value",
            k if k.starts_with("Invalid") => "memory",
            _ => "other",
        };
        // Undefined bits that valgrind traces to memory never written (a stack or heap
        // allocation) rather than to the secrets the harness marked (a client request).
        // memcheck keeps one origin per value, so the secret may reach the same place: such
        // a report is neither a leak nor a clean bill, and the verdict rests on dudect.
        let origin = e
            .origin
            .as_ref()
            .filter(|o| matches!(kind, "branch" | "index" | "value") && !o.is_client_request())
            .map(|o| {
                let place = o
                    .stack
                    .iter()
                    .find(|f| is_name(&f.function))
                    .map(|f| match &f.location {
                        Some(l) => format!(" in {} ({l})", f.function),
                        None => format!(" in {}", f.function),
                    })
                    .unwrap_or_default();
                let what = o.what.rsplit_once("created by ").map_or(o.what.as_str(), |(_, w)| w);
                let article = if kind == "index" { "an" } else { "a" };
                format!("{what}{place}; memcheck saw {article} {kind}")
            });
        let seen = origin.as_ref().map(|_| kind.to_string());
        let kind = if origin.is_some() { "uninitialised" } else { kind };
        let inner = &e.stack[..at];
        // The innermost named function, and the line of the report: the innermost frame's
        // line when it has one (an inlined helper inside that function), never a line of a
        // caller further out (C libraries built without debug information have none).
        let named = inner.iter().position(|f| is_name(&f.function));
        let function = named.map_or("???".to_string(), |i| inner[i].function.clone());
        let location = match named {
            Some(i) => inner[..=i].iter().find_map(|f| f.location.clone()),
            None => inner.first().and_then(|f| f.location.clone()),
        };
        let mut stack: Vec<String> = inner
            .iter()
            .filter(|f| is_name(&f.function))
            .map(|f| f.function.clone())
            .collect();
        stack.dedup();
        out.push((
            op,
            Finding {
                kind: kind.into(),
                function,
                location,
                count: e.count,
                stack,
                origin,
                seen,
                declared: None,
                declared_source: None,
            },
        ));
    }
    (out, outside)
}

/// The N of memcheck's "Use of uninitialised value of size N".
fn value_size(what: &str) -> Option<usize> {
    what.rsplit_once("of size ")?.1.trim().parse().ok()
}

/// In an `open`, branches each reached once per call are the accept/reject decision on the
/// tag: a constant-time comparison folds every byte into one bit, which the implementation
/// must test (to return an error or the plaintext), and which may be tested again on its
/// way out (RustCrypto's aes-gcm returns it as a `Result` computed without a branch, so the
/// caller's `map_err` is the next test). An early-exit comparison branches once per byte
/// compared (16 times for a 16-byte tag, both with a valid tag and with one whose last
/// byte is wrong), so it stays a branch. A comparison unrolled into a few word-sized
/// branches would also be taken for decisions: every site is listed for that reason.
fn mark_decision(op: &str, findings: &mut [Finding]) {
    if op.starts_with("open") && findings.iter().all(|f| f.kind == "branch" && f.count == 1) {
        for f in findings {
            f.kind = "decision".into();
        }
    }
}

/// Runs the memcheck method on one subject, one valgrind process per operation.
pub fn memcheck(
    cat: &Catalogue,
    d: &Descriptor,
    decls: &[Declared],
    tmp: &Path,
    timeout: Duration,
) -> Result<MemcheckRun, String> {
    let bin = cat.worker(&d.provider).ok_or("no worker")?;
    let xml = tmp.join(format!("{}.memcheck.xml", d.id.replace('/', "_")));
    let _ = std::fs::remove_file(&xml);
    // KEM keys are made natively first: key generation under valgrind takes minutes for
    // Classic McEliece, and it is not what this audit examines.
    let material = tmp.join(format!("{}.material.json", d.id.replace('/', "_")));
    if d.family == Family::Kem {
        let request = Request::CtMaterial {
            subject: d.id.clone(),
            out: material.clone(),
        };
        let outcome = cat.transport.call(bin, &request, timeout, &mut |_| {});
        if outcome != Outcome::Completed {
            return Err(format!("preparing keys: {}", outcome.describe()));
        }
    }
    let mut run = MemcheckRun {
        ops: Vec::new(),
        outside: 0,
    };
    let result = (|| -> Result<(), String> {
        for op in d.ct_operations() {
            let mut args = vec![
                "--tool=memcheck".to_string(),
                "--xml=yes".into(),
                format!("--xml-file={}", xml.display()),
                "--error-limit=no".into(),
                "--num-callers=40".into(),
                "--read-inline-info=yes".into(),
                // Where each undefined value came from: the marked secret, or memory the
                // code never wrote.
                "--track-origins=yes".into(),
                bin.display().to_string(),
            ];
            let request = Request::CtMemcheck {
                subject: d.id.clone(),
                ops: Some(vec![op.to_string()]),
                material: (d.family == Family::Kem).then(|| material.clone()),
            };
            args.extend(request.to_args());
            let mut audited = Vec::new();
            let outcome = cat
                .transport
                .call_program(Path::new("valgrind"), &args, timeout, &mut |ev| {
                    if let Event::CtAudited(a) = ev {
                        audited.push(a)
                    }
                });
            if outcome != Outcome::Completed {
                // The cause first: the caller counts crashes and timeouts by it.
                return Err(format!("{} (operation {op})", outcome.describe()));
            }
            let text = std::fs::read_to_string(&xml).map_err(|e| format!("no memcheck output: {e}"))?;
            let _ = std::fs::remove_file(&xml);
            let errors = memcheck::parse(&text).map_err(|e| e.to_string())?;
            let (found, outside) = findings(&errors);
            run.outside += outside;
            if let Some(a) = audited.iter().find(|a| !a.under_valgrind) {
                return Err(format!("{} did not run under valgrind", a.operation));
            }
            for a in audited {
                // One finding per (kind, function, line): the same branch reached through
                // different calls is one place to fix.
                let mut mine: Vec<Finding> = Vec::new();
                for (_, f) in found.iter().filter(|(o, _)| *o == a.operation) {
                    match mine
                        .iter_mut()
                        .find(|m| m.kind == f.kind && m.function == f.function && m.location == f.location)
                    {
                        Some(m) => m.count += f.count,
                        None => mine.push(f.clone()),
                    }
                }
                mark_decision(&a.operation, &mut mine);
                declare(decls, &d.algorithm, &a.operation, &mut mine);
                run.ops.push((a, mine));
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&material);
    let _ = std::fs::remove_file(&xml);
    result.map(|()| run)
}

/// Settings of the dudect method.
pub struct DudectSettings {
    pub samples: u64,
    pub budget: Duration,
    pub tsc_hz: Option<f64>,
    pub timeout: Duration,
}

fn dudect_once(cat: &Catalogue, d: &Descriptor, op: &str, cold: bool, s: &DudectSettings) -> Result<CtStat, String> {
    let bin = cat.worker(&d.provider).ok_or("no worker")?;
    let request = Request::CtDudect {
        subject: d.id.clone(),
        op: op.into(),
        samples: s.samples,
        budget: s.budget.as_secs_f64(),
        cold,
        tsc_hz: s.tsc_hz.map(f64::round),
        record: None,
    };
    let mut stat = None;
    let outcome = cat.transport.call(bin, &request, s.timeout, &mut |ev| {
        if let Event::CtStat(r) = ev {
            stat = Some(r)
        }
    });
    match (outcome, stat) {
        (Outcome::Completed, Some(r)) => Ok(r),
        (Outcome::Completed, None) => Err("the worker reported no result".into()),
        (o, _) => Err(o.describe()),
    }
}

/// One dudect test, confirmed: a first |t| above the threshold is measured again, and the
/// operation counts as leaking only if the second measurement agrees.
pub fn dudect(cat: &Catalogue, d: &Descriptor, op: &str, cold: bool, s: &DudectSettings) -> Dudect {
    confirmed(|| dudect_once(cat, d, op, cold, s))
}

/// The confirmation rule over the results `once` gives, one per call (a worker run each in
/// [`dudect`]; canned results in the tests).
fn confirmed(mut once: impl FnMut() -> Result<CtStat, String>) -> Dudect {
    let status = |s: &str| Dudect {
        status: s.into(),
        ..Dudect::default()
    };
    match once() {
        Err(e) if e.contains(cryptoscope_worker::ct::TOO_SLOW) => Dudect {
            reason: Some(e[e.find(cryptoscope_worker::ct::TOO_SLOW).unwrap_or(0)..].trim().into()),
            ..status("not run")
        },
        Err(e) => Dudect {
            error: Some(e),
            ..status("failed")
        },
        Ok(first) if !first.result.leak => Dudect {
            max_t: Some(first.result.max_t),
            runs: vec![first],
            ..status("pass")
        },
        Ok(first) => match once() {
            Err(e) => Dudect {
                error: Some(format!("confirmation: {e}")),
                runs: vec![first],
                ..status("failed")
            },
            Ok(second) => {
                let leak = second.result.leak;
                Dudect {
                    max_t: Some(first.result.max_t.min(second.result.max_t)),
                    runs: vec![first, second],
                    ..status(if leak { "leak" } else { "unconfirmed" })
                }
            }
        },
    }
}

/// The verdict of one (subject, operation) from both methods. `timing_declared`: a
/// declaration says a public value makes this operation's time vary, so a dudect leak is
/// inconclusive.
pub fn verdict(memcheck: &Memcheck, dudect: &[&Dudect], timing_declared: bool) -> &'static str {
    let any = |kinds: &[&str]| memcheck.any(kinds);
    let mc_leak = any(&["branch", "index"]);
    let mc_bug = any(&["memory"]);
    let mc_value = any(&["value", "other"]);
    let mc_uninit = any(&["uninitialised"]);
    let declared = any(&["public", "rejection"]);
    let dd_any_leak = dudect.iter().any(|d| d.status == "leak");
    let dd_inconclusive = dd_any_leak && timing_declared;
    let dd_leak = dd_any_leak && !timing_declared;
    let mc_ok = memcheck.status == "clean";
    let dd_ok = !dudect.is_empty()
        && dudect
            .iter()
            .all(|d| d.status == "pass" || d.status == "unconfirmed" || (d.status == "leak" && timing_declared));
    match (mc_leak || mc_bug, dd_leak) {
        (true, true) => "leak (both methods)",
        (true, false) => "leak (memcheck)",
        (false, true) => "timing difference (dudect)",
        // memcheck is blind where memory never written mixes with the secret.
        _ if mc_uninit && dd_inconclusive => "inconclusive (memcheck: memory never written; dudect: declared timing)",
        _ if mc_uninit && dd_ok => "no leak found by dudect (memcheck: memory never written)",
        _ if mc_uninit => "memcheck: memory never written",
        _ if mc_value && dd_ok => "no branch or address (memcheck: value reports)",
        _ if mc_value => "value reports only (memcheck)",
        _ if mc_ok && dd_ok && (declared || dd_inconclusive) => "no leak found (declared public values aside)",
        _ if mc_ok && dd_ok => "no leak found",
        // dudect alone, and its only difference is a declared one: it cannot speak.
        _ if !mc_ok && dd_inconclusive => "inconclusive (dudect: declared timing)",
        _ if mc_ok || dd_ok => "no leak found (one method)",
        _ => "not audited",
    }
}

/// The memcheck part of an item.
pub fn memcheck_value(run: &Result<MemcheckRun, String>, op: &str) -> Memcheck {
    match run {
        Err(e) => Memcheck::failed(e.as_str()),
        Ok(r) => match r.ops.iter().find(|(a, _)| a.operation == op) {
            None => Memcheck::failed("the operation was not run"),
            Some((a, f)) => Memcheck {
                status: if f.iter().all(|x| NOT_LEAKS.contains(&x.kind.as_str())) {
                    "clean"
                } else {
                    "findings"
                }
                .into(),
                error: None,
                secret: Some(a.secret.clone()),
                findings: Some(f.clone()),
                outside_operations: Some(r.outside),
            },
        },
    }
}

/// The item of a subject's operation, identity filled in, the rest empty.
pub fn audited(d: &Descriptor, op: &str) -> Audited {
    Audited {
        subject: d.id.clone(),
        family: d.family.as_str().into(),
        operation: op.into(),
        ..Audited::default()
    }
}

/// The operation whose speed is shown beside an audited one.
pub fn speed_operation(op: &str) -> Option<&'static str> {
    match op {
        "keypair" => Some("keypair"),
        "encaps" => Some("encaps"),
        "decaps" | "decaps-rejected" => Some("decaps"),
        "exchange" => Some("exchange"),
        "hash" => Some("hash:1536"),
        "key-schedule" => Some("keysched"),
        "encrypt" => Some("ecb:4096"),
        "seal" => Some("seal:1536"),
        "open" | "open-forged" => Some("open:1536"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_measure::memcheck::Frame;
    use serde_json::Value;

    /// A worker's dudect result with this |t| (leak above 4.5).
    fn stat(max_t: f64) -> CtStat {
        CtStat {
            subject: "SHA-256/testbed/early-exit".into(),
            operation: "hash".into(),
            classes: "fixed against random".into(),
            cold: false,
            unit: "TSC ticks".into(),
            seconds: 1.0,
            result: cryptoscope_measure::ttest::TResult {
                max_t,
                test: "uncropped".into(),
                n_fixed: 500,
                n_random: 500,
                samples: 1000,
                mean_fixed: 100.0,
                mean_random: 100.0,
                leak: max_t > cryptoscope_measure::ttest::THRESHOLD,
            },
        }
    }

    /// Feeds `confirmed` these results in turn; returns its value and how many it used.
    fn confirm(results: Vec<Result<CtStat, String>>) -> (Value, usize) {
        let mut it = results.into_iter();
        let mut used = 0;
        let v = confirmed(|| {
            used += 1;
            it.next().expect("asked for one result too many")
        });
        (serde_json::to_value(v).unwrap(), used)
    }

    /// A memcheck part from its JSON (anything else: one that did not run).
    fn mc(v: Value) -> Memcheck {
        serde_json::from_value(v).unwrap_or_default()
    }

    /// A dudect part from its JSON.
    fn dd(v: Value) -> Dudect {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_leak_counts_only_when_a_second_measurement_confirms_it() {
        let (v, n) = confirm(vec![Ok(stat(2.0))]);
        assert_eq!(
            (v["status"].as_str(), n),
            (Some("pass"), 1),
            "a pass is not measured again"
        );
        let (v, n) = confirm(vec![Ok(stat(11.0)), Ok(stat(9.0))]);
        assert_eq!((v["status"].as_str(), n), (Some("leak"), 2));
        assert_eq!(v["max_t"], 9.0, "the smaller |t| of the two is reported");
        assert_eq!(v["runs"].as_array().unwrap().len(), 2);
        let (v, _) = confirm(vec![Ok(stat(5.0)), Ok(stat(1.0))]);
        assert_eq!(v["status"], "unconfirmed", "one |t| over 4.5 alone is not a leak");
        let (v, _) = confirm(vec![Ok(stat(5.0)), Err("crashed: SIGSEGV".into())]);
        assert_eq!(v["status"], "failed");
        assert_eq!(v["error"], "confirmation: crashed: SIGSEGV");
        let (v, n) = confirm(vec![Err(format!(
            "ct-dudect: {}: one call takes 3.1 s",
            cryptoscope_worker::ct::TOO_SLOW
        ))]);
        assert_eq!((v["status"].as_str(), n), (Some("not run"), 1));
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .starts_with(cryptoscope_worker::ct::TOO_SLOW),
            "{v}"
        );
        let (v, _) = confirm(vec![Err("timed out after 60 s".into())]);
        assert_eq!(v["status"], "failed");
    }

    fn frame(f: &str, loc: Option<&str>) -> Frame {
        Frame {
            function: f.into(),
            location: loc.map(String::from),
            object: None,
        }
    }

    #[test]
    fn findings_name_the_operation_function_and_its_own_line() {
        let e = |kind: &str, stack: Vec<Frame>| MemcheckError {
            kind: kind.into(),
            what: if kind == "UninitValue" {
                "Use of uninitialised value of size 8".into()
            } else {
                String::new()
            },
            stack,
            count: 2,
            origin: None,
        };
        let errors = vec![
            // An inlined helper's line inside a named function.
            e(
                "UninitCondition",
                vec![
                    frame("UnknownInlinedFun", Some("table.rs:12")),
                    frame("gift::encrypt", Some("table.rs:40")),
                    frame("cryptoscope_worker::ct::cryptoscope_ct_op_encrypt", Some("ct.rs:1")),
                ],
            ),
            // A C function without line information: no caller's line is borrowed.
            e(
                "UninitValue",
                vec![
                    frame("rej_uniform", None),
                    frame("provider::wrapper", Some("lib.rs:123")),
                    frame("cryptoscope_ct_op_decaps_rejected", None),
                ],
            ),
            // Outside the audited operations.
            e("UninitCondition", vec![frame("main", None)]),
            e("InvalidRead", vec![frame("cryptoscope_ct_op_hash", None)]),
        ];
        let (f, outside) = findings(&errors);
        assert_eq!(outside, 1);
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].0, "encrypt");
        assert_eq!(f[0].1.kind, "branch");
        assert_eq!(f[0].1.function, "gift::encrypt");
        assert_eq!(f[0].1.location.as_deref(), Some("table.rs:12"));
        assert_eq!(f[1].0, "decaps-rejected");
        assert_eq!(f[1].1.kind, "index");
        assert_eq!(f[1].1.function, "rej_uniform");
        assert_eq!(f[1].1.location, None);
        assert_eq!(f[2].0, "hash");
        assert_eq!(f[2].1.kind, "memory");
        assert_eq!(f[2].1.function, "???");
        // A value of another size than an address (memcheck's text for the count of an
        // AVX2 vector shift) is a "value", not an "index".
        let shift = MemcheckError {
            kind: "UninitValue".into(),
            what: "Use of uninitialised value of size 1".into(),
            stack: vec![
                frame("rotate_right_avx2", None),
                frame("cryptoscope_ct_op_decaps", None),
            ],
            count: 99_400,
            origin: None,
        };
        let (f, _) = findings(&[shift]);
        assert_eq!(f[0].1.kind, "value");
        // With --track-origins: undefined bits from the marked secret stay a branch; from a
        // stack allocation never written, they are "uninitialised", with the place.
        let traced = |what: &str| MemcheckError {
            kind: "UninitCondition".into(),
            what: "Conditional jump or move depends on uninitialised value(s)".into(),
            stack: vec![
                frame("pk_gen", Some("pk_gen.c:304")),
                frame("cryptoscope_ct_op_keypair", None),
            ],
            count: 3,
            origin: Some(cryptoscope_measure::memcheck::Origin {
                what: what.into(),
                stack: vec![frame("???", None), frame("genpoly_gen", Some("sk_gen.c:55"))],
            }),
        };
        let (f, _) = findings(&[
            traced("Uninitialised value was created by a client request"),
            traced("Uninitialised value was created by a stack allocation"),
        ]);
        assert_eq!(f[0].1.kind, "branch");
        assert_eq!(f[0].1.origin, None);
        assert_eq!(f[1].1.kind, "uninitialised");
        assert_eq!(
            f[1].1.origin.as_deref(),
            Some("a stack allocation in genpoly_gen (sk_gen.c:55); memcheck saw a branch")
        );
        assert_eq!(value_size("Use of uninitialised value of size 8"), Some(8));
        assert_eq!(
            value_size("Conditional jump or move depends on uninitialised value(s)"),
            None
        );
    }

    fn finding(kind: &str, count: u64) -> Finding {
        Finding {
            kind: kind.into(),
            function: "f".into(),
            location: None,
            count,
            stack: Vec::new(),
            origin: None,
            seen: None,
            declared: None,
            declared_source: None,
        }
    }

    fn at(kind: &str, stack: &[&str]) -> Finding {
        Finding {
            kind: kind.into(),
            function: stack[0].into(),
            location: None,
            count: 7,
            stack: stack.iter().map(|s| s.to_string()).collect(),
            origin: None,
            seen: None,
            declared: None,
            declared_source: None,
        }
    }

    #[test]
    fn the_declarations_parse_and_name_catalogue_algorithms_and_audited_operations() {
        let decls = declarations().unwrap();
        assert!(!decls.is_empty());
        for e in &decls {
            for a in &e.algorithms {
                let info = cryptoscope_catalogue::names::algorithm(a)
                    .unwrap_or_else(|| panic!("{a} is not a catalogue algorithm"));
                assert_eq!(info.name, a, "canonical spelling");
                for op in &e.operations {
                    assert!(
                        info.family.info().ct_operations.contains(&op.as_str()),
                        "{a}: {op} is not an operation its family's audit covers"
                    );
                }
            }
        }
    }

    #[test]
    fn declared_values_are_relabelled_and_nothing_else() {
        let decls = declarations().unwrap();
        let mut f = vec![
            // ML-KEM's public matrix, reported inside an inlined intrinsic of rej_uniform.
            at(
                "index",
                &[
                    "_mm_storeu_si128",
                    "PQCLEAN_MLKEM768_AVX2_rej_uniform_avx",
                    "gen_matrix",
                ],
            ),
            // Something else in the same key generation.
            at("branch", &["cbd2", "poly_getnoise_eta1", "indcpa_keypair_derand"]),
        ];
        declare(&decls, "ML-KEM-768", "keypair", &mut f);
        assert_eq!(f[0].kind, "public");
        assert!(f[0].declared_source.as_deref().unwrap().contains("FIPS 203"));
        assert!(f[0].declared.as_deref().unwrap().contains("matrix"));
        assert_eq!(f[1].kind, "branch");
        // Only for the operations and algorithms declared: decapsulation's rej_uniform is not.
        let mut f = vec![at("branch", &["rej_uniform", "gen_matrix"])];
        declare(&decls, "ML-KEM-768", "decaps", &mut f);
        assert_eq!(f[0].kind, "branch");
        let mut f = vec![at("branch", &["vect_set_random_fixed_weight", "hqc_pke_keygen"])];
        declare(&decls, "HQC-128", "keypair", &mut f);
        assert_eq!(f[0].kind, "branch");
        // `innermost`: sntrup761's retry is in crypto_kem_keypair itself; a report in a
        // function it calls is not covered.
        let mut f = vec![
            at("branch", &["PQCLEAN_SNTRUP761_AVX2_crypto_kem_keypair"]),
            at("branch", &["R3_recip", "PQCLEAN_SNTRUP761_AVX2_crypto_kem_keypair"]),
        ];
        declare(&decls, "sntrup761", "keypair", &mut f);
        assert_eq!((f[0].kind.as_str(), f[1].kind.as_str()), ("rejection", "branch"));
        assert!(declared_timing(&decls, "sntrup761", "keypair").is_some());
        assert!(declared_timing(&decls, "sntrup761", "encaps").is_none());
        // `reports`: Classic McEliece's rejection tests in pk_gen are branches; a value in
        // the same function (a shift by the secret pivot) is not covered.
        let mut f = vec![
            at("branch", &["PQCLEAN_MCELIECE348864F_CLEAN_pk_gen"]),
            at("value", &["mov_columns", "PQCLEAN_MCELIECE348864F_CLEAN_pk_gen"]),
            at("branch", &["mov_columns", "PQCLEAN_MCELIECE348864F_CLEAN_pk_gen"]),
        ];
        declare(&decls, "Classic-McEliece-348864f", "keypair", &mut f);
        let kinds: Vec<&str> = f.iter().map(|x| x.kind.as_str()).collect();
        assert_eq!(kinds, ["rejection", "value", "rejection"]);
        // A report traced to memory never written is still covered where the declaration
        // says the value is public (RustCrypto's ML-KEM: rej_uniform on an XOF output whose
        // state memcheck traces to a stack allocation), by what memcheck saw.
        let mut traced = at("uninitialised", &["ml_kem::algebra::rej_uniform"]);
        traced.seen = Some("branch".into());
        let mut pivot = at("uninitialised", &["PQCLEAN_MCELIECE348864_AVX2_pk_gen"]);
        pivot.seen = Some("index".into());
        let mut f = vec![traced];
        declare(&decls, "ML-KEM-768", "keypair", &mut f);
        assert_eq!(f[0].kind, "public");
        // Not by a rejection entry: liboqs's AVX2 pk_gen (no line information) has its
        // loops' branches traced to genpoly_gen's uninitialised array, and they are not the
        // rejection test the entry names.
        let mut loop_branch = at("uninitialised", &["PQCLEAN_MCELIECE348864_AVX2_pk_gen"]);
        loop_branch.seen = Some("branch".into());
        let mut f = vec![pivot, loop_branch];
        declare(&decls, "Classic-McEliece-348864", "keypair", &mut f);
        assert_eq!(f[0].kind, "uninitialised");
        assert_eq!(f[1].kind, "uninitialised");
    }

    #[test]
    fn a_declared_timing_makes_dudect_inconclusive_not_clean() {
        let public = mc(serde_json::json!({"status": "clean", "findings": [{"kind": "public"}]}));
        let clean = mc(serde_json::json!({"status": "clean", "findings": []}));
        let branch =
            mc(serde_json::json!({"status": "findings", "findings": [{"kind": "branch"}, {"kind": "public"}]}));
        let leak = dd(serde_json::json!({"status": "leak"}));
        let pass = dd(serde_json::json!({"status": "pass"}));
        assert_eq!(
            verdict(&public, &[&leak], true),
            "no leak found (declared public values aside)"
        );
        assert_eq!(
            verdict(&clean, &[&leak], true),
            "no leak found (declared public values aside)"
        );
        assert_eq!(
            verdict(&public, &[&pass], false),
            "no leak found (declared public values aside)"
        );
        assert_eq!(verdict(&public, &[&leak], false), "timing difference (dudect)");
        assert_eq!(verdict(&branch, &[&leak], true), "leak (memcheck)");
        // dudect alone (--method dudect): a declared difference leaves nothing to say.
        let none = mc(Value::Null);
        assert_eq!(verdict(&none, &[&leak], true), "inconclusive (dudect: declared timing)");
        assert_eq!(verdict(&none, &[&pass], true), "no leak found (one method)");
        assert_eq!(verdict(&none, &[&leak], false), "timing difference (dudect)");
    }

    #[test]
    fn only_a_lone_single_branch_of_an_open_is_its_decision() {
        let mut f = vec![finding("branch", 1)];
        mark_decision("open", &mut f);
        assert_eq!(f[0].kind, "decision");
        let mut f = vec![finding("branch", 1)];
        mark_decision("open-forged", &mut f);
        assert_eq!(f[0].kind, "decision");
        // An early-exit compare of a 16-byte tag: one branch site reached 16 times.
        let mut f = vec![finding("branch", 16)];
        mark_decision("open", &mut f);
        assert_eq!(f[0].kind, "branch");
        // The decision and its test on the way out (RustCrypto's aes-gcm and our wrapper).
        let mut f = vec![finding("branch", 1), finding("branch", 1)];
        mark_decision("open", &mut f);
        assert!(f.iter().all(|x| x.kind == "decision"));
        // A once-per-call branch beside a per-byte one: neither is a decision.
        let mut f = vec![finding("branch", 1), finding("branch", 16)];
        mark_decision("open", &mut f);
        assert!(f.iter().all(|x| x.kind == "branch"));
        // Outside an open, a branch is a branch.
        let mut f = vec![finding("branch", 1)];
        mark_decision("seal", &mut f);
        assert_eq!(f[0].kind, "branch");
        let mut f = vec![finding("index", 1)];
        mark_decision("open", &mut f);
        assert_eq!(f[0].kind, "index");
    }

    #[test]
    fn verdicts() {
        let clean = mc(serde_json::json!({"status": "clean", "findings": []}));
        let branch = mc(serde_json::json!({"status": "findings", "findings": [{"kind": "branch"}]}));
        let pass = dd(serde_json::json!({"status": "pass"}));
        let leak = dd(serde_json::json!({"status": "leak"}));
        let unconfirmed = dd(serde_json::json!({"status": "unconfirmed"}));
        assert_eq!(verdict(&clean, &[&pass], false), "no leak found");
        assert_eq!(verdict(&clean, &[&unconfirmed], false), "no leak found");
        assert_eq!(verdict(&branch, &[&pass], false), "leak (memcheck)");
        assert_eq!(verdict(&clean, &[&pass, &leak], false), "timing difference (dudect)");
        assert_eq!(verdict(&branch, &[&leak], false), "leak (both methods)");
        assert_eq!(
            verdict(&mc(serde_json::json!({"status": "not run"})), &[&pass], false),
            "no leak found (one method)"
        );
        assert_eq!(
            verdict(&mc(serde_json::json!({"status": "failed"})), &[], false),
            "not audited"
        );
        let value = mc(serde_json::json!({"status": "findings", "findings": [{"kind": "value"}]}));
        assert_eq!(
            verdict(&value, &[&pass], false),
            "no branch or address (memcheck: value reports)"
        );
        assert_eq!(verdict(&value, &[&leak], false), "timing difference (dudect)");
        let uninit = mc(serde_json::json!({"status": "findings", "findings": [{"kind": "uninitialised"}]}));
        assert_eq!(
            verdict(&uninit, &[&pass], false),
            "no leak found by dudect (memcheck: memory never written)"
        );
        assert_eq!(verdict(&uninit, &[], false), "memcheck: memory never written");
        // Neither method can speak when dudect's difference is a declared one.
        assert_eq!(
            verdict(&uninit, &[&leak], true),
            "inconclusive (memcheck: memory never written; dudect: declared timing)"
        );
        let both =
            mc(serde_json::json!({"status": "findings", "findings": [{"kind": "uninitialised"}, {"kind": "index"}]}));
        assert_eq!(verdict(&both, &[&pass], false), "leak (memcheck)");
        let decided = mc(serde_json::json!({"status": "clean", "findings": [{"kind": "decision"}]}));
        assert_eq!(verdict(&decided, &[&pass], false), "no leak found");
    }
}
