//! `cryptoscope build` and `cryptoscope add`: subjects compiled from source trees (ours with
//! several compilers and flags, or a directory the user brings).

use crate::args::{AddArgs, BuildArgs};
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gated::{gated, GateOptions};
use crate::matrix;
use crate::ui::{usage, Progress};
use anyhow::Result;
use cryptoscope_model::GateStatus;
use cryptoscope_report::table;

pub(crate) fn print_builds(ctx: &Ctx) {
    let list = cryptoscope_worker::builds::list();
    if list.is_empty() {
        outln!(ctx, "No builds in {}.", cryptoscope_worker::builds::dir().display());
        return;
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|(_, m)| {
            vec![
                m.algorithm.clone(),
                format!("build/{}", m.label),
                m.origin.clone(),
                m.build_line(),
                m.source.clone(),
            ]
        })
        .collect();
    out!(
        ctx,
        "{}",
        table::render(
            &["algorithm", "subject", "origin", "compiler and flags", "source"],
            &rows,
            &[false; 5]
        )
    );
}

pub(crate) fn canonical_kem(name: &str) -> Result<String> {
    let info = cryptoscope_catalogue::names::algorithm(name).ok_or_else(|| {
        let hint = cryptoscope_catalogue::names::did_you_mean(
            name,
            cryptoscope_catalogue::names::ALGORITHMS.iter().map(|a| a.name),
        )
        .map(|h| format!(" (did you mean `{h}`?)"))
        .unwrap_or_default();
        usage(format!("unknown algorithm `{name}`{hint}"))
    })?;
    if info.family != cryptoscope_catalogue::descriptor::Family::Kem {
        return Err(usage(format!(
            "{}: only KEMs can be built (the NIST KEM API)",
            info.name
        )));
    }
    Ok(info.name.to_string())
}

