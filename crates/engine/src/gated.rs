//! The one way a command that measures gets its subjects ([`gated`]): discover the
//! catalogue through the context's workers, say which providers are missing, pick the
//! user's selection, gate every picked subject with a progress step per verdict, and hand
//! back the verdicts with the subjects split into those that passed and those that did not.
//! `run`, `verify`, `ab`, `ct`, `profile`, `micro`, `add` and the TLS driver all go
//! through it, so a subject is never measured without its verdict.

use anyhow::Result;
use cryptoscope_catalogue::descriptor::Descriptor;
use cryptoscope_model::GateStatus;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::args::{gate_settings_depth, GateArgs};
use crate::catalog::Catalogue;
use crate::context::Ctx;
use crate::gating::{gate_all, GateSettings, Verdict};
use crate::ui::{warn_missing, Progress};
use crate::util;

/// How the gate runs: the known-answer data, how much of it (`single` or `all`), and the
/// deadline of each worker call.
pub struct GateOptions {
    pub vectors: PathBuf,
    pub depth: String,
    pub timeout: Duration,
}

impl GateOptions {
    /// From `--vectors`, `--kat` and `--timeout` (`quick`: one KAT entry unless `--kat`
    /// says otherwise).
    pub fn of(ctx: &Ctx, g: &GateArgs, quick: bool) -> Result<GateOptions> {
        Ok(GateOptions {
            vectors: util::vectors_dir(&ctx.env, g.vectors.as_deref())?,
            depth: gate_settings_depth(g, quick),
            timeout: Duration::from_secs_f64(g.timeout),
        })
    }

    /// The settings [`gate_all`] takes.
    pub fn settings(&self) -> GateSettings<'_> {
        GateSettings {
            vectors: &self.vectors,
            depth: &self.depth,
            timeout: self.timeout,
        }
    }
}

/// The picked subjects and the gate's verdict on each.
pub struct Gated {
    pub cat: Catalogue,
    /// In the order they were picked.
    pub picked: Vec<Descriptor>,
    pub verdicts: BTreeMap<String, Verdict>,
}

impl Gated {
    /// The verdict on a picked subject.
    pub fn verdict(&self, d: &Descriptor) -> &Verdict {
        &self.verdicts[&d.id]
    }

    /// Whether the subject passed its gate (only those are measured).
    pub fn passed(&self, d: &Descriptor) -> bool {
        self.verdict(d).status == GateStatus::Pass
    }

    /// What to say about the subjects that did not pass, `what` being what was not done to
    /// them ("measured", "profiled"): failures (a gate failed, a worker crashed or timed
    /// out: the command exits 1) and notes (unavailable, skipped: it does not).
    pub fn not_passed(&self, what: &str) -> (Vec<String>, Vec<String>) {
        let (mut failures, mut notes) = (Vec::new(), Vec::new());
        for d in self.picked.iter().filter(|d| !self.passed(d)) {
            let v = self.verdict(d);
            if v.status.is_failure() {
                failures.push(format!(
                    "{}: not {what}, gate {}: {}",
                    d.id,
                    v.status.as_str(),
                    v.detail
                ));
            } else {
                notes.push(format!("{}: not {what} ({}: {})", d.id, v.status.as_str(), v.detail));
            }
        }
        (failures, notes)
    }
}

/// The catalogue and what was picked from it, not gated yet.
pub struct Selected {
    pub cat: Catalogue,
    pub picked: Vec<Descriptor>,
}

/// Discovers the catalogue (saying which providers are missing) and picks from it.
pub fn select(ctx: &Ctx, pick: impl FnOnce(&Catalogue) -> Result<Vec<Descriptor>>) -> Result<Selected> {
    let cat = Catalogue::discover(ctx)?;
    warn_missing(ctx, &cat);
    let picked = pick(&cat)?;
    Ok(Selected { cat, picked })
}

impl Selected {
    /// Gates every picked subject, a progress step per verdict.
    pub fn gate(self, gate: &GateOptions, pb: &mut Progress) -> Gated {
        let verdicts = gate_all(&self.cat, &self.picked, &gate.settings(), &mut |d, v| {
            pb.step(&format!("gate {}", d.id), v.status.as_str())
        });
        Gated {
            cat: self.cat,
            picked: self.picked,
            verdicts,
        }
    }
}

/// Discovers, picks (`pick` chooses from the catalogue), and gates what was picked. The
/// progress has `steps(picked)` steps in all, the gate's verdicts the first of them; the
/// command goes on with it. (`run`, which records the run between picking and gating,
/// takes the two halves: [`select`], then [`Selected::gate`].)
pub fn gated(
    ctx: &Ctx,
    gate: &GateOptions,
    pick: impl FnOnce(&Catalogue) -> Result<Vec<Descriptor>>,
    steps: impl FnOnce(&[Descriptor]) -> u64,
) -> Result<(Gated, Progress)> {
    let selected = select(ctx, pick)?;
    let mut pb = Progress::new(steps(&selected.picked), ctx);
    Ok((selected.gate(gate, &mut pb), pb))
}
