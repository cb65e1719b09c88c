//! The repository's Wycheproof files as part of a gate (`vectors/wycheproof/`).
//!
//! Every file that covers a gated algorithm is run at every depth, one check per file: the
//! check passes when every test does, and fails naming the tests that did not (their tcIds,
//! their flags and the first one's detail). Tests that only probe input validation that a
//! standard leaves to the caller (ML-KEM's modulus check on ek, FIPS 203 §7.2, and hash
//! check on dk, §7.3; ML-DSA's range check on a secret key's s1 and s2) never fail a check:
//! whether the subject refused them is recorded beside the gate as its verdict.
//!
//! Which tests probe input validation is read from each file (its flags, or for ML-KEM's
//! encapsulation keys their length), never from the implementation under test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::external::{self, mlkem::mlkem_lengths, Expect, External};
use crate::gate::Check;
use crate::traits::Kem;
use cryptoscope_model::events::FileOutcome;

/// The tests of a file that probe one kind of input validation, and what they present.
pub(crate) struct Beside<'a> {
    pub ids: BTreeSet<u64>,
    /// For the check's detail: "malformed secret keys".
    pub what: &'a str,
    /// Why they do not fail the check: "s1 or s2 out of range; FIPS 204 leaves …".
    pub why: &'a str,
}

/// A file's check, and whether the subject refused the file's input-validation tests
/// (`None` when the file has none, or the subject ran none of its tests).
pub(crate) fn file_check(f: &str, file: &External, o: &FileOutcome, beside: &Beside<'_>) -> (Check, Option<bool>) {
    let name = format!("wycheproof {f}");
    let numeric = |x: &external::TestFailure| x.id.parse::<u64>().ok();
    let (lax, other): (Vec<_>, Vec<_>) = o
        .failures
        .iter()
        .partition(|x| numeric(x).is_some_and(|id| beside.ids.contains(&id)));
    let validated = (!beside.ids.is_empty() && o.passed + o.failed > 0).then_some(lax.is_empty());
    let total = o.passed + o.acceptable + o.failed + o.skipped;
    if !other.is_empty() {
        let flags = flags_by_id(file);
        let mut seen = BTreeSet::new();
        for x in &other {
            if let Some(fl) = numeric(x).and_then(|id| flags.get(&id)) {
                seen.extend(fl.iter().map(String::as_str));
            }
        }
        let flagged = if seen.is_empty() {
            "no flags".to_string()
        } else {
            format!("flags {}", seen.into_iter().collect::<Vec<_>>().join(", "))
        };
        let first: String = other[0].detail.chars().take(100).collect();
        return (
            Check::fail(
                &name,
                format!(
                    "{} of {total} tests failed (tcId {}; {flagged}; {}: {first})",
                    other.len(),
                    id_list(&other),
                    other[0].id
                ),
            ),
            validated,
        );
    }
    let mut detail = format!("{f}: {} tests passed", o.passed);
    if o.acceptable > 0 {
        detail += &format!(", {} acceptable", o.acceptable);
    }
    if o.skipped > 0 {
        detail += &format!(", {} skipped", o.skipped);
    }
    if !lax.is_empty() {
        detail += &format!(
            ", {} {} accepted (tcId {}: {}; beside the gate)",
            lax.len(),
            beside.what,
            id_list(&lax),
            beside.why
        );
    }
    (Check::pass(&name, detail), validated)
}

/// tcIds as a short list: runs of three or more as ranges ("56, 57, 97–134").
fn id_list(failures: &[&external::TestFailure]) -> String {
    let mut ids: Vec<u64> = failures.iter().filter_map(|x| x.id.parse().ok()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            parts.push(format!("{}–{}", ids[i], ids[j]));
        } else {
            parts.extend(ids[i..=j].iter().map(u64::to_string));
        }
        i = j + 1;
    }
    // Failures without a numeric id (a record, "-") keep their names.
    parts.extend(
        failures
            .iter()
            .filter(|x| x.id.parse::<u64>().is_err())
            .map(|x| x.id.clone()),
    );
    parts.join(", ")
}

/// Every Wycheproof test's flags, by tcId (empty for files of other kinds).
pub(crate) fn flags_by_id(file: &External) -> BTreeMap<u64, Vec<String>> {
    let mut m = BTreeMap::new();
    match file {
        External::SigVerify(f) => {
            for t in f.groups.iter().flat_map(|g| &g.tests) {
                m.insert(t.case.tc_id, t.case.flags.clone());
            }
        }
        External::MldsaSign(f) => {
            for t in f.groups.iter().flat_map(|g| &g.tests) {
                m.insert(t.case.tc_id, t.case.flags.clone());
            }
        }
        External::MlkemEncaps(t) => m.extend(t.iter().map(|x| (x.case.tc_id, x.case.flags.clone()))),
        External::MlkemKeygen(t) => m.extend(t.iter().map(|x| (x.case.tc_id, x.case.flags.clone()))),
        External::MlkemDecaps(t) => m.extend(t.iter().map(|x| (x.case.tc_id, x.case.flags.clone()))),
        _ => {}
    }
    m
}

/// The tcIds of the tests that carry `flag`.
pub(crate) fn flagged(file: &External, flag: &str) -> BTreeSet<u64> {
    flags_by_id(file)
        .into_iter()
        .filter(|(_, f)| f.iter().any(|x| x == flag))
        .map(|(id, _)| id)
        .collect()
}