pub fn cmd_build(a: &BuildArgs, ctx: &Ctx) -> Result<i32> {
    if a.list {
        print_builds(ctx);
        return Ok(0);
    }
    let algs: Vec<String> = a
        .alg
        .iter()
        .flat_map(|x| x.split(','))
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(canonical_kem)
        .collect::<Result<_>>()?;
    if a.remove {
        let mut n = 0;
        for (dir, m) in cryptoscope_worker::builds::list() {
            if algs.is_empty() || algs.contains(&m.algorithm) {
                std::fs::remove_dir_all(&dir).map_err(|e| usage(format!("cannot remove {}: {e}", dir.display())))?;
                n += 1;
            }
        }
        outln!(ctx, "Removed {n} build(s).");
        return Ok(0);
    }
    if algs.is_empty() {
        return Err(usage("build needs --alg NAME (e.g. --alg NTRU-HRSS-701), or --list"));
    }
    let ccs = matrix::compilers(&a.cc)?;
    let flags = if a.flags.is_empty() {
        vec!["-O0".to_string(), "-O3 -march=native".to_string()]
    } else {
        a.flags.clone()
    };
    let variants: Vec<&str> = a.variant.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
    if variants.is_empty() || variants.iter().any(|v| !["clean", "avx2"].contains(v)) {
        return Err(usage(format!("--variant {}: expected clean and/or avx2", a.variant)));
    }
    let sources: Vec<&str> = a.source.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
    if sources.is_empty() || sources.iter().any(|v| !["pqclean", "liboqs"].contains(v)) {
        return Err(usage(format!("--source {}: expected pqclean and/or liboqs", a.source)));
    }
    let mut jobs = Vec::new();
    for alg in &algs {
        for src in &sources {
            let mut found = false;
            for v in &variants {
                for cc in &ccs {
                    for f in &flags {
                        let fl: Vec<String> = if f.trim().is_empty() { vec![] } else { vec![f.clone()] };
                        let job = if *src == "liboqs" {
                            matrix::liboqs_job(&ctx.env, alg, v, cc, &fl)
                        } else {
                            matrix::pqclean_job(&ctx.env, alg, v, cc, &fl)
                        };
                        if let Some(j) = job {
                            jobs.push(j);
                            found = true;
                        }
                    }
                }
            }
            if !found {
                let whose = if *src == "liboqs" {
                    "liboqs (as oqs-sys vendors it) has no such KEM"
                } else {
                    "no PQClean sources found in the pqcrypto crates"
                };
                return Err(usage(format!(
                    "{alg}: {whose} (run scripts/setup.sh, which builds the workspace and fetches the sources)"
                )));
            }
        }
    }
    let mut pb = Progress::new(jobs.len() as u64, ctx);
    let mut failed = Vec::new();
    let mut built = Vec::new();
    for j in &jobs {
        pb.message(&format!("{} {} {} {}", j.algorithm, j.variant, j.cc, j.flags.join(" ")));
        match matrix::compile(j) {
            Ok((_, m)) => {
                pb.step(&format!("build {} {}", m.algorithm, m.label), "ok");
                built.push(m);
            }
            Err(e) => {
                pb.step(&format!("build {} {}", j.algorithm, j.variant), "failed");
                failed.push(e);
            }
        }
    }
    pb.finish();
    let rows: Vec<Vec<String>> = built
        .iter()
        .map(|m| vec![m.algorithm.clone(), format!("build/{}", m.label), m.build_line()])
        .collect();
    out!(
        ctx,
        "{}",
        table::render(&["algorithm", "subject", "compiler and flags"], &rows, &[false; 3])
    );
    outln!(
        ctx,
        "{} build(s) in {}. Measure them: cryptoscope run --provider build --alg {} --baseline build/<label>",
        built.len(),
        cryptoscope_worker::builds::dir().display(),
        algs[0]
    );
    for f in &failed {
        errln!(ctx, "error: {f}");
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

pub fn cmd_add(a: &AddArgs, ctx: &Ctx) -> Result<i32> {
    let alg = canonical_kem(&a.alg)?;
    if !a.path.is_dir() {
        return Err(usage(format!("{}: not a directory", a.path.display())));
    }
    let api = a.path.join("api.h");
    let text = std::fs::read_to_string(&api).map_err(|e| usage(format!("cannot read {}: {e}", api.display())))?;
    let parsed = matrix::parse_api(&text).map_err(|e| usage(format!("{}: {e}", api.display())))?;
    let ccs = matrix::compilers(&a.cc)?;
    let flags = if a.flags.is_empty() {
        vec!["-O3".to_string()]
    } else {
        a.flags.clone()
    };
    let source = std::fs::canonicalize(&a.path).unwrap_or_else(|_| a.path.clone());
    let variant = source
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_")
        })
        .unwrap_or_else(|| "user".into());
    let mut labels = Vec::new();
    let mut failed = 0;
    for cc in &ccs {
        for f in &flags {
            let job = matrix::Job {
                algorithm: alg.clone(),
                origin: "user".into(),
                source: source.clone(),
                common: None,
                variant: variant.clone(),
                source_version: format!("{} ({})", source.display(), parsed.algname),
                cc: cc.clone(),
                flags: if f.trim().is_empty() { vec![] } else { vec![f.clone()] },
            };
            match matrix::compile(&job) {
                Ok((_, m)) => labels.push(m.label),
                Err(e) => {
                    errln!(ctx, "error: {e}");
                    failed += 1;
                }
            }
        }
    }
    if labels.is_empty() {
        return Ok(1);
    }
    // The same gate as every other subject.
    let gate = GateOptions::of(ctx, &a.gate, false)?;
    let of_this_add = |cat: &Catalogue| -> Result<Vec<_>> {
        Ok(cat
            .subjects
            .iter()
            .filter(|d| d.provider == "build" && d.algorithm == alg && labels.contains(&d.implementation))
            .cloned()
            .collect())
    };
    let (gated, pb) = gated(ctx, &gate, of_this_add, |picked| picked.len() as u64)?;
    let (picked, verdicts) = (&gated.picked, &gated.verdicts);
    pb.finish();
    let rows: Vec<Vec<String>> = picked
        .iter()
        .map(|d| {
            let v = &verdicts[&d.id];
            if v.status != GateStatus::Pass {
                failed += 1;
            }
            vec![d.id.clone(), v.status.as_str().to_uppercase(), v.detail.clone()]
        })
        .collect();
    out!(
        ctx,
        "{}",
        table::render(&["subject", "gate", "detail"], &rows, &[false; 3])
    );
    if failed == 0 {
        outln!(
            ctx,
            "Added. Measure it beside the catalogue: cryptoscope run --alg {alg}"
        );
        Ok(0)
    } else {
        outln!(
            ctx,
            "Failed builds stay listed (cryptoscope build --list) but are never measured or ranked."
        );
        Ok(1)
    }
}
