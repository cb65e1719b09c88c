//! Runs the correctness gate over a selection, one worker process per subject.
//!
//! Subjects whose randomness the harness controls reproduce published KAT digests. A KEM
//! whose library keeps its own randomness (AWS-LC) is cross-checked: a subject of the same
//! algorithm that passed its digest writes KAT entries, the subject under test
//! decapsulates them and encapsulates to their public keys, and the verified subject
//! decapsulates those. A signature scheme with its own randomness (AWS-LC's ML-DSA) is
//! cross-checked the same way: it verifies the reference's KAT signatures and signs their
//! messages for the reference to verify. The reference is the first candidate (selected
//! subjects first, then the catalogue's) that passes its own gate; one gated from the
//! catalogue for that purpose only is not reported or measured.

use cryptoscope_catalogue::descriptor::{Availability, Descriptor, Family, Randomness};
use cryptoscope_catalogue::gate::GateReport;
use cryptoscope_model::protocol::Request;
use cryptoscope_model::GateStatus;
use cryptoscope_worker::Event;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::catalog::Catalogue;
use crate::workers::Outcome;

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
    let outcome = cat.transport.call(bin, &request, s.timeout, &mut |ev| {
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
    // The candidate references per algorithm that some selected subject must be
    // cross-checked against: the selected ones first, then the rest of the catalogue. A
    // subject is checked against the first that passes its own gate (a reference that
    // fails, such as an ML-DSA whose verifier accepts Wycheproof's invalid signatures, is
    // passed over, and the cross-check says which it used).
    let mut candidates: BTreeMap<String, Vec<Descriptor>> = BTreeMap::new();
    for d in selected.iter().filter(|d| needs_ref(d)) {
        if candidates.contains_key(&d.algorithm) {
            continue;
        }
        let of_alg = |r: &&Descriptor| r.algorithm == d.algorithm && can_ref(r);
        let mut list: Vec<Descriptor> = selected.iter().filter(of_alg).cloned().collect();
        list.extend(
            cat.subjects
                .iter()
                .filter(of_alg)
                .filter(|r| !selected.iter().any(|x| x.id == r.id))
                .cloned(),
        );
        candidates.insert(d.algorithm.clone(), list);
    }
    let keeps = |id: &str| GateFiles {
        keep: CROSSCHECK_ENTRIES,
        entries_out: Some(id_file(&tmp, id, "entries")),
        ..GateFiles::default()
    };
    let mut order: Vec<&Descriptor> = selected.iter().collect();
    order.sort_by_key(|d| needs_ref(d));
    for d in order {
        let v = if let Availability::Unavailable(reason) = &d.availability {
            Verdict::new(GateStatus::Unavailable, reason.clone())
        } else if needs_ref(d) {
            let list = candidates.get(&d.algorithm).map(Vec::as_slice).unwrap_or_default();
            // Candidates outside the selection are gated here, silently, until one passes.
            let mut reference = None;
            for r in list {
                if !verdicts.contains_key(&r.id) {
                    let v = run_gate(cat, r, s, keeps(&r.id));
                    verdicts.insert(r.id.clone(), v);
                }
                if verdicts.get(&r.id).is_some_and(|v| v.status == GateStatus::Pass) {
                    reference = Some(r);
                    break;
                }
            }
            match (reference, list.first()) {
                (Some(r), _) => crosscheck(cat, d, r, s, &tmp),
                (None, Some(first)) => Verdict::new(
                    GateStatus::Fail,
                    format!(
                        "no cross-check reference passed its own gate ({} candidates; {}: {})",
                        list.len(),
                        first.id,
                        verdicts.get(&first.id).map(|v| v.detail.as_str()).unwrap_or("not gated")
                    ),
                ),
                (None, None) => Verdict::new(GateStatus::Fail, "randomness not injectable and no implementation with a published KAT digest is available to cross-check against"),
            }
        } else {
            let is_ref = candidates.values().flatten().any(|r| r.id == d.id);
            run_gate(cat, d, s, if is_ref { keeps(&d.id) } else { GateFiles::default() })
        };
        progress(d, &v);
        verdicts.insert(d.id.clone(), v);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    verdicts
}

/// Cross-checks `d` against the reference `r`, which passed its own gate and kept its KAT
/// entries.
fn crosscheck(cat: &Catalogue, d: &Descriptor, r: &Descriptor, s: &GateSettings, tmp: &Path) -> Verdict {
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
    let outcome = cat.transport.call(bin, &request, s.timeout, &mut |ev| {
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
