//! "Answers first": the questions a reader brings to one run, answered from its rows: which
//! implementation is fastest here (and when that is only noise), what a full exchange costs
//! against the bytes it puts on the wire, what optimised code buys over the portable
//! reference, how the constant-time verdicts sit beside the speed, and how the run stands
//! against published figures or a previous run. Beside them, the machine's stability said
//! once: how much of its time each operation ran off its fast level.
//!
//! Pure: data in, text out ([`terminal`], [`html`]); no I/O. The caller gathers what lives
//! outside the run (stored constant-time verdicts, published figures, a previous run).
//! A subject that did not pass its gate is never ranked, summed or compared.

use crate::compare::{self, Statistic};
use crate::published::{self, Published};
use crate::{table, GateStatus, ResultRow, RunFile};
use serde::Serialize;

mod render;
pub use render::{html, machine_terminal, terminal};

/// How many published lines the answer shows (the most different first).
const PUBLISHED_SHOWN: usize = 5;
/// How many operations the stability note names (the longest off their fast level).
const WORST_SHOWN: usize = 5;

/// One implementation's figure for an operation: median cycles and its 95% interval (the
/// median itself at both ends where the row has no interval).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contender {
    pub provider: String,
    pub implementation: String,
    pub median_cycles: f64,
    pub low: f64,
    pub high: f64,
}

impl Contender {
    /// "provider/implementation".
    pub fn label(&self) -> String {
        format!("{}/{}", self.provider, self.implementation)
    }

    fn of(r: &ResultRow) -> Option<Contender> {
        let m = gated_cycles(r)?;
        Some(Contender {
            provider: r.provider.clone(),
            implementation: r.implementation.clone(),
            median_cycles: m,
            low: r.ci95_low_cycles.filter(|x| x.is_finite()).unwrap_or(m).min(m),
            high: r.ci95_high_cycles.filter(|x| x.is_finite()).unwrap_or(m).max(m),
        })
    }

    fn overlaps(&self, other: &Contender) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

/// Question 1 for one (algorithm, operation) measured by two or more implementations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fastest {
    pub algorithm: String,
    pub operation: String,
    /// The lowest median.
    pub winner: Contender,
    /// Every other implementation whose interval overlaps the winner's: tied with it.
    pub tied: Vec<Contender>,
    /// The fastest implementation that is not tied with the winner, if any.
    pub runner_up: Option<Contender>,
}

impl Fastest {
    /// How far the winner is ahead: runner-up median / winner median; `None` when tied or
    /// when the winner's median is below what the clock resolves (0 cycles).
    pub fn ratio(&self) -> Option<f64> {
        if !self.tied.is_empty() || self.winner.median_cycles <= 0.0 {
            return None;
        }
        self.runner_up
            .as_ref()
            .map(|r| r.median_cycles / self.winner.median_cycles)
    }
}

/// One implementation's full exchange: its cycles against the bytes on the wire (question 2
/// and the log–log chart of the report).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TradeoffPoint {
    pub algorithm: String,
    pub provider: String,
    pub implementation: String,
    pub family: String,
    pub nist_level: Option<u8>,
    pub classical_bits: Option<u16>,
    /// KEM: keypair + encaps + decaps; key exchange: (keypair + exchange) × 2.
    pub cycles: f64,
    /// KEM: public key + ciphertext; key exchange: a public key each way.
    pub bytes: u64,
}

/// Question 3 for one (algorithm, optimised implementation, operation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gain {
    pub algorithm: String,
    pub operation: String,
    /// "provider/implementation" of the optimised code and of the portable code.
    pub optimised: String,
    pub portable: String,
    /// Portable median / optimised median, and the conservative interval from the two
    /// rows' intervals: portable low / optimised high, portable high / optimised low.
    pub speedup: f64,
    pub low: f64,
    pub high: f64,
}

impl Gain {
    /// Whether the interval contains 1: the difference is within the noise.
    pub fn no_gain(&self) -> bool {
        self.low <= 1.0 && 1.0 <= self.high
    }
}

