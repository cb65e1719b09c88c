//! The study's rounds: the baseline and every configuration once per round, `--repeats`
//! rounds, then one row per configuration with its figures over the repeats.

use super::repeats::{self, One};
use super::{
    datapath, ping, record, transfer, Bench, Measured, Netns, Path, Pings, Planned, Result, Row, Status, Study,
    Transfer, TunnelArgs, ADDR_B, MASK_AES,
};
use cryptoscope_engine::context::Ctx;

/// What the rounds measured of one configuration, in the order measured, or why it failed.
#[derive(Default)]
struct Runs {
    measured: Vec<Measured>,
    failed: Option<anyhow::Error>,
}

fn one(ping: Option<&Pings>, transfer: &Transfer) -> One {
    One {
        transfer: transfer.clone(),
        ping_p50_ms: ping.map(|p| p.iter().map(|(s, v)| (*s, v.p50_ms)).collect()),
    }
}

/// The baseline once: the veth pair without a tunnel.
fn baseline(a: &TunnelArgs, s: &Study, file: &Path) -> Result<(Pings, Transfer)> {
    let n = Netns::create("cstun", a.rate.as_deref())?;
    let p = ping(&n, ADDR_B, None, &s.sizes, s.pings)?;
    let t = transfer(&n, None, ADDR_B, None, 5201, file, s.bytes)?;
    Ok((p, t))
}

/// Runs the rounds; returns the rows (the baseline first) and whether something failed or
/// the run was interrupted (exit code 1).
pub(super) fn measure(bench: &Bench<'_>, plan: &[Planned], work: &Path, ctx: &Ctx) -> Result<(Vec<Row>, i32)> {
    let quiet = ctx.quiet;
    let (a, s) = (bench.a, bench.s);
    let mut base: Vec<(Pings, Transfer)> = Vec::new();
    let mut runs: Vec<Runs> = plan.iter().map(|_| Runs::default()).collect();
    let total = plan.iter().filter(|p| p.3.is_none()).count();
    let mut code = 0;
    'rounds: for round in 0..s.repeats {
        let r = if s.repeats > 1 {
            format!("[round {}/{}] ", round + 1, s.repeats)
        } else {
            String::new()
        };
        if crate::stop::requested() {
            break;
        }
        if !quiet {
            errln!(ctx, "{r}baseline: the veth pair without a tunnel");
        }
        // The same path without a tunnel: the baseline every overhead is relative to.
        base.push(baseline(a, s, bench.file)?);
        let mut done = 0;
        for (i, (t, c, soft, why)) in plan.iter().enumerate() {
            if why.is_some() {
                continue;
            }
            done += 1;
            if runs[i].failed.is_some() {
                continue;
            }
            if crate::stop::requested() {
                break 'rounds;
            }
            let accel = if *soft { "soft" } else { "accel" };
            if !quiet {
                errln!(ctx, "{r}[{done}/{total}] {t} {c} {accel}");
            }
            let dir = work.join(format!("{t}-{}-{accel}-{round}", c.replace(':', "_")));
            std::fs::create_dir_all(&dir)?;
            // Under hostile traffic once, in the first round: its figures are a verdict
            // (still served?) and their cost, not a distribution.
            match bench.configuration(t, c, *soft, &dir, a.hostile && round == 0) {
                Ok(m) => runs[i].measured.push(m),
                Err(_) if crate::stop::requested() => break 'rounds,
                Err(e) => runs[i].failed = Some(e),
            }
        }
    }
    if base.is_empty() {
        return Ok((Vec::new(), 1));
    }
    let base_ones: Vec<One> = base.iter().map(|(p, t)| one(Some(p), t)).collect();
    let base_repeats = repeats::summarize(&base_ones, None);
    let (p, t) = base.swap_remove(repeats::representative(&base_ones));
    let mut rows = vec![Row {
        ping: Some(Some(p)),
        transfer: Some(t),
        repeats: base_repeats.clone(),
        ..Row::new("none", "-", "-", Status::Ok)
    }];
    let base_spread = base_repeats.map(|r| r.mb_per_s);
    for ((t, c, soft, why), runs) in plan.iter().zip(runs) {
        if let Some(why) = why {
            let accel = if *soft { "soft" } else { "-" };
            rows.push(Row {
                reason: Some(why.to_string()),
                ..Row::new(t, c, accel, Status::NotSupported)
            });
            continue;
        }
        let accel = if *soft { "soft" } else { "accel" };
        // Its status is set by `record`.
        let mut row = Row {
            mask: Some(if *soft { MASK_AES } else { "" }.into()),
            data_path: Some(datapath::label(t, s.path(t)).into()),
            ..Row::new(t, c, accel, Status::Failed)
        };
        let label = format!("{t} {c} {accel}");
        let mut measured = runs.measured;
        if let Some(e) = runs.failed {
            record(ctx, &mut row, &label, Err(e));
            code = 1;
        } else if measured.is_empty() {
            continue; // interrupted before it ran
        } else {
            let ones: Vec<One> = measured.iter().map(|m| one(m.ping.as_ref(), &m.transfer)).collect();
            let hostile = measured[0].hostile.take();
            let mut shown = measured.swap_remove(repeats::representative(&ones));
            shown.hostile = hostile;
            if record(ctx, &mut row, &label, Ok(shown)) {
                code = 1;
            }
            row.repeats = repeats::summarize(&ones, base_spread.as_ref());
        }
        rows.push(row);
    }
    Ok((rows, code))
}
