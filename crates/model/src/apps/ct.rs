//! The constant-time audit's items (`cryptoscope ct`): the set-up (item `setup`) and one
//! [`Audited`] per (subject, operation), item key `subject|operation`.
//!
//! Fields absent from an item are left out of its JSON (not written as null), as the audit
//! always wrote them; the memcheck and dudect parts take one of a few shapes, told apart by
//! `status`.

use super::Item;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The driver's name.
pub const DRIVER: &str = "ct";

/// The item key of a (subject, operation).
pub fn item_key(subject: &str, op: &str) -> String {
    format!("{subject}|{op}")
}

/// The audit's set-up: the tools and the dudect settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// valgrind's version, or null when memcheck was not used.
    #[serde(default)]
    pub valgrind: Option<String>,
    /// `memcheck`, `dudect` or `both`.
    #[serde(default)]
    pub methods: Option<String>,
    #[serde(default)]
    pub dudect_samples: Option<u64>,
    #[serde(default)]
    pub dudect_budget_s: Option<f64>,
    /// The |t| above which dudect reports a difference.
    #[serde(default)]
    pub threshold: Option<f64>,
    #[serde(default)]
    pub clock: Option<String>,
    #[serde(default)]
    pub tsc_hz: Option<f64>,
    #[serde(flatten)]
    pub rest: serde_json::Map<String, Value>,
}

impl Item for Setup {
    const DRIVER: &'static str = DRIVER;
}

/// One (subject, operation): what each method found and the verdict over both. A subject
/// that failed its gate has only the identity, the verdict `not audited` and the gate's
/// status and detail.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Audited {
    pub subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    #[serde(default)]
    pub family: String,
    pub operation: String,
    /// E.g. "no leak found", "leak (memcheck)", "not audited".
    pub verdict: String,
    /// The gate's status (`pass` for every audited operation).
    #[serde(default)]
    pub gate: String,
    /// Why the gate did not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcheck: Option<Memcheck>,
    /// Per cache state: `warm`, and `cold` where tables show best.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dudect: Option<BTreeMap<String, Dudect>>,
    /// The subject's latest speed the store held when the item was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<Speed>,
}

impl Item for Audited {
    const DRIVER: &'static str = DRIVER;
}

impl Audited {
    /// This item stored under its key.
    pub fn stored(&self) -> crate::AppResult {
        self.to_app(item_key(&self.subject, &self.operation))
    }

    /// The audited items among `apps` (every item of the driver but its set-up).
    pub fn all(apps: &[crate::AppResult]) -> impl Iterator<Item = Audited> + '_ {
        apps.iter().filter(|a| a.item != "setup").filter_map(Audited::from_app)
    }
}

/// memcheck's part: `not run`; `failed` with `error`; or `clean` / `findings` with what was
/// marked secret and the findings (every kind, leaks or not).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Memcheck {
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<Finding>>,
    /// Reports outside the audited operations (harness set-up; normally none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_operations: Option<usize>,
}

impl Memcheck {
    /// A part with this status and nothing else.
    pub fn status(status: &str) -> Memcheck {
        Memcheck {
            status: status.into(),
            ..Memcheck::default()
        }
    }

    /// A failed part.
    pub fn failed(error: impl Into<String>) -> Memcheck {
        Memcheck {
            error: Some(error.into()),
            ..Memcheck::status("failed")
        }
    }

    /// The findings (none when memcheck did not run).
    pub fn findings(&self) -> &[Finding] {
        self.findings.as_deref().unwrap_or_default()
    }

    /// Whether any finding is of one of these kinds.
    pub fn any(&self, kinds: &[&str]) -> bool {
        self.findings().iter().any(|f| kinds.contains(&f.kind.as_str()))
    }
}

/// A constant-time finding: one distinct memcheck report inside an audited operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// "branch" (a conditional jump or move on a secret), "index" (a secret in a memory
    /// address: memcheck's uninitialised value of the pointer's size, 8 bytes), "value"
    /// (another use memcheck insists be defined, of another size: e.g. the count of an
    /// AVX2 vector shift, a register operand, neither address nor branch), "decision" (the
    /// one branch of an `open` on its verification result, which the caller learns
    /// anyway), "uninitialised" (a branch, index or value whose undefined bits come from
    /// memory the code never wrote rather than from the marked secret: see `origin`),
    /// "memory" (an invalid access: a bug, not a leak), "public" and "rejection" (declared
    /// public values), "other".
    pub kind: String,
    /// The innermost named function.
    #[serde(default)]
    pub function: String,
    /// Innermost `file:line` known.
    #[serde(default)]
    pub location: Option<String>,
    /// Occurrences during the one call.
    #[serde(default = "one")]
    pub count: u64,
    /// Function names from the report's frame up to the audited operation.
    #[serde(default)]
    pub stack: Vec<String>,
    /// For an "uninitialised" finding: where valgrind says the undefined value was created
    /// (e.g. "a stack allocation in genpoly_gen (sk_gen.c:55)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// For an "uninitialised" finding (and one a declaration then covers): what memcheck
    /// saw ("branch", "index" or "value").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
    /// For a `public` or `rejection` finding: what the declaration says the value is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// And where the specification says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_source: Option<String>,
}