/// Question 4 for one audited subject.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CtLine {
    pub subject: String,
    /// The caller's summary of its latest audit ("no leak found", "decaps: leak (memcheck)").
    pub verdict: String,
    /// Its fastest measured operation in this run and that operation's median time.
    pub fastest_op: Option<(String, f64)>,
    /// Its full exchange in cycles (question 2), for a KEM or key exchange.
    pub exchange_cycles: Option<f64>,
    /// The operations it is fastest at here (alone or tied), from question 1.
    pub wins: Vec<String>,
}

/// What the caller compares the run with (question 5).
#[derive(Debug, Clone, Copy)]
pub enum Against<'a> {
    Nothing,
    /// Published figures (`reference/published.json`, [`published::parse`]).
    Published(&'a [Published]),
    /// A previous run, compared as `compare` does (medians, 5% threshold).
    Run(&'a RunFile),
}

/// One published figure beside our fastest matching implementation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedLine {
    pub algorithm: String,
    /// Our operation (a published "shared secret" is our `derive`).
    pub operation: String,
    pub theirs: String,
    pub their_figure: String,
    pub cpu: String,
    pub ours: String,
    pub our_figure: String,
    /// Our time / theirs (below 1: ours is faster).
    pub ratio: f64,
    /// Whether their CPU is of our processor class.
    pub comparable: bool,
}

/// Question 5's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Versus {
    Published {
        /// Published figures with a match in this run.
        matched: usize,
        /// The processor class of this run ("x86", "Arm") where it can be told, and how many
        /// of the matched figures were measured on one of that class.
        arch: Option<String>,
        comparable: usize,
        /// The lines shown: those of our class first, each group farthest from parity first.
        lines: Vec<PublishedLine>,
        /// Median of ours/theirs over the comparable figures (all where none is).
        median_ratio: f64,
    },
    /// Published figures not compared with, and why (an emulated run).
    Withheld(String),
    Run {
        run_id: String,
        faster: usize,
        slower: usize,
        unchanged: usize,
        missing: usize,
        test: String,
    },
}

/// One operation's time off the machine's fast level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OffFast {
    pub algorithm: String,
    pub operation: String,
    /// "provider/implementation".
    pub label: String,
    /// Share of its samples taken while the machine ran ≥ 10% slower than the fastest level
    /// the operation reached.
    pub fraction: f64,
}

/// The machine's stability over the run, said once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineStability {
    pub shifted: usize,
    pub examined: usize,
    /// The largest change seen, after/before or before/after (above 1).
    pub largest: f64,
    /// The operations longest off their fast level, worst first.
    pub worst: Vec<OffFast>,
}

/// Every answer of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answers {
    pub run_id: String,
    pub fastest: Vec<Fastest>,
    /// The fastest implementation's full exchange per algorithm, KEMs then key exchanges,
    /// each by cycles.
    pub costs: Vec<TradeoffPoint>,
    pub gains: Vec<Gain>,
    pub ct: Vec<CtLine>,
    /// The subjects measured here (what the constant-time answer counts against), and the
    /// command that would audit them.
    pub measured_subjects: usize,
    pub ct_command: String,
    pub versus: Option<Versus>,
    /// `None` when no operation changed speed while being measured.
    pub machine: Option<MachineStability>,
}

/// The median cycles of a row that passed its gate, if it has one. A median of 0 is an
/// operation that costs no more than the clock's own overhead (a public-key check that
/// only reads its input, say): it ranks first, but no ratio over it is defined.
fn gated_cycles(r: &ResultRow) -> Option<f64> {
    if r.gate != GateStatus::Pass {
        return None;
    }
    r.median_cycles.filter(|m| m.is_finite() && *m >= 0.0)
}

/// A gated median a ratio can divide by.
fn resolved_cycles(r: &ResultRow) -> Option<f64> {
    gated_cycles(r).filter(|m| *m > 0.0)
}

