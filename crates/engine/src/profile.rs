//! `cryptoscope profile`: where an operation's instructions go. The subject's worker runs
//! the operation under valgrind's callgrind with collection switched on only inside
//! `cryptoscope_profiled_op` (one call of the operation; input preparation and warm-up
//! calls are not counted) and with the harness's fixed-seed DRBG, so the counts are exact
//! and the same on every run. The output is read into a call graph and reported as a
//! call tree, a function table, the functions the PQC-KEM profiling thesis monitored, and
//! the hottest function's source lines.

use crate::args::ProfileArgs;
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gated::{gated, GateOptions};
use crate::ui::usage;
use crate::{profile, util};

use anyhow::{Context, Result};
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_catalogue::Operation;
use cryptoscope_measure::callgrind::{self, Profile};
use cryptoscope_report::table;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Internal functions the PQC-KEM profiling thesis followed, by their unprefixed names.
pub use cryptoscope_catalogue::names::MONITORED_FUNCTIONS as MONITORED;

/// How a failure reads when valgrind cannot decode the code (a limit of the tool here,
/// not a fault of the subject).
pub const UNDECODABLE: &str = "valgrind cannot decode an instruction of this code";

/// The function the worker wraps each profiled call in.
pub const ROOT: &str = "cryptoscope_profiled_op";

/// How a profile is taken.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Profiled calls (after the warm-up).
    pub calls: u64,
    pub warmup: u64,
    pub timeout: Duration,
    /// Call-tree nodes below this share of the total are hidden.
    pub min_share: f64,
    pub depth: usize,
    pub top: usize,
}

/// A failure of the profiled worker (exit code 1), as opposed to a usage error.
#[derive(Debug)]
pub struct SubjectFailed(pub String);

impl std::fmt::Display for SubjectFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SubjectFailed {}

/// `valgrind --version`, or a clear error when valgrind is missing.
pub fn valgrind_version() -> Result<String> {
    let out = Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|e| crate::ui::usage(format!("valgrind not found ({e}); scripts/setup.sh installs it")))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs `calls` profiled calls of `op` of subject `d` in `worker` under callgrind, with
/// the harness's fixed-seed randomness, and parses the result (all calls merged).
pub fn run_callgrind(worker: &Path, d: &Descriptor, op: Operation, s: &Settings) -> Result<Profile> {
    let mut merged = Profile::default();
    for part in run_callgrind_calls(worker, d, op, s, true)? {
        merged.merge(&part);
    }
    if merged.total == 0 {
        return Err(SubjectFailed(format!(
            "{} {}: callgrind counted nothing inside {ROOT} (was it inlined?)",
            d.id,
            op.as_str()
        ))
        .into());
    }
    Ok(merged)
}

/// Like [`run_callgrind`], one profile per profiled call, in call order; `deterministic`
/// false draws real randomness, so calls whose path depends on it (rejection sampling) may
/// differ from each other.
pub fn run_callgrind_calls(
    worker: &Path,
    d: &Descriptor,
    op: Operation,
    s: &Settings,
    deterministic: bool,
) -> Result<Vec<Profile>> {
    let dir = tempdir()?;
    let out = dir.join("callgrind.out");
    // Costs and call counts are zeroed on entry to the profiled function and dumped when
    // it returns: one part per profiled call (callgrind.out.1 ... .N), holding exactly that
    // call. (`--toggle-collect` would keep call counts from preparation and warm-up.)
    let mut cmd = Command::new("valgrind");
    cmd.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(format!("--zero-before={ROOT}"))
        .arg(format!("--dump-after={ROOT}"))
        .arg("--compress-strings=no")
        .arg("--compress-pos=no")
        // Instructions are counted in the library as built, never its probed twin.
        .env_remove(cryptoscope_worker::builds::PROBES_ENV)
        .arg(worker)
        .args(
            cryptoscope_model::protocol::Request::Loop {
                subject: d.id.clone(),
                op,
                iterations: s.calls,
                deterministic,
                marker: false,
                warmup: s.warmup,
            }
            .to_args(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| crate::ui::usage(format!("cannot start valgrind: {e}")))?;
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() > s.timeout {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&dir);
            return Err(SubjectFailed(format!(
                "{} {}: timed out after {} s under callgrind (raise --timeout)",
                d.id,
                op.as_str(),
                s.timeout.as_secs()
            ))
            .into());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = reader.join().unwrap_or_default();
    if !status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        let last = log
            .lines()
            .filter(|l| !l.trim_start_matches("==").is_empty())
            .rfind(|l| l.starts_with("error") || !l.starts_with("=="))
            .or_else(|| log.lines().last())
            .unwrap_or("")
            .to_string();
        if log.contains("unhandled instruction") {
            return Err(SubjectFailed(format!(
                "{} {}: {UNDECODABLE} ({status}); AVX-512 from -march=native is the usual cause: \
                 build with --flags \"-O3 -march=x86-64-v3\" to profile",
                d.id,
                op.as_str()
            ))
            .into());
        }
        return Err(SubjectFailed(format!(
            "{} {}: failed under callgrind ({status}): {last}",
            d.id,
            op.as_str()
        ))
        .into());
    }
    let parts = read_parts(&out, s.calls);
    let _ = std::fs::remove_dir_all(&dir);
    parts
}

