//! The timing pass: every gated subject measured in its worker, once or in rounds (visits
//! spread over the run, their samples merged), or — when only the memory or scale pass ran —
//! rows without timings that carry those passes' figures.

use super::measure::{self, MeasureSettings};
use super::passes::Extras;
use super::report::Reporter;
use super::settings::Settings;
use crate::catalog::Catalogue;
use crate::gating::Verdict;
use crate::ui::Progress;
use anyhow::Result;
use cryptoscope_catalogue::Descriptor;
use cryptoscope_model::{GateStatus, ResultRow};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

/// What every part of the timing pass reads.
pub(crate) struct Pass<'a> {
    pub(crate) cat: &'a Catalogue,
    pub(crate) picked: &'a [Descriptor],
    pub(crate) verdicts: &'a BTreeMap<String, Verdict>,
    pub(crate) extras: &'a Extras,
    pub(crate) settings: &'a MeasureSettings,
    /// A resumed run's rows of subjects stopped between visits: their next visits are
    /// merged into them ([`super::select::Picked::partial`]).
    pub(crate) partial: &'a [ResultRow],
}

impl Pass<'_> {
    /// Runs the pass the settings ask for; every row goes to `out` as soon as it exists.
    pub(crate) fn run(&self, s: &Settings, pb: &mut Progress, out: &mut dyn Reporter) -> Result<Vec<ResultRow>> {
        if !s.timing {
            Ok(self.untimed(s, out))
        } else if s.rounds > 1 {
            self.rounds(s.rounds, s.args.samples, pb, out)
        } else {
            self.once(pb, out)
        }
    }

    /// Rows without timings: the memory or scale pass's figures, one per operation.
    fn untimed(&self, s: &Settings, out: &mut dyn Reporter) -> Vec<ResultRow> {
        let mut rows = Vec::new();
        for d in self.picked {
            let v = &self.verdicts[&d.id];
            for o in d.operations() {
                if s.scale
                    .and_then(|s| s.ops.as_ref())
                    .is_some_and(|ops| !ops.contains(&o))
                {
                    continue;
                }
                let mut row = ResultRow::without_numbers(d, o.as_str(), v.status, v.detail.clone());
                row.input_check = v.input_check.clone();
                self.extras.decorate(&mut row);
                out.result(&row);
                rows.push(row);
            }
        }
        rows
    }

    /// Each subject measured once, in catalogue order.
    fn once(&self, pb: &mut Progress, out: &mut dyn Reporter) -> Result<Vec<ResultRow>> {
        let mut rows = Vec::new();
        for d in self.picked {
            let v = &self.verdicts[&d.id];
            let measured = measure::measure(self.cat, d, v, self.settings, &mut |row| {
                self.extras.decorate(row);
                out.result(row);
            })?;
            let note = if v.status == GateStatus::Pass {
                let n = measured.iter().filter(|r| r.median_ns.is_some()).count();
                format!("{n} of {} operations measured", measured.len())
            } else {
                format!("not measured ({})", v.status.as_str())
            };
            rows.extend(measured);
            pb.step(&format!("measure {}", d.id), &note);
        }
        Ok(rows)
    }

    /// Every subject visited `r` times over the run; each visit's samples are merged into the
    /// subject's rows, which are stored after every visit.
    fn rounds(
        &self,
        r: usize,
        samples: Option<usize>,
        pb: &mut Progress,
        out: &mut dyn Reporter,
    ) -> Result<Vec<ResultRow>> {
        let mut visit = visit_settings(self.settings, r);
        let mut acc: BTreeMap<(String, String), ResultRow> = BTreeMap::new();
        // A resumed subject's stored visits count as its first rounds.
        let mut visited: BTreeMap<String, usize> = BTreeMap::new();
        for row in self.partial {
            visited.insert(row.subject.clone(), super::select::visits_in(row));
            acc.insert((row.subject.clone(), row.operation.clone()), row.clone());
        }
        for round in 0..r {
            if let Some(n) = samples {
                let per = visit_samples(n, r, round);
                (visit.plan.min_samples, visit.plan.max_samples, visit.plan.floor_samples) = (per, per, per);
            }
            for d in self
                .picked
                .iter()
                .filter(|d| self.verdicts[&d.id].status == GateStatus::Pass)
            {
                if round < visited.get(&d.id).copied().unwrap_or(0) {
                    measure::skip_visit(self.cat, d, &visit);
                    continue;
                }
                let measured = measure::measure(self.cat, d, &self.verdicts[&d.id], &visit, &mut |row| {
                    self.extras.decorate(row)
                })?;
                for row in measured {
                    let merged = match acc.entry((row.subject.clone(), row.operation.clone())) {
                        Entry::Vacant(e) => e.insert(row),
                        Entry::Occupied(e) => {
                            let m = e.into_mut();
                            measure::merge_visit(m, row);
                            m
                        }
                    };
                    // Stored after every visit, so an interrupted run keeps what it measured.
                    out.result(merged);
                }
                if round + 1 < r {
                    pb.step_quiet();
                }
            }
        }
        let mut rows = Vec::new();
        for d in self.picked {
            let v = &self.verdicts[&d.id];
            let measured: Vec<ResultRow> = if v.status == GateStatus::Pass {
                // The operations measured (--lengths, not a hash's default lengths).
                measure::operations(d, self.settings.lengths.as_deref())
                    .iter()
                    .filter_map(|o| acc.remove(&(d.id.clone(), o.as_str().to_string())))
                    .collect()
            } else {
                measure::measure(self.cat, d, v, self.settings, &mut |row| {
                    self.extras.decorate(row);
                    out.result(row);
                })?
            };
            let n = measured.iter().filter(|r| r.median_ns.is_some()).count();
            rows.extend(measured);
            pb.step(
                &format!("measure {} ({r} rounds)", d.id),
                &format!("{n} operations measured"),
            );
        }
        Ok(rows)
    }
}