/// Keys in the order they first appear.
fn first_seen<K: PartialEq + Clone>(keys: impl Iterator<Item = K>) -> Vec<K> {
    let mut out: Vec<K> = Vec::new();
    for k in keys {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// Answers every question about `run`. `ct`: (subject, verdict summary) of the subjects the
/// stored constant-time audits cover; `against`: what to compare the run with.
pub fn answers(run: &RunFile, ct: &[(String, String)], against: Against<'_>) -> Answers {
    let rows = &run.results;
    let fastest = fastest(rows);
    let measured = first_seen(
        rows.iter()
            .filter(|r| gated_cycles(r).is_some())
            .map(|r| r.subject.clone()),
    );
    let points = tradeoff_points(run);
    Answers {
        run_id: run.run_id.clone(),
        costs: fastest_per_algorithm(&points),
        gains: gains(rows),
        ct: ct_lines(rows, ct, &fastest, &points),
        measured_subjects: measured.len(),
        ct_command: ct_command(rows),
        versus: versus(run, against),
        machine: machine(rows),
        fastest,
    }
}

/// Question 1: per (algorithm, operation) with two or more gated implementations, the
/// fastest, the others tied with it, and the runner-up.
pub fn fastest(rows: &[ResultRow]) -> Vec<Fastest> {
    let keys = first_seen(rows.iter().map(|r| (r.algorithm.as_str(), r.operation.as_str())));
    let mut out = Vec::new();
    for (alg, op) in keys {
        let mut c: Vec<Contender> = rows
            .iter()
            .filter(|r| r.algorithm == alg && r.operation == op)
            .filter_map(Contender::of)
            .collect();
        if c.len() < 2 {
            continue;
        }
        c.sort_by(|a, b| a.median_cycles.total_cmp(&b.median_cycles));
        let winner = c.remove(0);
        let (tied, rest): (Vec<Contender>, Vec<Contender>) = c.into_iter().partition(|x| x.overlaps(&winner));
        out.push(Fastest {
            algorithm: alg.to_string(),
            operation: op.to_string(),
            winner,
            tied,
            runner_up: rest.into_iter().next(),
        });
    }
    out
}

/// One point per gated implementation with a full exchange measured: a KEM's keypair,
/// encaps and decaps against its public key and ciphertext; a key exchange's keypair and
/// exchange on both sides against a public key each way; a signature scheme's sign and
/// verify against its public key and signature. In the run's order.
pub fn tradeoff_points(run: &RunFile) -> Vec<TradeoffPoint> {
    let rows = &run.results;
    let subjects = first_seen(rows.iter().map(|r| r.subject.as_str()));
    let mut out = Vec::new();
    for subject in subjects {
        let of = |op: &str| {
            rows.iter()
                .find(|r| r.subject == subject && r.operation == op)
                .and_then(gated_cycles)
        };
        let Some(first) = rows.iter().find(|r| r.subject == subject) else {
            continue;
        };
        let s = &first.sizes;
        let (cycles, bytes) = match first.family.as_str() {
            "kem" => match (of("keypair"), of("encaps"), of("decaps")) {
                (Some(k), Some(e), Some(d)) => (k + e + d, s.public_key as u64 + s.ciphertext as u64),
                _ => continue,
            },
            "kex" => match (of("keypair"), of("exchange")) {
                (Some(k), Some(x)) => ((k + x) * 2.0, 2 * s.public_key as u64),
                _ => continue,
            },
            // One authentication: the signer signs, the verifier verifies; the public key
            // and the signature travel (a certificate and a CertificateVerify carry both).
            "sig" => {
                let n = cryptoscope_model::descriptor::SIG_MESSAGE_BYTES;
                match (of(&format!("sign:{n}")), of(&format!("verify:{n}"))) {
                    (Some(g), Some(v)) => (g + v, s.public_key as u64 + s.ciphertext as u64),
                    _ => continue,
                }
            }
            _ => continue,
        };
        out.push(TradeoffPoint {
            algorithm: first.algorithm.clone(),
            provider: first.provider.clone(),
            implementation: first.implementation.clone(),
            family: first.family.clone(),
            nist_level: first.nist_level,
            classical_bits: first.classical_bits,
            cycles,
            bytes,
        });
    }
    out
}

/// The cheapest point of each algorithm: KEMs, then key exchanges, then signatures, each by
/// cycles.
fn fastest_per_algorithm(points: &[TradeoffPoint]) -> Vec<TradeoffPoint> {
    let mut best: Vec<TradeoffPoint> = Vec::new();
    for p in points {
        match best.iter_mut().find(|b| b.algorithm == p.algorithm) {
            Some(b) if p.cycles < b.cycles => *b = p.clone(),
            Some(_) => {}
            None => best.push(p.clone()),
        }
    }
    let rank = |f: &str| ["kem", "kex", "sig"].iter().position(|x| *x == f).unwrap_or(3);
    best.sort_by(|a, b| {
        rank(&a.family)
            .cmp(&rank(&b.family))
            .then(a.cycles.total_cmp(&b.cycles))
    });
    best
}

/// Whether an implementation is code optimised for a machine: vector or assembly paths, or
/// a library that picks them at run time (liboqs's `dispatch`).
fn is_optimised(implementation: &str) -> bool {
    let i = implementation.to_ascii_lowercase();
    !table::is_portable(&i)
        && (i == "dispatch"
            || [
                "avx", "neon", "asm", "aesni", "vaes", "gfni", "sse", "x86_64", "aarch64",
            ]
            .iter()
            .any(|k| i.contains(k)))
}

/// The portable code an optimised subject is measured against: of its own provider first
/// (a build's `clean-` of the same compiler and flags before any other), else the first
/// portable subject of the algorithm in the run's order.
fn reference_for<'a>(opt: &ResultRow, portables: &[&'a ResultRow]) -> Option<&'a ResultRow> {
    let suffix = |i: &str| i.split_once('-').map(|(_, s)| s.to_string());
    let own: Vec<&&ResultRow> = portables.iter().filter(|p| p.provider == opt.provider).collect();
    own.iter()
        .find(|p| suffix(&p.implementation).is_some() && suffix(&p.implementation) == suffix(&opt.implementation))
        .or_else(|| {
            own.iter()
                .find(|p| matches!(p.implementation.as_str(), "clean" | "ref"))
        })
        .or_else(|| own.first())
        .map(|p| **p)
        .or_else(|| portables.first().copied())
}