/// The repository's Wycheproof files for an ML-KEM parameter set: its four schemas
/// (key generation and decapsulation from a seed; encapsulation; key generation; and
/// decapsulation with an expanded key).
pub fn kem_files(algorithm: &str) -> Vec<String> {
    let Some(level) = algorithm.strip_prefix("ML-KEM-") else {
        return Vec::new();
    };
    if mlkem_lengths(algorithm).is_none() {
        return Vec::new();
    }
    ["test", "encaps_test", "keygen_seed_test", "semi_expanded_decaps_test"]
        .iter()
        .map(|schema| format!("mlkem_{level}_{schema}.json"))
        .collect()
}

/// The Wycheproof flag of decapsulation keys whose embedded H(ek) does not match their ek:
/// FIPS 203 §7.3's hash check refuses them.
const HASH_CHECK: &str = "InvalidDecapsulationKey";

/// An ML-KEM subject's Wycheproof checks, and its input-validation verdict: how it treats
/// an encapsulation key that fails the modulus check (the encapsulation file's invalid keys
/// of the right length: a key of that length can be invalid for no other reason) and a
/// decapsulation key that fails the hash check (the decapsulation file's tests flagged
/// `InvalidDecapsulationKey`). FIPS 203 lets both checks be made by the caller, so neither
/// fails the gate. `None` for other algorithms.
pub(crate) fn kem_checks(kem: &dyn Kem, dir: &Path) -> Option<(Vec<Check>, Option<String>)> {
    let d = kem.descriptor();
    let files = kem_files(&d.algorithm);
    if files.is_empty() {
        return None;
    }
    let lengths = mlkem_lengths(&d.algorithm)?;
    let (mut ek, mut dk) = (None, None);
    let mut checks = Vec::new();
    for f in &files {
        let file = match external::load(&dir.join("wycheproof").join(f)) {
            Ok(x) => x,
            Err(e) => {
                checks.push(Check::fail(&format!("wycheproof {f}"), e.to_string()));
                continue;
            }
        };
        let none = || BTreeSet::new();
        let (o, beside) = match &file {
            External::Mlkem(t) => (external::run_mlkem(kem, t, None).0, none()),
            External::MlkemKeygen(t) => (external::run_mlkem_keygen(kem, t), none()),
            External::MlkemEncaps(t) => {
                let unreduced = t
                    .iter()
                    .filter(|x| x.case.result == Expect::Invalid && x.ek.len() == lengths.ek)
                    .map(|x| x.case.tc_id)
                    .collect();
                (external::run_mlkem_encaps(kem, t), unreduced)
            }
            External::MlkemDecaps(t) => (external::run_mlkem_decaps(kem, t), flagged(&file, HASH_CHECK)),
            _ => {
                checks.push(Check::fail(
                    &format!("wycheproof {f}"),
                    format!("{f} is not a Wycheproof ML-KEM file"),
                ));
                continue;
            }
        };
        let (what, why) = if matches!(file, External::MlkemEncaps(_)) {
            (
                "unreduced encapsulation keys",
                "FIPS 203 §7.2's modulus check, which the caller may make",
            )
        } else {
            (
                "decapsulation keys with a wrong H(ek)",
                "FIPS 203 §7.3's hash check, which the caller may make",
            )
        };
        let (check, validated) = file_check(f, &file, &o, &Beside { ids: beside, what, why });
        checks.push(check);
        match &file {
            External::MlkemEncaps(_) => ek = validated,
            External::MlkemDecaps(_) => dk = validated,
            _ => {}
        }
    }
    Some((checks, kem_verdict(ek, dk)))
}

/// The verdict beside an ML-KEM gate, from what the files showed.
fn kem_verdict(ek: Option<bool>, dk: Option<bool>) -> Option<String> {
    Some(
        match (ek, dk) {
            (Some(true), Some(true)) => "ek and dk checked",
            (Some(false), Some(false)) => "does not validate ek or dk",
            (Some(false), _) => "does not validate ek",
            (_, Some(false)) => "does not validate dk",
            (Some(true), None) => "ek checked",
            (None, Some(true)) => "dk checked",
            (None, None) => return None,
        }
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoscope_model::events::TestFailure;

    fn failures(ids: &[&str]) -> Vec<TestFailure> {
        ids.iter()
            .map(|id| TestFailure {
                id: id.to_string(),
                detail: format!("detail of {id}"),
            })
            .collect()
    }

    #[test]
    fn ids_are_listed_with_ranges_of_three_or_more() {
        let f = failures(&["57", "56", "97", "98", "99", "100", "140", "-"]);
        let refs: Vec<&TestFailure> = f.iter().collect();
        assert_eq!(id_list(&refs), "56, 57, 97–100, 140, -");
    }

    #[test]
    fn verdicts_name_what_was_not_checked() {
        assert_eq!(
            kem_verdict(Some(true), Some(true)).as_deref(),
            Some("ek and dk checked")
        );
        assert_eq!(
            kem_verdict(Some(false), Some(true)).as_deref(),
            Some("does not validate ek")
        );
        assert_eq!(
            kem_verdict(Some(true), Some(false)).as_deref(),
            Some("does not validate dk")
        );
        assert_eq!(
            kem_verdict(Some(false), Some(false)).as_deref(),
            Some("does not validate ek or dk")
        );
        assert_eq!(kem_verdict(None, None), None);
    }

    #[test]
    fn files_cover_every_level_and_only_ml_kem() {
        assert_eq!(kem_files("ML-KEM-512").len(), 4);
        assert_eq!(kem_files("ML-KEM-1024")[1], "mlkem_1024_encaps_test.json");
        assert!(kem_files("ML-KEM-640").is_empty());
        assert!(kem_files("X25519").is_empty());
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/wycheproof"));
        for alg in ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"] {
            for f in kem_files(alg) {
                assert!(dir.join(&f).is_file(), "{f} is not in the repository");
            }
        }
    }
}
