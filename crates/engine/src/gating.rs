//! Runs the correctness gate over a selection, one worker process per subject.
//!
//! Subjects whose randomness the harness controls reproduce published KAT digests. A KEM
//! whose library keeps its own randomness (AWS-LC) is cross-checked: a subject of the same
//! algorithm that passed its digest writes KAT entries, the subject under test
//! decapsulates them and encapsulates to their public keys, and the verified subject
//! decapsulates those. A signature scheme with its own randomness (AWS-LC's ML-DSA) is
//! cross-checked the same way: it verifies the reference's KAT signatures and signs their
//! messages for the reference to verify. If no selected subject can serve as reference,
//! one is gated from the catalogue for that purpose only (it is not reported or measured).

use cryptoscope_catalogue::descriptor::{Availability, Descriptor, Family, Randomness};
use cryptoscope_catalogue::gate::GateReport;
use cryptoscope_model::protocol::Request;
use cryptoscope_model::GateStatus;
use cryptoscope_worker::Event;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::workers::{self, Outcome};

/// The gate's verdict on one subject.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub status: GateStatus,
    pub detail: String,
    /// The gate report's input-validation verdict ([`GateReport::input_check`]).
    pub input_check: Option<String>,
}

impl Verdict {
    pub fn new(status: GateStatus, detail: impl Into<String>) -> Verdict {
        Verdict {
            status,
            detail: detail.into(),
            input_check: None,
        }
    }
}

/// Gate settings.
pub struct GateSettings<'a> {
    pub vectors: &'a Path,
    /// "single" or "all".
    pub depth: &'a str,
    pub timeout: Duration,
}

/// Number of KAT entries a reference keeps for cross-checks.
const CROSSCHECK_ENTRIES: usize = 3;

fn id_file(dir: &Path, id: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{}.{suffix}.json", id.replace('/', "_")))
}

/// What a gate call keeps or uses beyond the report: KAT entries written for cross-checks
/// (`keep` of them to `entries_out`), or a reference's entries and where to write this
/// subject's encapsulations.
#[derive(Default)]
struct GateFiles {
    keep: usize,
    entries_out: Option<PathBuf>,
    reference: Option<PathBuf>,
    encaps_out: Option<PathBuf>,
}

fn run_gate(cat: &Catalogue, d: &Descriptor, s: &GateSettings, extra: GateFiles) -> Verdict {
    let Some(bin) = cat.worker(&d.provider) else {
        return Verdict::new(
            GateStatus::Unavailable,
            format!("no worker for provider {}", d.provider),
        );
    };
    let request = Request::Gate {
        subject: d.id.clone(),
        vectors: s.vectors.to_path_buf(),
        depth: s.depth.into(),
        keep: extra.keep,
        entries_out: extra.entries_out,
        reference: extra.reference,
        encaps_out: extra.encaps_out,
    };
    let mut report: Option<GateReport> = None;
    let outcome = workers::call(bin, &request, s.timeout, &mut |ev| {
        if let Event::Gate { report: r, .. } = ev {
            report = Some(r);
        }
    });
    verdict_of(outcome, report)
}

fn verdict_of(outcome: Outcome, report: Option<GateReport>) -> Verdict {
    match (outcome, report) {
        (Outcome::Completed, Some(r)) => Verdict {
            input_check: r.input_check.clone(),
            ..Verdict::new(if r.passed() { GateStatus::Pass } else { GateStatus::Fail }, r.detail())
        },
        (Outcome::Completed, None) => Verdict::new(GateStatus::Fail, "worker reported no gate result"),
        (Outcome::Crashed(s), _) => Verdict::new(GateStatus::Crashed, format!("crashed during the gate: {s}")),
        (Outcome::TimedOut(t), _) => {
            Verdict::new(GateStatus::Timeout, format!("gate timed out after {} s", t.as_secs()))
        }
        (Outcome::Failed(e), _) => Verdict::new(GateStatus::Fail, e),
    }
}