/// Question 3: per algorithm with portable and optimised implementations, each optimised
/// one's speed-up per operation over its portable reference, with the conservative interval.
pub fn gains(rows: &[ResultRow]) -> Vec<Gain> {
    let mut out = Vec::new();
    for alg in first_seen(rows.iter().map(|r| r.algorithm.as_str())) {
        let of_alg: Vec<&ResultRow> = rows.iter().filter(|r| r.algorithm == alg).collect();
        let portables: Vec<&ResultRow> = first_seen(
            of_alg
                .iter()
                .filter(|r| table::is_portable(&r.implementation) && gated_cycles(r).is_some())
                .map(|r| r.subject.as_str()),
        )
        .into_iter()
        .filter_map(|s| of_alg.iter().find(|r| r.subject == s).copied())
        .collect();
        let optimised = first_seen(
            of_alg
                .iter()
                .filter(|r| is_optimised(&r.implementation) && gated_cycles(r).is_some())
                .map(|r| r.subject.as_str()),
        );
        for subject in optimised {
            let Some(first) = of_alg.iter().find(|r| r.subject == subject) else {
                continue;
            };
            let Some(reference) = reference_for(first, &portables) else {
                continue;
            };
            for r in of_alg.iter().filter(|r| r.subject == subject) {
                let base = of_alg
                    .iter()
                    .find(|b| b.subject == reference.subject && b.operation == r.operation);
                let (Some(o), Some(p)) = (Contender::of(r), base.and_then(|b| Contender::of(b))) else {
                    continue;
                };
                // A speed-up over an operation the clock cannot resolve is not a number.
                if o.median_cycles <= 0.0 || p.median_cycles <= 0.0 {
                    continue;
                }
                out.push(Gain {
                    algorithm: alg.to_string(),
                    operation: r.operation.clone(),
                    optimised: o.label(),
                    portable: p.label(),
                    speedup: p.median_cycles / o.median_cycles,
                    low: p.low / o.high,
                    high: p.high / o.low,
                });
            }
        }
    }
    out
}

