//! Versions side by side. Each version of a provider is its own worker and describes only
//! what it has; where a selection names two or more versions of one provider
//! (`--provider openssl --provider openssl-3.5`), an algorithm one of them offers and
//! another lacks is listed for the latter as unavailable, so that `list`, `run` and the
//! report show what each version has and what it does not.

use crate::catalog::{sort_key, Catalogue, Selection};
use cryptoscope_catalogue::descriptor::{Availability, Descriptor};
use cryptoscope_catalogue::names;
use std::collections::BTreeSet;

/// `picked` with an unavailable entry for each (algorithm, version) the selection's versions
/// do not all share.
pub(crate) fn side_by_side(sel: &Selection, cat: &Catalogue, mut picked: Vec<Descriptor>) -> Vec<Descriptor> {
    let mut added = Vec::new();
    for base in names::VERSIONED {
        // The versions of `base` selected and present here, each with one of its subjects
        // (for its version and build strings).
        let versions: Vec<&Descriptor> = std::iter::once(*base)
            .chain(names::versions_of(base))
            .filter_map(|p| cat.subjects.iter().find(|d| d.provider == p && sel.wants_provider(d)))
            .collect();
        if versions.len() < 2 {
            continue;
        }
        let algorithms: BTreeSet<&str> = picked
            .iter()
            .filter(|d| versions.iter().any(|v| v.provider == d.provider))
            .map(|d| d.algorithm.as_str())
            .collect();
        for alg in algorithms {
            let offered = picked
                .iter()
                .find(|d| d.algorithm == alg && versions.iter().any(|v| v.provider == d.provider))
                .expect("an algorithm of the picked subjects");
            for v in &versions {
                if cat
                    .subjects
                    .iter()
                    .any(|d| d.algorithm == alg && d.provider == v.provider)
                {
                    continue;
                }
                added.push(lacking(offered, v));
            }
        }
    }
    picked.extend(added);
    picked.sort_by_key(sort_key);
    picked
}

/// `offered`'s algorithm as `version`'s provider would list it: unavailable, with that
/// library's version.
fn lacking(offered: &Descriptor, version: &Descriptor) -> Descriptor {
    let mut d = offered.clone();
    d.provider = version.provider.clone();
    d.provider_version = version.provider_version.clone();
    d.build = version.build.clone();
    d.id = Descriptor::make_id(&d.algorithm, &d.provider, &d.implementation);
    // "OpenSSL 3.0.19 27 Jan 2026" → "OpenSSL 3.0.19".
    let short: Vec<&str> = version.provider_version.split_whitespace().take(2).collect();
    d.availability = Availability::Unavailable(format!(
        "{} has no {} ({} has)",
        short.join(" "),
        d.algorithm,
        offered.provider
    ));
    d
}