/// Reads the dumps `OUT.1` … `OUT.calls`, one profile per profiled call.
fn read_parts(out: &Path, calls: u64) -> Result<Vec<Profile>> {
    let mut parts = Vec::new();
    for k in 1..=calls {
        let path = PathBuf::from(format!("{}.{k}", out.display()));
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "callgrind wrote no dump {} (expected one per profiled call)",
                path.display()
            )
        })?;
        parts.push(callgrind::parse(&text).with_context(|| format!("reading {}", path.display()))?);
    }
    Ok(parts)
}

/// A new directory of this process's own under the temporary directory (created, not
/// reused: the first free number).
fn tempdir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for k in 0u32.. {
        let dir = base.join(format!("cryptoscope-profile-{}-{k}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
    }
    unreachable!("a free name among 2^32")
}

/// A function as reported.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionRow {
    pub name: String,
    /// Name without PQClean's `PQCLEAN_<SCHEME>_<IMPL>_` namespace.
    pub short_name: String,
    pub object: String,
    pub inclusive: u64,
    #[serde(rename = "self")]
    pub self_cost: u64,
    pub inclusive_share: f64,
    pub self_share: f64,
    pub calls: u64,
    pub calls_per_op: f64,
    /// Inclusive instructions per call.
    pub instructions_per_call: Option<f64>,
}

/// A node of the call tree (costs of shared callees split in proportion to the arc).
#[derive(Debug, Clone, Serialize)]
pub struct TreeNode {
    pub depth: usize,
    pub name: String,
    pub instructions: f64,
    pub share: f64,
    pub calls_per_op: f64,
}

/// One annotated source line of the hottest function.
#[derive(Debug, Clone, Serialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
    pub instructions: u64,
    /// Share of the function's own instructions.
    pub share: f64,
    pub source: Option<String>,
}

/// The function with the most instructions of its own.
#[derive(Debug, Clone, Serialize)]
pub struct Hottest {
    pub name: String,
    pub self_share: f64,
    /// Empty when the object has no line information.
    pub lines: Vec<SourceLine>,
    /// Why there are no lines, if there are none.
    pub note: Option<String>,
}

/// The profile of one operation of one subject.
#[derive(Debug, Clone, Serialize)]
pub struct OpProfile {
    pub subject: String,
    pub operation: String,
    pub tool: String,
    pub calls: u64,
    pub warmup_calls: u64,
    pub randomness: String,
    pub total_instructions: u64,
    pub instructions_per_op: f64,
    pub tree: Vec<TreeNode>,
    pub functions: Vec<FunctionRow>,
    pub monitored: Vec<FunctionRow>,
    pub hottest: Option<Hottest>,
}

/// Drops PQClean's `PQCLEAN_<SCHEME>_<IMPL>_` namespace prefix.
pub fn short_name(name: &str) -> &str {
    if let Some(rest) = name.strip_prefix("PQCLEAN_") {
        let mut parts = rest.splitn(3, '_');
        if let (Some(_), Some(_), Some(tail)) = (parts.next(), parts.next(), parts.next()) {
            return tail;
        }
    }
    name
}