/// Question 4: each audited subject measured here, its verdict, its fastest operation and
/// what it wins at.
fn ct_lines(rows: &[ResultRow], ct: &[(String, String)], fastest: &[Fastest], points: &[TradeoffPoint]) -> Vec<CtLine> {
    let mut out = Vec::new();
    for (subject, verdict) in ct {
        let mine: Vec<&ResultRow> = rows
            .iter()
            .filter(|r| &r.subject == subject && r.gate == GateStatus::Pass)
            .collect();
        let Some(first) = mine.first() else { continue };
        let fastest_op = mine
            .iter()
            .filter_map(|r| r.median_ns.filter(|t| t.is_finite()).map(|t| (r.operation.clone(), t)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let me = |c: &Contender| c.provider == first.provider && c.implementation == first.implementation;
        let wins = fastest
            .iter()
            .filter(|f| f.algorithm == first.algorithm && (me(&f.winner) || f.tied.iter().any(me)))
            .map(|f| f.operation.clone())
            .collect();
        let exchange_cycles = points
            .iter()
            .find(|p| {
                p.algorithm == first.algorithm
                    && p.provider == first.provider
                    && p.implementation == first.implementation
            })
            .map(|p| p.cycles);
        out.push(CtLine {
            subject: subject.clone(),
            verdict: verdict.clone(),
            fastest_op,
            exchange_cycles,
            wins,
        });
    }
    out
}

/// The audit of this run's algorithms: `cryptoscope ct --alg A --alg B` for a few, the whole
/// catalogue's command for many.
fn ct_command(rows: &[ResultRow]) -> String {
    let algs = first_seen(
        rows.iter()
            .filter(|r| gated_cycles(r).is_some())
            .map(|r| r.algorithm.as_str()),
    );
    if algs.is_empty() || algs.len() > 4 {
        return "cryptoscope ct".into();
    }
    let named: Vec<String> = algs.iter().map(|a| format!("--alg {a}")).collect();
    format!("cryptoscope ct {}", named.join(" "))
}

/// Question 5: the run against published figures or a previous run.
fn versus(run: &RunFile, against: Against<'_>) -> Option<Versus> {
    match against {
        Against::Nothing => None,
        Against::Published(p) => match published::withheld(run) {
            Some(why) => Some(Versus::Withheld(why)),
            None => versus_published(run, p),
        },
        Against::Run(prev) => {
            let c = compare::compare(&[prev.clone(), run.clone()], 0, 0.05, false, Statistic::Median);
            let (faster, slower, unchanged, missing) = compare::tally(&c);
            Some(Versus::Run {
                run_id: prev.run_id.clone(),
                faster,
                slower,
                unchanged,
                missing,
                test: c.test,
            })
        }
    }
}

/// Per published figure our fastest matching row (gated only); the lines farthest from
/// parity first, since those are the ones that say something.
fn versus_published(run: &RunFile, published: &[Published]) -> Option<Versus> {
    let rows: Vec<ResultRow> = run
        .results
        .iter()
        .filter(|r| resolved_cycles(r).is_some())
        .cloned()
        .collect();
    let mut best: Vec<published::Match> = Vec::new();
    for m in published::matches(published, &rows) {
        let same = |b: &published::Match| {
            b.published.algorithm == m.published.algorithm
                && b.published.operation == m.published.operation
                && b.published.implementation == m.published.implementation
                && b.published.source == m.published.source
        };
        match best.iter_mut().find(|b| same(b)) {
            Some(b) if m.ratio < b.ratio => *b = m,
            Some(_) => {}
            None => best.push(m),
        }
    }
    if best.is_empty() {
        return None;
    }
    let arch = run.environment.cpu_model.as_deref().and_then(processor_class);
    let comparable = |m: &published::Match| arch.is_none() || processor_class(&m.published.cpu) == arch;
    let n_comparable = best.iter().filter(|m| comparable(m)).count();
    let mut ratios: Vec<f64> = best
        .iter()
        .filter(|m| n_comparable == 0 || comparable(m))
        .map(|m| m.ratio)
        .collect();
    let median_ratio = cryptoscope_measure::stats::median(&mut ratios);
    best.sort_by(|a, b| {
        comparable(b)
            .cmp(&comparable(a))
            .then(b.ratio.ln().abs().total_cmp(&a.ratio.ln().abs()))
    });
    let matched = best.len();
    // Figures from another class of processor only fill the answer up to three lines.
    let shown = if n_comparable >= 3 {
        n_comparable.min(PUBLISHED_SHOWN)
    } else {
        matched.min(3)
    };
    let lines = best
        .into_iter()
        .take(shown)
        .map(|m| {
            let kind = m.published.figure();
            let ours = rows
                .iter()
                .find(|r| r.subject == m.subject)
                .map_or_else(|| m.subject.clone(), |r| format!("{}/{}", r.provider, r.implementation));
            PublishedLine {
                algorithm: m.published.algorithm.clone(),
                operation: published::operation(&m.published.operation).to_string(),
                theirs: m.published.implementation.clone(),
                their_figure: published::figure(kind, kind.map(|k| k.0)),
                cpu: m.published.cpu.clone(),
                ours,
                our_figure: published::figure(kind, Some(m.our_cycles)),
                ratio: m.ratio,
                comparable: comparable(&m),
            }
        })
        .collect();
    Some(Versus::Published {
        matched,
        arch: arch.map(str::to_string),
        comparable: n_comparable,
        lines,
        median_ratio,
    })
}

/// The class of processor a CPU's name says ("x86", "Arm"), where it says one: cycle counts
/// compare across models of a class, not between an Arm microcontroller and a Xeon.
fn processor_class(cpu: &str) -> Option<&'static str> {
    let c = cpu.to_ascii_lowercase();
    let has = |ks: &[&str]| ks.iter().any(|k| c.contains(k));
    if has(&["cortex", "neoverse", "aarch64", "arm64", "apple m", "graviton"])
        || c.starts_with("arm")
        || c.contains(" arm")
    {
        Some("Arm")
    } else if has(&[
        "intel", "amd", "xeon", "x86", "core i", "ryzen", "epyc", "skylake", "haswell",
    ]) {
        Some("x86")
    } else {
        None
    }
}

/// The machine's stability from the rows' samples: how many operations changed level
/// (the detector and threshold of the report, [`crate::html::SHIFT_RATIO`]), the largest
/// change, and the operations longest off their fast level. `None` when none changed.
pub fn machine(rows: &[ResultRow]) -> Option<MachineStability> {
    let ratio = crate::html::SHIFT_RATIO;
    let (mut shifted, mut examined, mut largest) = (0, 0, 1.0f64);
    let mut worst = Vec::new();
    for r in rows.iter().filter(|r| !r.raw_ns.is_empty()) {
        examined += 1;
        let sh = cryptoscope_measure::shifts::level_shifts(&r.raw_ns, ratio);
        if sh.is_empty() {
            continue;
        }
        shifted += 1;
        for s in &sh {
            largest = largest.max(s.after / s.before).max(s.before / s.after);
        }
        let fraction = cryptoscope_measure::shifts::off_fast_fraction(&r.raw_ns, ratio);
        if fraction > 0.0 {
            worst.push(OffFast {
                algorithm: r.algorithm.clone(),
                operation: r.operation.clone(),
                label: format!("{}/{}", r.provider, r.implementation),
                fraction,
            });
        }
    }
    if shifted == 0 {
        return None;
    }
    worst.sort_by(|a, b| b.fraction.total_cmp(&a.fraction));
    worst.truncate(WORST_SHOWN);
    Some(MachineStability {
        shifted,
        examined,
        largest,
        worst,
    })
}

#[cfg(test)]
mod tests;
