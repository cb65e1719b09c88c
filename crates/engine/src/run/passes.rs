//! The passes that run apart from timing — memory, throughput against threads, perf
//! counters, exact instructions — each over every gated subject, one progress step each.
//! Their figures go into the rows of the timing pass (or into rows of their own when only
//! they run).

use super::settings::Settings;
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gating::Verdict;
use crate::ui::{usage, Progress};
use crate::{counters, memory, scale};
use anyhow::Result;
use cryptoscope_catalogue::Descriptor;
use cryptoscope_model::{GateStatus, ResultRow};
use std::collections::BTreeMap;

/// Per-subject results of a pass: operation -> outcome.
pub(crate) type PassResults<T> = BTreeMap<String, BTreeMap<String, T>>;

/// What a pass measures for one subject: operation -> outcome.
pub(crate) type PassFn<'a, T> = dyn FnMut(&Descriptor, &Progress) -> Result<BTreeMap<String, T>> + 'a;

/// Runs one pass (memory, scale) over every gated subject, one progress step each.
pub(crate) fn pass<T, E>(
    picked: &[Descriptor],
    verdicts: &BTreeMap<String, Verdict>,
    pb: &mut Progress,
    name: &str,
    measure: &mut PassFn<'_, std::result::Result<T, E>>,
) -> Result<PassResults<std::result::Result<T, E>>> {
    let mut out = PassResults::new();
    for d in picked {
        let v = &verdicts[&d.id];
        let note = if v.status == GateStatus::Pass {
            let m = measure(d, pb)?;
            let ok = m.values().filter(|o| o.is_ok()).count();
            let note = format!("{ok} of {} operations", m.len());
            out.insert(d.id.clone(), m);
            note
        } else {
            format!("not measured ({})", v.status.as_str())
        };
        pb.step(&format!("{name} {}", d.id), &note);
    }
    Ok(out)
}

/// What the passes apart from timing found, per subject and operation.
#[derive(Default)]
pub(crate) struct Extras {
    code: BTreeMap<String, (u64, String)>,
    memory: PassResults<memory::OpOutcome>,
    scaled: PassResults<scale::OpOutcome>,
    counted: PassResults<counters::OpOutcome>,
    instructions: PassResults<counters::InstrOutcome>,
}

impl Extras {
    /// Runs the passes the settings ask for, in order: memory, scale, counters,
    /// instructions.
    pub(crate) fn measure(
        ctx: &Ctx,
        s: &Settings,
        cat: &Catalogue,
        picked: &[Descriptor],
        verdicts: &BTreeMap<String, Verdict>,
        pb: &mut Progress,
    ) -> Result<Extras> {
        let timeout = s.timeout;
        let mut x = Extras::default();
        if s.with_memory {
            let preload = memory::preload_library(&ctx.env).map_err(|e| usage(format!("{e:#}")))?;
            let mut sizes = memory::CodeSizes::default();
            for d in picked {
                if let Some(c) = cat.worker(&d.provider).and_then(|bin| sizes.of(bin, d)) {
                    x.code.insert(d.id.clone(), c);
                }
            }
            let calls = s.args.memory_calls;
            x.memory = pass(picked, verdicts, pb, "memory", &mut |d, _| {
                memory::measure(cat, d, &preload, calls, timeout)
            })?;
        }
        if let Some(ss) = s.scale {
            x.scaled = pass(picked, verdicts, pb, "scale", &mut |d, pb| {
                scale::measure(cat, d, ss, timeout, &mut |what| pb.message(what))
            })?;
        }
        if let Some(ev) = &s.events {
            x.counted = pass(picked, verdicts, pb, "counters", &mut |d, _| {
                counters::measure(cat, d, ev, 101, timeout)
            })?;
        }
        if s.args.instructions {
            x.instructions = pass(picked, verdicts, pb, "instructions", &mut |d, pb| {
                pb.message(&format!("callgrind {}", d.id));
                counters::instructions(ctx, cat, d, timeout)
            })?;
        }
        Ok(x)
    }

    /// Puts what the passes found for this row's subject and operation into it.
    pub(crate) fn decorate(&self, row: &mut ResultRow) {
        let (counted, instructions) = (at(&self.counted, row), at(&self.instructions, row));
        counters::apply(row, counted, instructions);
        let (memory, code) = (at(&self.memory, row), self.code.get(&row.subject));
        memory::apply(row, memory, code);
        scale::apply(row, at(&self.scaled, row));
    }
}

/// A pass's outcome for the row's subject and operation.
fn at<'m, T>(m: &'m PassResults<T>, row: &ResultRow) -> Option<&'m T> {
    m.get(&row.subject).and_then(|m| m.get(&row.operation))
}
