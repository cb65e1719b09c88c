//! Wycheproof's signature schemas (being written).

use super::External;
use crate::traits::Sig;
use cryptoscope_model::events::FileOutcome;

/// Runs a signature file on `sig`; `None` when the file is not a signature file.
pub fn run_sig(sig: &dyn Sig, file: &External) -> Option<FileOutcome> {
    let _ = (sig, file);
    None
}
