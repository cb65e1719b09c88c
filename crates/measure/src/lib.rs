//! The measurement core of cryptoscope: clocks, calibration, adaptive sampling, statistics
//! and environment capture.
//!
//! The pipeline is `clock` (read a counter) → `sampler` (collect raw samples under a plan)
//! → `stats` (pure statistics, no I/O). Nothing in this crate knows about algorithms or
//! providers, and nothing here prints: callers decide what to report.

pub mod callgrind;
pub mod clock;
pub mod emulation;
pub mod env;
pub mod memcheck;
pub mod pace;
pub mod paired;
pub mod perf;
pub mod preflight;
pub mod sampler;
pub mod shifts;
pub mod stats;
pub mod ttest;

pub use clock::{Clock, CycleSource};
pub use sampler::{sample, Plan, SampleSet, ScriptedTimer, StopReason, Timer};
pub use stats::{summarize, Summary};
