//! Which subjects a run measures: the selection picked from the catalogue, this shard's
//! slice of it, and — when resuming — what is already stored and kept.

use super::settings::Settings;
use super::Resumed;
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::ui::usage;
use anyhow::Result;
use cryptoscope_catalogue::Descriptor;
use cryptoscope_model::{GateStatus, ResultRow};
use std::collections::BTreeMap;

/// The subjects of a run.
pub(crate) struct Picked {
    /// To gate and measure, in catalogue order.
    pub(crate) todo: Vec<Descriptor>,
    /// Every selected subject's id, in catalogue order (a resumed run's rows are sorted
    /// by it).
    pub(crate) order: Vec<String>,
    /// Rows a resumed run keeps as stored.
    pub(crate) kept: Vec<ResultRow>,
    /// Rows of a resumed multi-round run's subjects that stopped between visits: every
    /// operation with the same visits stored, fewer than the run's rounds. Their remaining
    /// visits are measured and merged into them.
    pub(crate) partial: Vec<ResultRow>,
    /// Operations a resumed run keeps, per subject measured again: not measured twice.
    pub(crate) stored_ops: BTreeMap<String, Vec<String>>,
}

/// Picks the run's subjects; a shard that selects nothing and a baseline no subject has
/// are usage errors.
pub(crate) fn pick(s: &Settings, cat: &Catalogue, resumed: Option<&Resumed>, ctx: &Ctx) -> Result<Picked> {
    let mut picked = s.selection.pick(cat)?;
    if let Some((k, n)) = s.shard {
        // Catalogue order is deterministic, so every shard computes the same split.
        picked = picked
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % n == k - 1)
            .map(|(_, d)| d)
            .collect();
        if picked.is_empty() {
            return Err(usage(format!("--shard {k}/{n}: this slice of the selection is empty")));
        }
    }
    if let Some(b) = &s.args.baseline {
        check_baseline(&picked, b)?;
    }
    let order: Vec<String> = picked.iter().map(|d| d.id.clone()).collect();
    match resumed {
        None => Ok(Picked {
            todo: picked,
            order,
            kept: Vec::new(),
            partial: Vec::new(),
            stored_ops: BTreeMap::new(),
        }),
        Some(r) => Ok(split_resumed(s, picked, order, r, ctx)),
    }
}

fn check_baseline(picked: &[Descriptor], b: &str) -> Result<()> {
    if picked.iter().any(|d| match b.split_once('/') {
        Some((p, i)) => d.provider == p && d.implementation == i,
        None => d.implementation == *b,
    }) {
        return Ok(());
    }
    let mut known: Vec<String> = picked.iter().map(|d| d.implementation.clone()).collect();
    known.sort();
    known.dedup();
    Err(usage(format!(
        "--baseline {b}: no selected subject has that implementation (selected: {})",
        known.join(", ")
    )))
}

/// Visits stored in a row: one before a second is merged in, then one per entry.
pub(crate) fn visits_in(x: &ResultRow) -> usize {
    match (x.visits.len(), x.median_ns.is_some()) {
        (0, true) => 1,
        (n, _) => n,
    }
}

/// The rows of `d` a multi-round run stored between two of its visits: every operation
/// passed and holds the same number of visits, at least one and fewer than `rounds`. None
/// when the run stopped while storing one visit's rows (their counts differ): the subject
/// then starts again, so that no operation gets a visit more than the others.
fn between_visits(d: &Descriptor, lengths: &Option<Vec<u32>>, rows: &[ResultRow], rounds: usize) -> Vec<ResultRow> {
    let stored: Vec<&ResultRow> = super::measure::operations(d, lengths.as_deref())
        .iter()
        .filter_map(|op| rows.iter().find(|x| x.subject == d.id && x.operation == op.as_str()))
        .collect();
    let n = stored.first().map_or(0, |x| visits_in(x));
    let whole = stored.len() == super::measure::operations(d, lengths.as_deref()).len()
        && stored.iter().all(|x| x.gate == GateStatus::Pass && visits_in(x) == n);
    if whole && n >= 1 && n < rounds {
        stored.into_iter().cloned().collect()
    } else {
        Vec::new()
    }
}

/// Resuming: subjects whose every operation is stored (all visits of a multi-round run) are
/// kept as stored; the others are gated and measured from the start, or — a multi-round
/// subject stopped between visits — from its next visit.
fn split_resumed(s: &Settings, picked: Vec<Descriptor>, order: Vec<String>, r: &Resumed, ctx: &Ctx) -> Picked {
    let quiet = ctx.quiet;
    let want_rounds = s.rounds;
    let complete = |d: &Descriptor| -> bool {
        let ops: Vec<String> = super::measure::operations(d, s.lengths.as_deref())
            .iter()
            .map(|o| o.as_str().to_string())
            .collect();
        ops.iter().all(|op| {
            r.rows.iter().any(|x| {
                x.subject == d.id
                    && &x.operation == op
                    && (x.gate != GateStatus::Pass
                        || want_rounds <= 1
                        || x.visits.len() == want_rounds
                        || x.median_ns.is_none())
            })
        })
    };
    let (done, todo): (Vec<_>, Vec<_>) = picked.into_iter().partition(|d| complete(d));
    // One-round runs also keep the operations stored of a subject interrupted halfway and
    // measure only the others; a multi-round subject starts again (its rows hold merged
    // visits).
    let kept: Vec<ResultRow> = r
        .rows
        .iter()
        .filter(|x| done.iter().any(|d| d.id == x.subject) || (want_rounds <= 1 && x.gate == GateStatus::Pass))
        .cloned()
        .collect();
    let mut stored_ops: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if want_rounds <= 1 {
        for x in kept.iter().filter(|x| todo.iter().any(|d| d.id == x.subject)) {
            stored_ops
                .entry(x.subject.clone())
                .or_default()
                .push(x.operation.clone());
        }
    }
    let partial = if want_rounds > 1 {
        todo.iter()
            .flat_map(|d| between_visits(d, &s.lengths, &r.rows, want_rounds))
            .collect()
    } else {
        Vec::new()
    };
    let continued = todo
        .iter()
        .filter(|d| partial.iter().any(|x: &ResultRow| x.subject == d.id))
        .count();
    if !quiet {
        errln!(
            ctx,
            "{} of {} subjects are stored and kept; measuring the other {}{}",
            done.len(),
            done.len() + todo.len(),
            todo.len(),
            match continued {
                0 => String::new(),
                n => format!(" ({n} from the visits they stored)"),
            }
        );
    }
    Picked {
        todo,
        order,
        kept,
        partial,
        stored_ops,
    }
}
