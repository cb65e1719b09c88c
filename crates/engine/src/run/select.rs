//! Which subjects a run measures: the selection picked from the catalogue, this shard's
//! slice of it, and — when resuming — what is already stored and kept.

use super::settings::Settings;
use super::Resumed;
use crate::catalog::Catalogue;
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
    /// Operations a resumed run keeps, per subject measured again: not measured twice.
    pub(crate) stored_ops: BTreeMap<String, Vec<String>>,
}

/// Picks the run's subjects; a shard that selects nothing and a baseline no subject has
/// are usage errors.
pub(crate) fn pick(s: &Settings, cat: &Catalogue, resumed: Option<&Resumed>, quiet: bool) -> Result<Picked> {
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
            stored_ops: BTreeMap::new(),
        }),
        Some(r) => Ok(split_resumed(s, picked, order, r, quiet)),
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

/// Resuming: subjects whose every operation is stored (all visits of a multi-round run) are
/// kept as stored; the others are gated and measured from the start.
fn split_resumed(s: &Settings, picked: Vec<Descriptor>, order: Vec<String>, r: &Resumed, quiet: bool) -> Picked {
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
    if !quiet {
        eprintln!(
            "{} of {} subjects are stored and kept; measuring the other {}",
            done.len(),
            done.len() + todo.len(),
            todo.len()
        );
    }
    Picked {
        todo,
        order,
        kept,
        stored_ops,
    }
}