/// Summarises a parsed profile of `calls` operations.
pub fn summarise(d: &Descriptor, op: Operation, tool: &str, p: &Profile, s: &Settings) -> OpProfile {
    let total = p.total.max(1) as f64;
    let per_op = |x: u64| x as f64 / s.calls.max(1) as f64;
    let row = |i: usize| {
        let f = &p.functions[i];
        let inclusive = p.inclusive(i);
        let calls = p.calls(i);
        FunctionRow {
            name: f.name.clone(),
            short_name: short_name(&f.name).to_string(),
            object: f.object.clone(),
            inclusive,
            self_cost: f.self_cost,
            inclusive_share: inclusive as f64 / total,
            self_share: f.self_cost as f64 / total,
            calls,
            calls_per_op: per_op(calls),
            instructions_per_call: (calls > 0).then(|| inclusive as f64 / calls as f64),
        }
    };
    // Only the profiled call and what it reaches: its callers (the harness's loop, main)
    // also appear in the dumps.
    let inside = match p.find(ROOT) {
        Some(r) => p.reachable(r),
        None => vec![true; p.functions.len()],
    };
    let mut order: Vec<usize> = (0..p.functions.len()).filter(|&i| inside[i]).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(p.inclusive(i)), i));
    let functions: Vec<FunctionRow> = order
        .iter()
        .map(|&i| row(i))
        .filter(|r| r.name != ROOT)
        .take(s.top)
        .collect();
    let mut monitored: Vec<FunctionRow> = (0..p.functions.len())
        .filter(|&i| inside[i] && MONITORED.contains(&short_name(&p.functions[i].name)))
        .map(row)
        .collect();
    monitored.sort_by_key(|f| std::cmp::Reverse(f.inclusive));

    let mut tree = Vec::new();
    if let Some(root) = p.find(ROOT) {
        let mut path = vec![root];
        walk(p, root, total, 0, total, s, &mut path, &mut tree);
    }
    OpProfile {
        subject: d.id.clone(),
        operation: op.as_str().into(),
        tool: tool.into(),
        calls: s.calls,
        warmup_calls: s.warmup,
        randomness: "fixed-seed NIST AES-256 CTR_DRBG (harness randomness)".into(),
        total_instructions: p.total,
        instructions_per_op: per_op(p.total),
        tree,
        functions,
        monitored,
        hottest: hottest(p, &inside),
    }
}

#[allow(clippy::too_many_arguments)]
fn walk(
    p: &Profile,
    node: usize,
    cost: f64,
    depth: usize,
    total: f64,
    s: &Settings,
    path: &mut Vec<usize>,
    out: &mut Vec<TreeNode>,
) {
    let calls = if depth == 0 { s.calls } else { 0 };
    out.push(TreeNode {
        depth,
        name: p.functions[node].name.clone(),
        instructions: cost / s.calls.max(1) as f64,
        share: cost / total,
        calls_per_op: calls as f64 / s.calls.max(1) as f64,
    });
    if depth >= s.depth {
        return;
    }
    let inclusive = p.inclusive(node).max(1) as f64;
    let fraction = (cost / inclusive).min(1.0);
    for a in p.callees(node) {
        if path.contains(&a.callee) {
            continue;
        }
        let c = a.cost as f64 * fraction;
        if c / total < s.min_share {
            continue;
        }
        path.push(a.callee);
        let at = out.len();
        walk(p, a.callee, c, depth + 1, total, s, path, out);
        out[at].calls_per_op = a.calls as f64 * fraction / s.calls.max(1) as f64;
        path.pop();
    }
}

