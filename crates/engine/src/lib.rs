//! The harness of cryptoscope, everything the command line does except the application
//! drivers (`cryptoscope-drivers`): arguments, catalogue discovery, worker processes, the
//! correctness gate, the run engine ([`run`]), the stored-run commands and the other passes
//! (scale, memory, counters, profile, micro, builds, constant-time audit). Measuring
//! happens in provider worker processes, never here.
// Every name a module uses is written out (issue 54): no glob imports outside tests.
#![deny(clippy::wildcard_imports)]
// Output goes through the command's context (`context::Out`), never straight to the
// process's standard streams (issue 54); tests may print.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

#[macro_use]
pub mod context;
pub mod ab;
pub mod args;
pub mod builds;
pub mod catalog;
mod counters;
mod ct;
pub mod ct_cmd;
pub mod external;
pub mod gated;
pub mod gating;
pub mod groups;
pub mod listing;
mod matrix;
pub mod memory;
pub mod micro;
pub mod preflight_cmd;
mod probes;
pub mod profile;
pub mod run;
pub mod scale;
pub mod stored;
pub mod ui;
pub mod util;
mod versions;
pub mod workers;
