//! The catalogue as the CLI sees it: every subject every worker describes, and the user's
//! selection from it, validated (unknown names are usage errors with a suggestion).

use anyhow::{bail, Result};
use cryptoscope_catalogue::descriptor::{Descriptor, Family};
use cryptoscope_catalogue::names;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::context::Ctx;
use crate::ui::UsageError;
use crate::workers::{Outcome, Workers};
use std::sync::Arc;

/// Every subject of every provider whose worker could be found, and the transport that
/// reaches them.
pub struct Catalogue {
    pub subjects: Vec<Descriptor>,
    pub workers: BTreeMap<String, PathBuf>,
    /// Providers whose worker is missing or failed, with the reason.
    pub missing: Vec<(String, String)>,
    /// How calls reach the workers (the context's).
    pub transport: Arc<Workers>,
}

impl Catalogue {
    /// Asks every provider's worker for its subjects.
    pub fn discover(ctx: &Ctx) -> Result<Catalogue> {
        let transport = Arc::clone(&ctx.workers);
        let dir = transport.dir().to_path_buf();
        let mut cat = Catalogue {
            subjects: Vec::new(),
            workers: BTreeMap::new(),
            missing: Vec::new(),
            transport,
        };
        for provider in names::PROVIDERS.iter().chain(names::TEST_PROVIDERS) {
            let Some(bin) = cat.transport.worker_path(provider) else {
                if names::TEST_PROVIDERS.contains(provider) {
                    continue;
                }
                cat.missing.push((
                    provider.to_string(),
                    format!(
                        "worker {} not found in {}",
                        names::worker_binary(provider),
                        dir.display()
                    ),
                ));
                continue;
            };
            let mut subjects = Vec::new();
            let outcome = cat.transport.call(
                &bin,
                &cryptoscope_model::protocol::Request::Describe,
                Duration::from_secs(60),
                &mut |ev| {
                    if let cryptoscope_worker::Event::Describe { subjects: s } = ev {
                        subjects = s;
                    }
                },
            );
            if outcome != Outcome::Completed {
                cat.missing.push((provider.to_string(), outcome.describe()));
                continue;
            }
            cat.subjects.extend(subjects);
            cat.workers.insert(provider.to_string(), bin);
        }
        cat.subjects.sort_by_key(sort_key);
        Ok(cat)
    }

    /// The providers named (with `--provider`) whose worker is missing or failed to start,
    /// with the reason.
    pub fn named_but_missing(&self, named: &[String]) -> Vec<(String, String)> {
        self.missing
            .iter()
            .filter(|(p, _)| named.iter().any(|n| n == p))
            .cloned()
            .collect()
    }

    pub fn worker(&self, provider: &str) -> Option<&PathBuf> {
        self.workers.get(provider)
    }
}

/// Catalogue order: family, the algorithm's place in the name list, provider order,
/// implementation.
pub fn sort_key(d: &Descriptor) -> (Family, usize, usize, usize, String) {
    let a = names::ALGORITHMS
        .iter()
        .position(|a| a.name == d.algorithm)
        .unwrap_or(usize::MAX);
    let p = names::PROVIDERS
        .iter()
        .position(|p| *p == d.provider)
        .unwrap_or(usize::MAX);
    // Portable code first, then its optimised variants.
    let i = ["clean", "ref", "avx2"]
        .iter()
        .position(|x| *x == d.implementation)
        .unwrap_or(3);
    (d.family, a, p, i, d.implementation.clone())
}

/// What the user asked for.
#[derive(Debug, Default, Clone)]
pub struct Selection {
    pub suites: Vec<String>,
    pub algorithms: Vec<String>,
    pub providers: Vec<String>,
    pub implementations: Vec<String>,
    /// Include algorithms outside the default suite.
    pub all: bool,
}

fn usage(msg: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg))
}

impl Selection {
    /// Canonicalises and checks names; unknown ones are usage errors.
    pub fn validate(mut self) -> Result<Selection> {
        let mut suites = Vec::new();
        for s in self
            .suites
            .iter()
            .flat_map(|s| s.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let s = s.to_ascii_lowercase();
            let known = names::suites();
            if !known.contains(&s.as_str()) {
                let hint = names::did_you_mean(&s, known.iter().copied())
                    .map(|h| format!(" (did you mean `{h}`?)"))
                    .unwrap_or_default();
                bail!(usage(format!(
                    "unknown suite `{s}`{hint}; suites: {}",
                    known.join(", ")
                )));
            }
            suites.push(s);
        }
        self.suites = suites;
        let mut algs = Vec::new();
        for a in self
            .algorithms
            .iter()
            .flat_map(|s| s.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            match names::algorithm(a) {
                Some(info) => algs.push(info.name.to_string()),
                None => {
                    let hint = names::did_you_mean(a, names::ALGORITHMS.iter().map(|x| x.name))
                        .map(|h| format!(" (did you mean `{h}`?)"))
                        .unwrap_or_default();
                    bail!(usage(format!(
                        "unknown algorithm `{a}`{hint}; `cryptoscope list` shows them all"
                    )));
                }
            }
        }
        self.algorithms = algs;
        let mut provs = Vec::new();
        for p in self
            .providers
            .iter()
            .flat_map(|s| s.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let canon = names::PROVIDERS
                .iter()
                .chain(names::TEST_PROVIDERS)
                .find(|x| x.eq_ignore_ascii_case(p) || x.replace('-', "").eq_ignore_ascii_case(p));
            match canon {
                Some(c) => provs.push(c.to_string()),
                // `openssl-3.0`: the system build, if that is its version (checked in `pick`).
                None if names::versioned_name(p).is_some() => provs.push(p.to_ascii_lowercase()),
                None => {
                    let hint = names::did_you_mean(p, names::PROVIDERS.iter().copied())
                        .map(|h| format!(" (did you mean `{h}`?)"))
                        .unwrap_or_default();
                    bail!(usage(format!(
                        "unknown provider `{p}`{hint}; providers: {}",
                        names::PROVIDERS.join(", ")
                    )));
                }
            }
        }
        self.providers = provs;
        self.implementations = self
            .implementations
            .iter()
            .flat_map(|s| s.split(','))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        Ok(self)
    }