fn hottest(p: &Profile, inside: &[bool]) -> Option<Hottest> {
    let total = p.total.max(1) as f64;
    let i = (0..p.functions.len())
        .filter(|&i| inside[i] && p.functions[i].name != ROOT)
        .max_by_key(|&i| (p.functions[i].self_cost, std::cmp::Reverse(i)))?;
    let f = &p.functions[i];
    let own = f.self_cost.max(1) as f64;
    let with_lines: u64 = f.lines.iter().filter(|((_, l), _)| *l > 0).map(|(_, c)| c).sum();
    let mut lines: Vec<SourceLine> = f
        .lines
        .iter()
        .filter(|((_, l), c)| *l > 0 && **c as f64 / own >= 0.01)
        .map(|((file, line), c)| SourceLine {
            file: file.clone(),
            line: *line,
            instructions: *c,
            share: *c as f64 / own,
            source: source_line(file, *line),
        })
        .collect();
    // The 20 costliest lines, shown in source order.
    lines.sort_by_key(|l| std::cmp::Reverse(l.instructions));
    lines.truncate(20);
    lines.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
    let note = (with_lines == 0).then(|| format!("{} has no line information (built without -g)", f.object));
    Some(Hottest {
        name: f.name.clone(),
        self_share: f.self_cost as f64 / total,
        lines,
        note,
    })
}

fn source_line(file: &str, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let l = text.lines().nth(line.checked_sub(1)? as usize)?;
    Some(l.trim().chars().take(100).collect())
}

pub fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

pub fn count(x: f64) -> String {
    if x >= 100.0 || x == x.round() {
        table::group(x.round())
    } else {
        format!("{x:.2}")
    }
}

/// The terminal report of one profile.
pub fn render(p: &OpProfile) -> String {
    let mut out = String::new();
    out += &format!(
        "{} {} — {}: {} profiled call{} after {} warm-up, {}\n",
        p.subject,
        p.operation,
        p.tool,
        p.calls,
        if p.calls == 1 { "" } else { "s" },
        p.warmup_calls,
        p.randomness
    );
    out += &format!(
        "Instructions per {}: {} (exact; {} over {} call{})\n\n",
        p.operation,
        table::group(p.instructions_per_op.round()),
        table::group(p.total_instructions as f64),
        p.calls,
        if p.calls == 1 { "" } else { "s" }
    );
    out += "Call tree (share of instructions, instructions and calls per operation):\n";
    for n in &p.tree {
        out += &format!(
            "{:>7} {:>15} {:>9}  {}{}\n",
            pct(n.share),
            table::group(n.instructions.round()),
            count(n.calls_per_op),
            "  ".repeat(n.depth),
            short_name(&n.name)
        );
    }
    out += "\n";
    let rows = |v: &[FunctionRow]| -> Vec<Vec<String>> {
        v.iter()
            .map(|f| {
                vec![
                    f.short_name.clone(),
                    pct(f.inclusive_share),
                    pct(f.self_share),
                    count(f.calls_per_op),
                    f.instructions_per_call.map(count).unwrap_or_else(|| "-".into()),
                ]
            })
            .collect()
    };
    let head = ["function", "inclusive", "self", "calls/op", "instr/call"];
    let right = [false, true, true, true, true];
    out += &format!("Functions by inclusive instructions (top {}):\n", p.functions.len());
    out += &table::render(&head, &rows(&p.functions), &right);
    if !p.monitored.is_empty() {
        out += "\nFunctions the PQC-KEM profiling thesis monitored:\n";
        out += &table::render(&head, &rows(&p.monitored), &right);
    }
    if let Some(h) = &p.hottest {
        out += &format!(
            "\nHottest function: {} ({} of all instructions in its own code)\n",
            short_name(&h.name),
            pct(h.self_share)
        );
        if let Some(n) = &h.note {
            out += &format!("  {n}\n");
        }
        let mut file = "";
        for l in &h.lines {
            if l.file != file {
                file = &l.file;
                out += &format!("  {file}\n");
            }
            out += &format!(
                "  {:>6} {:>7} {:>15}  {}\n",
                l.line,
                pct(l.share),
                table::group(l.instructions as f64),
                l.source.as_deref().unwrap_or("(source not found)")
            );
        }
    }
    out
}

