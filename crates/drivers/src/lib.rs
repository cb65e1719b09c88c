//! The application drivers of cryptoscope (`tahoe`, `tls`, `tunnel`, `openvpn-server`): studies of
//! cryptography inside a protocol, behind one interface ([`apps::Driver`]), with what only
//! they use (network namespaces, hostile traffic). Built on `cryptoscope-engine`.
// Every name a module uses is written out (issue 54): no glob imports outside tests.
#![deny(clippy::wildcard_imports)]
// Output goes through the command's context (`context::Out`), never straight to the
// process's standard streams (issue 54); tests may print.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

#[macro_use]
extern crate cryptoscope_engine;

pub mod apps;
pub mod flights;
mod hostile;
pub mod netem;
pub mod netns;
pub mod openvpn_server;
pub mod stop;
pub mod tahoe;
pub mod tls;
mod tls_checks;
mod tls_peers;
pub mod tunnel;