    /// Whether an algorithm is picked when no `--alg` names any: a default-run family's
    /// suite algorithms; for a family outside the default run, once its suite is named, its
    /// suite algorithms, or all of it when it marks none (hashes, ciphers, AEADs; signatures
    /// keep the larger SPHINCS+ sets, MAYO, CROSS and UOV for `--alg` and `--all`).
    fn by_suite(&self, a: &names::AlgorithmInfo) -> bool {
        if a.family.info().in_default_run {
            return a.default_suite;
        }
        let named = self.suites.iter().any(|s| s == a.family.as_str());
        let marks_some = names::ALGORITHMS
            .iter()
            .any(|x| x.family == a.family && x.default_suite);
        named && (a.default_suite || !marks_some)
    }

    /// Whether `--provider` picks this subject's provider: by name, or `NAME-X.Y` naming the
    /// system build of a versioned provider whose library is version X.Y.
    pub(crate) fn wants_provider(&self, d: &Descriptor) -> bool {
        self.providers.iter().any(|p| {
            p == &d.provider
                || names::versioned_name(p).is_some_and(|(base, v)| {
                    d.provider == base && names::major_minor(&d.provider_version).is_some_and(|m| m == v)
                })
        })
    }

    /// `--provider NAME-X.Y` that names neither a vendored version nor the system build's:
    /// a usage error that says which versions there are.
    fn check_versions(&self, cat: &Catalogue) -> Result<()> {
        for p in &self.providers {
            let Some((base, _)) = names::versioned_name(p) else {
                continue;
            };
            if names::PROVIDERS.contains(&p.as_str()) || cat.subjects.iter().any(|d| self.wants_provider_named(p, d)) {
                continue;
            }
            let system = cat
                .subjects
                .iter()
                .find(|d| d.provider == base)
                .and_then(|d| names::major_minor(&d.provider_version))
                .map(|v| format!("{base} (the system's, {v})"))
                .unwrap_or_else(|| format!("{base} (the system's, not found)"));
            let mut known = vec![system];
            known.extend(names::versions_of(base).map(String::from));
            bail!(usage(format!(
                "unknown version `{p}`; versions of {base}: {}",
                known.join(", ")
            )));
        }
        Ok(())
    }

    fn wants_provider_named(&self, p: &str, d: &Descriptor) -> bool {
        Selection {
            providers: vec![p.to_string()],
            ..Selection::default()
        }
        .wants_provider(d)
    }

    /// The subjects this selection picks, in catalogue order. Asking for an algorithm no
    /// selected provider offers is a usage error.
    pub fn pick(&self, cat: &Catalogue) -> Result<Vec<Descriptor>> {
        self.check_versions(cat)?;
        let picked: Vec<Descriptor> = cat
            .subjects
            .iter()
            .filter(|d| self.suites.is_empty() || self.suites.iter().any(|s| s == d.family.as_str()))
            .filter(|d| {
                if self.algorithms.is_empty() {
                    // A family outside the default run (hashes, ciphers, AEADs): naming its
                    // suite takes all of it.
                    self.all
                        || names::TEST_PROVIDERS.contains(&d.provider.as_str())
                        || names::algorithm(&d.algorithm).is_some_and(|a| self.by_suite(a))
                } else {
                    self.algorithms.contains(&d.algorithm)
                }
            })
            .filter(|d| self.providers.is_empty() || self.wants_provider(d))
            .filter(|d| !names::TEST_PROVIDERS.contains(&d.provider.as_str()) || self.wants_provider(d))
            .filter(|d| !names::is_extra_version(&d.provider) || self.wants_provider(d))
            .filter(|d| self.implementations.is_empty() || self.implementations.iter().any(|i| impl_matches(i, d)))
            .cloned()
            .collect();
        let picked = crate::versions::side_by_side(self, cat, picked);
        self.check_impls_named(cat, &picked)?;
        self.check_algorithms_picked(cat, &picked)?;
        if picked.is_empty() {
            // Subjects of a suite outside the default run (hashes, ciphers) need it named.
            let mut suites: Vec<&str> = cat
                .subjects
                .iter()
                .filter(|d| self.providers.is_empty() || self.wants_provider(d))
                .filter(|d| !names::TEST_PROVIDERS.contains(&d.provider.as_str()) || self.wants_provider(d))
                .filter(|d| self.implementations.is_empty() || self.implementations.iter().any(|i| impl_matches(i, d)))
                .filter(|d| !d.family.info().in_default_run)
                .map(|d| d.family.as_str())
                .collect();
            suites.sort_unstable();
            suites.dedup();
            let hint = if self.suites.is_empty() && !suites.is_empty() {
                format!(
                    " (these providers offer suites outside the default run: add --suite {})",
                    suites.join(",")
                )
            } else {
                String::new()
            };
            bail!(usage(format!(
                "the selection matches no subject{hint}; `cryptoscope list` shows the catalogue"
            )));
        }
        Ok(picked)
    }