pub(crate) fn parse_ops(ops: &[String]) -> Result<Option<Vec<cryptoscope_catalogue::Operation>>> {
    if ops.is_empty() {
        return Ok(None);
    }
    ops.iter()
        .flat_map(|o| o.split(','))
        .map(|o| {
            cryptoscope_catalogue::Operation::parse(o.trim())
                .ok_or_else(|| usage(format!("unknown operation `{o}` (keypair, encaps, decaps, exchange)")))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

pub fn cmd_profile(a: &ProfileArgs, ctx: &Ctx) -> Result<i32> {
    let selection = a.sel.selection()?;
    let ops = parse_ops(&a.op)?;
    if a.calls == 0 {
        return Err(usage("--calls must be at least 1"));
    }
    if !(a.min_share >= 0.0 && a.min_share <= 100.0) {
        return Err(usage("--min-share must be a percentage from 0 to 100"));
    }
    if !(a.gate.timeout > 0.0 && a.gate.timeout.is_finite()) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    let json = a
        .json
        .as_ref()
        .map(|p| util::check_writable(p).map_err(usage))
        .transpose()?;
    let tool = profile::valgrind_version()?;
    let gate = GateOptions::of(ctx, &a.gate, true)?;
    let pick = |cat: &Catalogue| -> Result<Vec<Descriptor>> {
        let picked = selection.pick(cat)?;
        if let Some(ops) = &ops {
            if !picked.iter().any(|d| ops.iter().any(|o| d.operations().contains(o))) {
                return Err(usage("no selected subject has the requested operation"));
            }
        }
        Ok(picked)
    };
    let wanted = |d: &Descriptor| {
        d.operations()
            .iter()
            .filter(|o| ops.as_ref().is_none_or(|v| v.contains(o)))
            .count()
    };
    let steps = |picked: &[Descriptor]| picked.iter().map(|d| 1 + wanted(d)).sum::<usize>() as u64;
    let (gated, mut pb) = gated(ctx, &gate, pick, steps)?;
    let settings = profile::Settings {
        calls: a.calls,
        warmup: a.warmup,
        timeout: gate.timeout,
        min_share: a.min_share / 100.0,
        depth: a.depth,
        top: a.top,
    };
    let mut profiles = Vec::new();
    let (mut failures, notes) = gated.not_passed("profiled");
    for n in &notes {
        errln!(ctx, "note: {n}");
    }
    for d in gated.picked.iter().filter(|d| gated.passed(d)) {
        let worker = gated.cat.worker(&d.provider).context("worker vanished")?;
        for op in d
            .operations()
            .iter()
            .filter(|o| ops.as_ref().is_none_or(|v| v.contains(o)))
        {
            pb.message(&format!("profile {} {}", d.id, op.as_str()));
            match profile::run_callgrind(worker, d, *op, &settings) {
                Ok(p) => {
                    let prof = profile::summarise(d, *op, &tool, &p, &settings);
                    pb.step(
                        &format!("profile {} {}", d.id, op.as_str()),
                        &format!("{} instructions", table::group(prof.instructions_per_op.round())),
                    );
                    pb.bar.suspend(|| outln!(ctx, "{}", profile::render(&prof)));
                    profiles.push(prof);
                }
                Err(e) if e.is::<profile::SubjectFailed>() => {
                    pb.step(&format!("profile {} {}", d.id, op.as_str()), "failed");
                    failures.push(e.to_string());
                }
                Err(e) => return Err(e),
            }
        }
    }
    pb.finish();
    if let Some(path) = json {
        let doc = serde_json::json!({ "schema": "cryptoscope.profile/1", "profiles": profiles });
        std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")
            .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))?;
        errln!(ctx, "Wrote {}", path.display());
    }
    for f in &failures {
        errln!(ctx, "error: {f}");
    }
    Ok(if failures.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pqclean_prefixes_are_dropped() {
        assert_eq!(short_name("PQCLEAN_NTRUHRSS701_CLEAN_poly_Rq_mul"), "poly_Rq_mul");
        assert_eq!(short_name("PQCLEAN_MCELIECE8192128_AVX2_pk_gen"), "pk_gen");
        assert_eq!(short_name("OQS_KEM_keypair"), "OQS_KEM_keypair");
        assert_eq!(short_name("PQCLEAN_X"), "PQCLEAN_X");
    }
}
