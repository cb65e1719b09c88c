//! The result contract every consumer reads, and the worker's vocabulary.
//!
//! - [`descriptor`]: a subject (algorithm × provider × implementation) as a descriptor —
//!   canonical name, provider and version, build, claimed security level, byte length of every
//!   buffer — its family and the operations it offers.
//! - [`names`]: canonical algorithm and provider names, suites, "did you mean".
//! - [`results`]: [`RunFile`] / [`ResultRow`], the one structure every consumer reads: the JSON
//!   file, the terminal, the database and the HTML report. Units live in field names
//!   (`median_cycles`, `median_ns`). The schema is documented in `docs/results-schema.md`;
//!   changing a field's meaning needs a new schema version.
//! - [`secrets`]: the command line recorded with a run, with every secret masked.
//! - [`apps`]: typed items of the application drivers (Tahoe-LAFS, the constant-time audit,
//!   TLS, the tunnels).
//! - [`error`]: the error an operation reports from inside a provider.
//! - [`protocol`]: what the harness asks a worker, as a typed [`protocol::Request`] (JSON for
//!   a long-lived worker, a command line for a one-shot one).
//!
//! This crate holds data and its rules, never I/O: the catalogue, the worker, the engine, the
//! store and the renderers all depend on it, and it on nothing of ours but the measurement core.

pub mod apps;
pub mod descriptor;
pub mod error;
pub mod events;
pub mod names;
pub mod protocol;
pub mod results;
pub mod secrets;

pub use descriptor::{
    AeadInfo, Availability, CipherInfo, Descriptor, Family, KatPrngKind, KatRef, Operation, Randomness, Sizes,
};
pub use error::{check_len, OpError};
pub use results::*;
pub use secrets::RecordedCommand;