fn one() -> u64 {
    1
}

/// One dudect test, confirmed: `pass` (one run), `leak` or `unconfirmed` (two runs, `max_t`
/// the smaller), `failed` with `error` (and the first run when the confirmation failed), or
/// `not run` with the `reason`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dudect {
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_t: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<CtStat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A declared public value makes the time vary, so a leak here cannot be told from it:
    /// the declaration's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inconclusive: Option<String>,
}

impl Dudect {
    /// The |t| of run `i`.
    pub fn t(&self, i: usize) -> Option<f64> {
        self.runs.get(i).map(|r| r.result.max_t)
    }
}

/// A dudect measurement: Welch's t between fixed and random secret inputs (a worker's
/// report, kept whole in the item).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CtStat {
    pub subject: String,
    pub operation: String,
    /// The two classes of input.
    pub classes: String,
    /// Caches evicted before every call.
    pub cold: bool,
    /// Unit of the timings ("TSC ticks" or "ns").
    pub unit: String,
    pub seconds: f64,
    pub result: cryptoscope_measure::ttest::TResult,
}

/// The speed shown beside a verdict: one operation's median in one stored run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub run: String,
    pub operation: String,
    pub median_ns: Option<f64>,
    pub median_cycles: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An item as `cryptoscope ct` wrote it before these types (commit 7199fd5): a
    /// constant-time SHA-256 with a declared public value, both dudect runs, and a speed.
    fn stored() -> Value {
        json!({
            "subject": "SHA-256/testbed/early-exit", "algorithm": "SHA-256", "provider": "testbed",
            "implementation": "early-exit", "family": "hash", "operation": "hash",
            "verdict": "leak (both methods)", "gate": "pass",
            "memcheck": {
                "status": "findings", "secret": "the whole message",
                "findings": [
                    {"kind": "branch", "function": "compare", "location": "lib.rs:12", "count": 3,
                     "stack": ["compare", "cryptoscope_ct_op_hash"]},
                    {"kind": "public", "function": "pad", "location": null, "count": 1, "stack": [],
                     "declared": "the message length", "declared_source": "FIPS 180-4 §5.1"}
                ],
                "outside_operations": 0
            },
            "dudect": {
                "warm": {"status": "leak", "max_t": 48.1, "runs": [
                    {"subject": "SHA-256/testbed/early-exit", "operation": "hash",
                     "classes": "fixed against random", "cold": false, "unit": "TSC ticks", "seconds": 2.0,
                     "result": {"max_t": 48.1, "test": "uncropped", "n_fixed": 500, "n_random": 500,
                                "samples": 1000, "mean_fixed": 100.0, "mean_random": 130.5, "leak": true}},
                    {"subject": "SHA-256/testbed/early-exit", "operation": "hash",
                     "classes": "fixed against random", "cold": false, "unit": "TSC ticks", "seconds": 2.0,
                     "result": {"max_t": 51.3, "test": "uncropped", "n_fixed": 500, "n_random": 500,
                                "samples": 1000, "mean_fixed": 100.0, "mean_random": 131.0, "leak": true}}
                ]},
                "cold": {"status": "not run", "reason": "too slow"}
            },
            "speed": {"run": "r1", "operation": "hash:1536", "median_ns": 2100.0, "median_cycles": null}
        })
    }

    #[test]
    fn a_stored_item_reads_and_writes_back_unchanged() {
        let v = stored();
        let a: Audited = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&a).unwrap(), v);
        let m = a.memcheck.as_ref().unwrap();
        assert!(m.any(&["branch"]) && !m.any(&["index"]));
        assert_eq!(m.findings()[1].declared.as_deref(), Some("the message length"));
        let warm = &a.dudect.as_ref().unwrap()["warm"];
        assert_eq!((warm.t(0), warm.t(1)), (Some(48.1), Some(51.3)));
        assert_eq!(a.speed.unwrap().median_ns, Some(2100.0));
    }

    #[test]
    fn a_not_audited_item_and_the_setup_read_and_write_back_unchanged() {
        let v = json!({"subject": "X/y/z", "operation": "exchange", "family": "kex",
                       "verdict": "not audited", "gate": "fail", "gate_detail": "KAT 3 differs"});
        let a: Audited = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&a).unwrap(), v);
        assert!(a.memcheck.is_none() && a.dudect.is_none());
        let s = json!({"valgrind": null, "methods": "dudect", "dudect_samples": 20000,
                       "dudect_budget_s": 2.0, "threshold": 4.5, "clock": "TSC", "tsc_hz": 2.0e9});
        let setup: Setup = serde_json::from_value(s.clone()).unwrap();
        assert_eq!(serde_json::to_value(&setup).unwrap(), s);
        assert_eq!(setup.dudect_samples, Some(20000));
    }
}