/// Gates `selected`, calling `progress` after each subject. Returns a verdict per id.
pub fn gate_all(
    cat: &Catalogue,
    selected: &[Descriptor],
    s: &GateSettings,
    progress: &mut dyn FnMut(&Descriptor, &Verdict),
) -> BTreeMap<String, Verdict> {
    let tmp = std::env::temp_dir().join(format!("cryptoscope-gate-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&tmp);
    let mut verdicts = BTreeMap::new();
    // A subject with its own randomness is cross-checked against one that reproduced the
    // published KAT digest: always for a KEM; for a signature scheme when its algorithm has
    // such a subject (classical schemes have no KAT digest: their vectors check them).
    let can_ref = |d: &Descriptor| {
        matches!(d.family, Family::Kem | Family::Sig)
            && d.randomness == Randomness::Harness
            && d.kat.is_some()
            && d.is_available()
    };
    let needs_ref = |d: &Descriptor| {
        let own = d.randomness == Randomness::Internal && d.is_available();
        match d.family {
            Family::Kem => own,
            Family::Sig => own && cat.subjects.iter().any(|r| r.algorithm == d.algorithm && can_ref(r)),
            _ => false,
        }
    };
    // A reference per algorithm that some selected subject must be cross-checked against.
    let mut references: BTreeMap<String, Descriptor> = BTreeMap::new();
    for d in selected.iter().filter(|d| needs_ref(d)) {
        if references.contains_key(&d.algorithm) {
            continue;
        }
        let pick = selected
            .iter()
            .find(|r| r.algorithm == d.algorithm && can_ref(r))
            .or_else(|| cat.subjects.iter().find(|r| r.algorithm == d.algorithm && can_ref(r)));
        if let Some(r) = pick {
            references.insert(d.algorithm.clone(), r.clone());
        }
    }
    // Extra references not in the selection are gated first, silently.
    for r in references.values() {
        if !selected.iter().any(|d| d.id == r.id) {
            let extra = GateFiles {
                keep: CROSSCHECK_ENTRIES,
                entries_out: Some(id_file(&tmp, &r.id, "entries")),
                ..GateFiles::default()
            };
            let v = run_gate(cat, r, s, extra);
            verdicts.insert(r.id.clone(), v);
        }
    }
    let mut order: Vec<&Descriptor> = selected.iter().collect();
    order.sort_by_key(|d| needs_ref(d));
    for d in order {
        let v = if let Availability::Unavailable(reason) = &d.availability {
            Verdict::new(GateStatus::Unavailable, reason.clone())
        } else if needs_ref(d) {
            crosscheck(cat, d, references.get(&d.algorithm), &verdicts, s, &tmp)
        } else {
            let is_ref = references.values().any(|r| r.id == d.id);
            let extra = if is_ref {
                GateFiles {
                    keep: CROSSCHECK_ENTRIES,
                    entries_out: Some(id_file(&tmp, &d.id, "entries")),
                    ..GateFiles::default()
                }
            } else {
                GateFiles::default()
            };
            run_gate(cat, d, s, extra)
        };
        progress(d, &v);
        verdicts.insert(d.id.clone(), v);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    verdicts
}

fn crosscheck(
    cat: &Catalogue,
    d: &Descriptor,
    reference: Option<&Descriptor>,
    verdicts: &BTreeMap<String, Verdict>,
    s: &GateSettings,
    tmp: &Path,
) -> Verdict {
    let Some(r) = reference else {
        return Verdict::new(GateStatus::Fail, "randomness not injectable and no implementation with a published KAT digest is available to cross-check against");
    };
    match verdicts.get(&r.id) {
        Some(v) if v.status == GateStatus::Pass => {}
        Some(v) => {
            return Verdict::new(
                GateStatus::Fail,
                format!("cross-check reference {} did not pass its own gate: {}", r.id, v.detail),
            )
        }
        None => {
            return Verdict::new(
                GateStatus::Fail,
                format!("cross-check reference {} was not gated", r.id),
            )
        }
    }
    let entries = id_file(tmp, &r.id, "entries");
    let encaps = id_file(tmp, &d.id, "encaps");
    let first = run_gate(
        cat,
        d,
        s,
        GateFiles {
            reference: Some(entries.clone()),
            encaps_out: Some(encaps.clone()),
            ..GateFiles::default()
        },
    );
    if first.status != GateStatus::Pass {
        return first;
    }
    let Some(bin) = cat.worker(&r.provider) else {
        return Verdict::new(GateStatus::Fail, format!("no worker for reference {}", r.id));
    };
    let request = Request::VerifyEncaps {
        subject: r.id.clone(),
        reference: entries,
        encaps,
    };
    let mut check = None;
    let outcome = workers::call(bin, &request, s.timeout, &mut |ev| {
        if let Event::Verify { check: c, .. } = ev {
            check = Some(c);
        }
    });
    match (outcome, check) {
        (Outcome::Completed, Some(c)) if c.ok => Verdict {
            input_check: first.input_check.clone(),
            ..Verdict::new(
                GateStatus::Pass,
                format!("{}; {} (reference {})", first.detail, c.detail, r.id),
            )
        },
        (Outcome::Completed, Some(c)) => Verdict::new(GateStatus::Fail, format!("{}: {}", c.name, c.detail)),
        (o, _) => Verdict::new(
            GateStatus::Fail,
            format!("cross-check with {} failed: {}", r.id, o.describe()),
        ),
    }
}
