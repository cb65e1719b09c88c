//! `cryptoscope verify --vectors FILE`: a vector file brought by the user, run against every
//! selected implementation of its algorithm, each in its own worker process.
//!
//! The file is recognised and parsed here first (`catalogue::external`), so a malformed or
//! unsupported file is a usage error before any worker starts. Each subject then runs the
//! file in its worker (`verify-file`); a crash or hang costs that subject's row only.
//! Wycheproof `mlkem_test_schema` files need the key pair from a seed: subjects that take
//! injected randomness derive it themselves and write the decapsulation keys out; subjects
//! that cannot (AWS-LC) get the keys of one that reproduced every test, or are skipped. The
//! encapsulation, key generation and decapsulation schemas carry their keys in each test,
//! so every subject runs them on its own.

use crate::context::Ctx;
use anyhow::Result;
use cryptoscope_catalogue::descriptor::{Descriptor, Randomness};
use cryptoscope_catalogue::external::{self, External, ExternalError, FileOutcome, Format};
use cryptoscope_catalogue::names;
use cryptoscope_report::table;
use cryptoscope_worker::Event;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::args::{GateArgs, SelectArgs};
use crate::catalog::{Catalogue, Selection};
use crate::ui::{usage, Progress};
use crate::workers::Outcome;

/// Runs `verify` on a vector file when `--vectors` names one; `None` for a directory (the
/// gate as before).
pub fn verify_file_mode(sel: &SelectArgs, g: &GateArgs, json: Option<&Path>, ctx: &Ctx) -> Result<Option<i32>> {
    match g.vectors.as_deref() {
        Some(p) if p.is_file() => {
            if g.kat.is_some() {
                return Err(usage(
                    "--kat sets how much of the repository's KATs the gate reproduces; a vector file is always run whole: drop --kat",
                ));
            }
            verify_file(sel, g, p, json, ctx).map(Some)
        }
        _ if json.is_some() => Err(usage(
            "--json writes the results of a vector file: use it with --vectors FILE",
        )),
        _ => Ok(None),
    }
}

/// How one subject fared.
#[derive(Debug, Clone, Serialize)]
struct Row {
    subject: String,
    algorithm: String,
    provider: String,
    implementation: String,
    /// pass, fail, skipped, unavailable, crashed, timeout, error
    status: String,
    /// Why, when the worker did not report an outcome (or the subject was not run).
    detail: String,
    #[serde(flatten)]
    outcome: FileOutcome,
}

impl Row {
    fn new(d: &Descriptor, status: &str, detail: String, outcome: FileOutcome) -> Row {
        Row {
            subject: d.id.clone(),
            algorithm: d.algorithm.clone(),
            provider: d.provider.clone(),
            implementation: d.implementation.clone(),
            status: status.into(),
            detail,
            outcome,
        }
    }

    fn is_failure(&self) -> bool {
        matches!(self.status.as_str(), "fail" | "crashed" | "timeout" | "error")
    }
}

/// The JSON document of `--json`.
#[derive(Serialize)]
struct Report<'a> {
    file: String,
    format: &'static str,
    algorithm: &'a str,
    /// What the ids in `failures` are: record (hash files), count (KEM KAT), tcId (Wycheproof).
    id_kind: &'static str,
    tests: usize,
    subjects: &'a [Row],
}

fn file_error(e: ExternalError) -> anyhow::Error {
    usage(e.to_string())
}

/// The algorithms to run: `--alg`, else what the file states. A file that states several
/// (a Wycheproof AES-GCM file holds 128- and 256-bit keys) runs all of them, each against
/// its own tests.
fn algorithms(path: &Path, parsed: &External, flag: &[String]) -> Result<Vec<String>> {
    let stated = parsed.stated_algorithms();
    if flag.is_empty() && stated.len() > 1 {
        let want = parsed.format().family();
        if stated
            .iter()
            .all(|a| names::algorithm(a).is_some_and(|i| i.family == want))
        {
            return Ok(stated);
        }
    }
    algorithm(path, parsed, flag).map(|a| vec![a])
}

