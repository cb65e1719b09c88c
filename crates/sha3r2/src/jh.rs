//! JH-256 round 2 (35.5 rounds): not written yet.

/// `None` until the candidate is written.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    None
}
