//! The items of an A/B comparison (`cryptoscope ab`): the set-up (item `setup`) and one
//! [`Compared`] per operation (item key: the operation). The rows of A and B themselves are
//! the run's ordinary results (each block one visit), so `show`, `export` and `compare` see
//! them as they see any run's.

use super::Item;
use cryptoscope_measure::paired::{Change, Quad};
use serde::{Deserialize, Serialize};

/// The driver's name.
pub const DRIVER: &str = "ab";

/// What was compared and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// Subject ids (`algorithm/provider/implementation`).
    pub a: String,
    pub b: String,
    pub algorithm: String,
    /// The CPU both ran on (pinned), if pinned.
    #[serde(default)]
    pub cpu: Option<usize>,
    /// Target length of one block, milliseconds.
    pub block_ms: f64,
    /// Timing time asked for, seconds, and what it took (at least [`MIN_QUADS`] quads of
    /// every operation are taken whatever the time).
    ///
    /// [`MIN_QUADS`]: cryptoscope_measure::paired::MIN_QUADS
    pub time_s: f64,
    #[serde(default)]
    pub elapsed_s: Option<f64>,
    /// The smallest change ever called faster or slower (a fraction).
    pub threshold: f64,
    /// The test, in words.
    pub test: String,
    /// Where the time figures come from (clock, its source).
    #[serde(default)]
    pub clock: Option<String>,
    /// Why instructions are missing, when they are.
    #[serde(default)]
    pub instructions_note: Option<String>,
}

impl Item for Setup {
    const DRIVER: &'static str = DRIVER;
}

/// One operation of A and B compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    pub operation: String,
    /// Calls per block (the same for A and B).
    pub calls_per_block: usize,
    /// Median of A's and of B's block medians, nanoseconds.
    pub a_ns: f64,
    pub b_ns: f64,
    /// The paired estimate of B/A and its interval (`None` with too few quads).
    #[serde(default)]
    pub ratio: Option<f64>,
    #[serde(default)]
    pub ci95_low: Option<f64>,
    #[serde(default)]
    pub ci95_high: Option<f64>,
    pub quads: usize,
    /// Epochs: the worker processes were restarted this many times less one.
    #[serde(default)]
    pub epochs: usize,
    /// `faster`, `slower`, `no significant change`; absent with too few quads.
    #[serde(default)]
    pub verdict: Option<Change>,
    /// Every quad: A's and B's block medians, nanoseconds, and its epoch, in the order taken.
    #[serde(default)]
    pub quads_ns: Vec<Quad>,
    /// Exact instructions per call under callgrind (fixed-seed randomness), beside the
    /// verdict, never in it.
    #[serde(default)]
    pub a_instructions: Option<f64>,
    #[serde(default)]
    pub b_instructions: Option<f64>,
    /// How much each side's count varies between calls with real randomness, (max − min) /
    /// min: more than 0 for operations whose path depends on their randomness (rejection
    /// sampling).
    #[serde(default)]
    pub a_instructions_spread: Option<f64>,
    #[serde(default)]
    pub b_instructions_spread: Option<f64>,
}

impl Item for Compared {
    const DRIVER: &'static str = DRIVER;
}

impl Compared {
    /// The compared operations among `apps` (every item of the driver but its set-up).
    pub fn all(apps: &[crate::AppResult]) -> impl Iterator<Item = Compared> + '_ {
        apps.iter().filter(|a| a.item != "setup").filter_map(Compared::from_app)
    }

    /// What the instruction counts say, beside the verdict: `same count`, or B's count
    /// relative to A's; `None` without both counts.
    pub fn instructions_note(&self) -> Option<String> {
        let (a, b) = (self.a_instructions?, self.b_instructions?);
        let spread = match (self.a_instructions_spread, self.b_instructions_spread) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        let diff = b / a - 1.0;
        Some(match spread {
            _ if a == b => "same count".to_string(),
            Some(s) if s > 0.0 && diff.abs() <= s => {
                format!("{:+.2}% (within the ±{} it varies by)", diff * 100.0, spread_pct(s))
            }
            Some(s) if s > 0.0 => format!("{:+.2}% (beyond the ±{} it varies by)", diff * 100.0, spread_pct(s)),
            Some(_) => format!("{:+.2}% (fixed path: the code differs)", diff * 100.0),
            None => format!("{:+.2}%", diff * 100.0),
        })
    }
}

/// A spread as a percentage with enough digits to show it is not zero (0.0004% rather than 0.0%).
fn spread_pct(s: f64) -> String {
    let p = s * 100.0;
    let digits = if p >= 0.1 { 1 } else { (-p.log10()).ceil() as usize + 1 };
    format!("{p:.digits$}%")
}

/// The set-up among `apps`.
pub fn setup(apps: &[crate::AppResult]) -> Option<Setup> {
    apps.iter().filter(|a| a.item == "setup").find_map(Setup::from_app)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_round_trip_and_older_items_read() {
        let c = Compared {
            operation: "encaps".into(),
            calls_per_block: 80,
            a_ns: 300_000.0,
            b_ns: 309_000.0,
            ratio: Some(1.03),
            ci95_low: Some(1.02),
            ci95_high: Some(1.04),
            quads: 100,
            verdict: Some(Change::Slower),
            a_instructions: Some(1_000_000.0),
            b_instructions: Some(1_020_000.0),
            ..Compared::default()
        };
        let stored = c.to_app("encaps");
        assert_eq!(stored.driver, "ab");
        assert_eq!(stored.data["verdict"], "slower");
        assert_eq!(Compared::all(std::slice::from_ref(&stored)).next(), Some(c.clone()));
        assert_eq!(c.instructions_note().as_deref(), Some("+2.00%"));
        let fixed = Compared {
            a_instructions_spread: Some(0.0),
            b_instructions_spread: Some(0.0),
            ..c.clone()
        };
        assert_eq!(
            fixed.instructions_note().as_deref(),
            Some("+2.00% (fixed path: the code differs)")
        );
        let varies = Compared {
            a_instructions_spread: Some(0.05),
            ..c.clone()
        };
        assert_eq!(
            varies.instructions_note().as_deref(),
            Some("+2.00% (within the ±5.0% it varies by)")
        );
        let bare =
            serde_json::json!({"operation": "decaps", "calls_per_block": 1, "a_ns": 1.0, "b_ns": 1.0, "quads": 2});
        let old = crate::AppResult {
            driver: "ab".into(),
            item: "decaps".into(),
            data: bare,
        };
        let read = Compared::all(&[old]).next().unwrap();
        assert_eq!((read.verdict, read.instructions_note()), (None, None));
    }
}