/// The one algorithm to run: `--alg`, else what the file states.
fn algorithm(path: &Path, parsed: &External, flag: &[String]) -> Result<String> {
    let stated = parsed.stated_algorithms();
    let file = path.display();
    if flag.len() > 1 {
        return Err(usage(format!(
            "a vector file is for one algorithm: give one --alg, not {}",
            flag.join(", ")
        )));
    }
    let alg = match (flag.first(), stated.as_slice()) {
        (Some(a), []) => a.clone(),
        (Some(a), s) if s.contains(a) => a.clone(),
        (Some(a), s) => {
            return Err(usage(format!(
                "--alg {a} does not match {file}, which holds {} tests",
                s.join(", ")
            )))
        }
        (None, [one]) => one.clone(),
        (None, []) if parsed.format() == Format::CavpHash => {
            return Err(usage(format!(
                "cannot tell which hash {file} is for (its name is not a CAVP name such as SHA256ShortMsg.rsp): give --alg, e.g. --alg SHA-256"
            )))
        }
        (None, []) if parsed.format() == Format::WycheproofAead => {
            return Err(usage(format!(
                "{file} holds no test with a key length of a catalogue AEAD (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305)"
            )))
        }
        (None, []) => {
            return Err(usage(format!(
                "cannot tell which KEM {file} is for (no `# NAME` header line): give --alg, e.g. --alg ML-KEM-768"
            )))
        }
        (None, many) => {
            return Err(usage(format!(
                "{file} holds tests for {}: choose one with --alg",
                many.join(", ")
            )))
        }
    };
    let Some(info) = names::algorithm(&alg) else {
        return Err(usage(format!(
            "{file} is for {alg}, which the catalogue does not have; `cryptoscope list --all --suite kem,kex,sig,hash,cipher,aead` shows what it has"
        )));
    };
    let want = parsed.format().family();
    if info.family != want {
        return Err(usage(format!(
            "{alg} is a {} algorithm but {file} is a {} file ({} tests): give a {} algorithm with --alg",
            info.family.as_str(),
            parsed.format().as_str(),
            want.as_str(),
            want.as_str()
        )));
    }
    if let External::Hash { l: Some(l), .. } = parsed {
        let bytes = info.digest_size;
        if bytes > 0 && *l != bytes && *l != bytes * 8 && !alg.starts_with("SHAKE") {
            return Err(usage(format!(
                "{file} says [L = {l}] but {alg} digests are {bytes} bytes: is --alg right?"
            )));
        }
    }
    Ok(info.name.to_string())
}

/// KEM KAT entries must have the algorithm's sizes (a wrong --alg shows here).
fn check_kem_sizes(path: &Path, parsed: &External, d: &Descriptor) -> Result<()> {
    let External::Kem { records, .. } = parsed else {
        return Ok(());
    };
    let r = &records[0];
    for (name, got, want) in [
        ("pk", r.pk.len(), d.sizes.public_key),
        ("sk", r.sk.len(), d.sizes.secret_key),
        ("ct", r.ct.len(), d.sizes.ciphertext),
        ("ss", r.ss.len(), d.sizes.shared_secret),
    ] {
        if got != want {
            return Err(usage(format!(
                "{}: count {} has a {got}-byte `{name}`, but {} uses {want} bytes: is --alg right?",
                path.display(),
                r.count,
                d.algorithm
            )));
        }
    }
    Ok(())
}

struct Runner<'a> {
    cat: &'a Catalogue,
    file: PathBuf,
    format: Format,
    timeout: Duration,
    tmp: PathBuf,
}