/// One visit's share of the run's settings: budget and sample counts split `r` ways.
fn visit_settings(s: &MeasureSettings, r: usize) -> MeasureSettings {
    let mut visit = MeasureSettings {
        plan: s.plan.clone(),
        budget: s.budget / r as u32,
        lengths: s.lengths.clone(),
        stored: s.stored.clone(),
        ..*s
    };
    visit.plan.max_samples = visit.plan.max_samples.div_ceil(r);
    // At least 10 samples per visit (when the plan allows that many), so every visit has a
    // median of its own.
    visit.plan.min_samples = visit.plan.min_samples.div_ceil(r).max(10).min(visit.plan.max_samples);
    visit.plan.floor_samples = visit.plan.floor_samples.div_ceil(r).max(1);
    visit.plan.warmup /= r as u32;
    visit
}

/// `--samples N` over `r` rounds: exactly N in total, the first N mod R visits taking one
/// more.
fn visit_samples(n: usize, r: usize, round: usize) -> usize {
    n / r + usize::from(round < n % r)
}

#[cfg(test)]
mod tests {
    use super::visit_samples;

    #[test]
    fn exact_sample_counts_spread_over_the_rounds() {
        // What `cli/tests/cli.rs`'s rounds test asserted of a live run: 10 samples in
        // three visits are 4, 3 and 3.
        let split = |n: usize, r: usize| (0..r).map(|k| visit_samples(n, r, k)).collect::<Vec<_>>();
        assert_eq!(split(10, 3), [4, 3, 3]);
        assert_eq!(split(40, 2), [20, 20]);
        assert_eq!(split(5, 5), [1, 1, 1, 1, 1]);
        for (n, r) in [(7, 3), (100, 7), (3, 4)] {
            assert_eq!(split(n, r).iter().sum::<usize>(), n, "{n} over {r}");
        }
    }
}
