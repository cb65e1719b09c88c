//! The engine's own test tier (docs/testing.md), one test binary (one release link): the
//! engine's commands run in-process, as functions of a context whose workers replay recorded
//! exchanges and whose output is kept, many tests at once. Every test that runs a command
//! checks that its transport started no process.

mod common;

mod ab;
mod faults;
mod replay;
mod selection;
mod store;
mod stored;
mod vectors;