impl Runner<'_> {
    fn keys_file(&self, d: &Descriptor) -> PathBuf {
        self.tmp.join(format!("{}.keys.json", d.id.replace('/', "_")))
    }

    /// Runs the file against one subject in its worker.
    fn run(&self, d: &Descriptor, keys_in: Option<&Path>, keys_out: bool) -> Row {
        if let cryptoscope_catalogue::Availability::Unavailable(r) = &d.availability {
            return Row::new(d, "unavailable", r.clone(), FileOutcome::default());
        }
        let Some(bin) = self.cat.worker(&d.provider) else {
            return Row::new(
                d,
                "unavailable",
                format!("no worker for provider {}", d.provider),
                FileOutcome::default(),
            );
        };
        let request = cryptoscope_model::protocol::Request::VerifyFile {
            subject: d.id.clone(),
            file: self.file.clone(),
            format: self.format.as_str().into(),
            keys_in: keys_in.map(Path::to_path_buf),
            keys_out: keys_out.then(|| self.keys_file(d)),
        };
        let mut got = None;
        let outcome = self.cat.transport.call(bin, &request, self.timeout, &mut |ev| {
            if let Event::FileVerified { outcome, .. } = ev {
                got = Some(outcome);
            }
        });
        match (outcome, got) {
            (Outcome::Completed, Some(o)) => {
                let status = if o.failed > 0 {
                    "fail"
                } else if o.passed + o.acceptable == 0 {
                    "skipped"
                } else {
                    "pass"
                };
                Row::new(d, status, String::new(), o)
            }
            (Outcome::Completed, None) => Row::new(
                d,
                "error",
                "the worker reported no result".into(),
                FileOutcome::default(),
            ),
            (o @ Outcome::Crashed(_), _) => Row::new(d, "crashed", o.describe(), FileOutcome::default()),
            (o @ Outcome::TimedOut(_), _) => Row::new(d, "timeout", o.describe(), FileOutcome::default()),
            (o @ Outcome::Failed(_), _) => Row::new(d, "error", o.describe(), FileOutcome::default()),
        }
    }
}