    /// Every `--impl` must name something, or a typo silently narrows the selection.
    fn check_impls_named(&self, cat: &Catalogue, picked: &[Descriptor]) -> Result<()> {
        for i in &self.implementations {
            let offered = cat
                .subjects
                .iter()
                .any(|d| self.algorithms.is_empty() || self.algorithms.contains(&d.algorithm));
            if offered && !picked.iter().any(|d| impl_matches(i, d)) {
                let known: Vec<String> = cat
                    .subjects
                    .iter()
                    .filter(|d| self.algorithms.is_empty() || self.algorithms.contains(&d.algorithm))
                    .filter(|d| self.providers.is_empty() || self.wants_provider(d))
                    .filter(|d| !names::TEST_PROVIDERS.contains(&d.provider.as_str()) || self.wants_provider(d))
                    .map(|d| format!("{}/{}", d.provider, d.implementation))
                    .collect();
                let mut known = dedup(known.iter().map(String::as_str).collect());
                known.sort_unstable();
                known.dedup();
                let hint = names::did_you_mean(i, known.iter().copied())
                    .map(|h| format!(" (did you mean `{h}`?)"))
                    .unwrap_or_default();
                bail!(usage(format!(
                    "--impl {i} matches no selected subject{hint}; implementations: {}",
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Every `--alg` must be picked: when one is not, say why (an `--impl` that none of
    /// its implementations matches, a suite left out, no provider offering it).
    fn check_algorithms_picked(&self, cat: &Catalogue, picked: &[Descriptor]) -> Result<()> {
        for a in &self.algorithms {
            if !picked.iter().any(|d| &d.algorithm == a) {
                // Offered by the selected providers, but none of its implementations is
                // one the --impl list names: say so, with the ones there are.
                let mut impls: Vec<String> = cat
                    .subjects
                    .iter()
                    .filter(|d| &d.algorithm == a)
                    .filter(|d| self.providers.is_empty() || self.wants_provider(d))
                    .filter(|d| !names::TEST_PROVIDERS.contains(&d.provider.as_str()) || self.wants_provider(d))
                    .map(|d| format!("{}/{}", d.provider, d.implementation))
                    .collect();
                if !impls.is_empty() && !self.implementations.is_empty() {
                    impls.sort_unstable();
                    impls.dedup();
                    bail!(usage(format!(
                        "no implementation of {a} matches --impl {}; its implementations: {}",
                        self.implementations.join(","),
                        impls.join(", ")
                    )));
                }
                // Outside the suites named: the suite is what excludes it, not a provider.
                if let Some(info) = names::algorithm(a) {
                    let family = info.family.as_str();
                    if !self.suites.is_empty() && !self.suites.iter().any(|s| s == family) {
                        bail!(usage(format!(
                            "{a} is in suite {family}, which --suite {} leaves out: add it or drop --suite",
                            self.suites.join(",")
                        )));
                    }
                }
                let from = if self.providers.is_empty() {
                    String::new()
                } else {
                    format!(" from {}", self.providers.join(", "))
                };
                let offered: Vec<&str> = cat
                    .subjects
                    .iter()
                    .filter(|d| &d.algorithm == a)
                    .map(|d| d.provider.as_str())
                    .collect();
                let extra = if offered.is_empty() {
                    let missing: Vec<&str> = cat.missing.iter().map(|(p, _)| p.as_str()).collect();
                    if missing.is_empty() {
                        String::new()
                    } else {
                        format!(" (providers without a worker: {})", missing.join(", "))
                    }
                } else {
                    format!(" (offered by: {})", dedup(offered).join(", "))
                };
                bail!(usage(format!("no subject offers {a}{from}{extra}")));
            }
        }
        Ok(())
    }
}

/// `--impl` takes an implementation (`clean`) or provider/implementation (`build/clean-gcc12-O3`).
fn impl_matches(want: &str, d: &Descriptor) -> bool {
    match want.split_once('/') {
        Some((p, i)) => p == d.provider && i == d.implementation,
        None => want == d.implementation,
    }
}

fn dedup(mut v: Vec<&str>) -> Vec<&str> {
    v.dedup();
    v
}