fn verify_file(sel: &SelectArgs, g: &GateArgs, path: &Path, json: Option<&Path>, ctx: &Ctx) -> Result<i32> {
    let parsed = external::load(path).map_err(file_error)?;
    let format = parsed.format();
    let selection = sel.selection()?;
    let algs = algorithms(path, &parsed, &selection.algorithms)?;
    let alg = algs.join(", ");
    let cat = Catalogue::discover(ctx)?;
    crate::ui::warn_missing(ctx, &cat);
    let picked = Selection {
        suites: Vec::new(),
        algorithms: algs,
        all: true,
        ..selection
    }
    .pick(&cat)?;
    check_kem_sizes(path, &parsed, &picked[0])?;
    let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let tmp = std::env::temp_dir().join(format!("cryptoscope-verify-file-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| usage(format!("cannot create {}: {e}", tmp.display())))?;
    let runner = Runner {
        cat: &cat,
        file,
        format,
        timeout: Duration::from_secs_f64(g.timeout),
        tmp: tmp.clone(),
    };
    let mlkem = format == Format::WycheproofMlkem;
    let injectable = |d: &Descriptor| d.randomness == Randomness::Harness;
    // Subjects that derive ML-KEM keys themselves go first; the others take theirs.
    let mut order: Vec<&Descriptor> = picked.iter().collect();
    order.sort_by_key(|d| mlkem && !injectable(d));
    let mut pb = Progress::new(picked.len() as u64, ctx);
    let mut rows: Vec<Row> = Vec::new();
    let mut reference: Option<(String, PathBuf)> = None;
    let mut looked_for_reference = false;
    for d in order {
        let row = if mlkem && !injectable(d) {
            if reference.is_none() && !looked_for_reference {
                looked_for_reference = true;
                // None of the selected subjects could serve: run one from the catalogue,
                // for its keys only (it is not reported).
                let candidate = cat.subjects.iter().find(|r| {
                    r.algorithm == d.algorithm
                        && injectable(r)
                        && r.is_available()
                        && !picked.iter().any(|p| p.id == r.id)
                });
                if let Some(r) = candidate {
                    pb.message(&format!("deriving keys with {}", r.id));
                    let row = runner.run(r, None, true);
                    if derived_keys(&row) {
                        reference = Some((r.id.clone(), runner.keys_file(r)));
                    }
                }
            }
            match &reference {
                Some((rid, keys)) => {
                    let mut row = runner.run(d, Some(keys), false);
                    row.outcome
                        .notes
                        .push(format!("randomness not injectable: decapsulation keys derived by {rid}, which reproduced each test's ek"));
                    row
                }
                None => {
                    let mut row = Row::new(
                        d,
                        "skipped",
                        format!(
                            "randomness not injectable and no injectable implementation of {} ran this file to derive keys from",
                            d.algorithm
                        ),
                        FileOutcome::default(),
                    );
                    row.outcome.skipped = parsed.tests();
                    row
                }
            }
        } else {
            let row = runner.run(d, None, mlkem);
            if mlkem && reference.is_none() && derived_keys(&row) {
                reference = Some((d.id.clone(), runner.keys_file(d)));
            }
            row
        };
        pb.step(&format!("{} {}", format.as_str(), d.id), &row.status);
        rows.push(row);
    }
    pb.finish();
    let _ = std::fs::remove_dir_all(&tmp);
    print_rows(ctx, &rows, format, path, &alg, parsed.tests());
    if let Some(out) = json {
        let report = Report {
            file: path.display().to_string(),
            format: format.as_str(),
            algorithm: &alg,
            id_kind: format.id_kind(),
            tests: parsed.tests(),
            subjects: &rows,
        };
        let text = serde_json::to_string_pretty(&report)?;
        crate::stored::write_output(ctx, out, &(text + "\n"))?;
    }
    Ok(if rows.iter().any(Row::is_failure) { 1 } else { 0 })
}

/// Whether a subject ran the ML-KEM file to the end, so its keys can serve subjects whose
/// randomness cannot be injected: the keys file holds a key only for each test whose `ek`
/// the subject reproduced from the seed, so a test it failed otherwise still has its key.
fn derived_keys(row: &Row) -> bool {
    matches!(row.status.as_str(), "pass" | "fail")
}

/// At most this many failing ids in the table's column.
const IDS_SHOWN: usize = 8;

fn print_rows(ctx: &Ctx, rows: &[Row], format: Format, path: &Path, alg: &str, tests: usize) {
    let kind = format.id_kind();
    let wycheproof = !matches!(format, Format::CavpHash | Format::KemKat);
    let mut header = vec!["algorithm", "provider", "impl", "result", "passed"];
    if wycheproof {
        header.push("acceptable");
    }
    header.extend(["failed", "skipped"]);
    let ids_header = format!("first failing {kind}s");
    header.push(&ids_header);
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let o = &r.outcome;
            let ran = matches!(r.status.as_str(), "pass" | "fail" | "skipped");
            let n = |x: usize| if ran { x.to_string() } else { "-".into() };
            let mut ids: Vec<&str> = o.failures.iter().take(IDS_SHOWN).map(|f| f.id.as_str()).collect();
            let more = o.failures.len().saturating_sub(IDS_SHOWN);
            let more = if more > 0 {
                format!(" … (+{more})")
            } else {
                String::new()
            };
            if ids.is_empty() && !ran {
                ids.push(&r.detail);
            }
            let mut cells = vec![
                r.algorithm.clone(),
                r.provider.clone(),
                r.implementation.clone(),
                r.status.to_uppercase(),
                n(o.passed),
            ];
            if wycheproof {
                cells.push(n(o.acceptable));
            }
            cells.extend([n(o.failed), n(o.skipped), format!("{}{more}", ids.join(", "))]);
            cells
        })
        .collect();
    let mut right = vec![false, false, false, false, true];
    if wycheproof {
        right.push(true);
    }
    right.extend([true, true, false]);
    out!(ctx, "{}", table::render(&header, &table_rows, &right));
    for r in rows {
        let mut lines: Vec<String> = Vec::new();
        if r.status == "skipped" && !r.detail.is_empty() {
            lines.push(r.detail.clone());
        }
        lines.extend(
            r.outcome
                .failures
                .iter()
                .take(3)
                .map(|f| format!("{kind} {}: {}", f.id, f.detail)),
        );
        lines.extend(r.outcome.notes.iter().cloned());
        for l in lines {
            outln!(ctx, "  {}: {l}", r.subject);
        }
    }
    let count = |s: &[&str]| rows.iter().filter(|r| s.contains(&r.status.as_str())).count();
    outln!(
        ctx,
        "{} passed, {} failed, {} skipped, {} unavailable ({}: {}, {alg}, {tests} tests)",
        count(&["pass"]),
        count(&["fail", "crashed", "timeout", "error"]),
        count(&["skipped"]),
        count(&["unavailable"]),
        path.display(),
        format.as_str()
    );
}
