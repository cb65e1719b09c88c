//! The error an operation inside a provider reports, and the buffer-length check every
//! provider runs first: part of the model because workers send it back to the harness.

use thiserror::Error;

/// An operation failed inside a provider.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum OpError {
    /// The library returned a failure status.
    #[error("{op} failed: {detail}")]
    Failed { op: &'static str, detail: String },
    /// A buffer had the wrong length for this subject.
    #[error("{op}: buffer `{buffer}` has {got} bytes, expected {expected}")]
    BadLength {
        op: &'static str,
        buffer: &'static str,
        got: usize,
        expected: usize,
    },
    /// The subject cannot run here.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

impl OpError {
    pub fn failed(op: &'static str, detail: impl Into<String>) -> OpError {
        OpError::Failed {
            op,
            detail: detail.into(),
        }
    }
}

/// Checks a buffer length; providers call it at the top of each operation.
#[inline]
pub fn check_len(op: &'static str, buffer: &'static str, got: usize, expected: usize) -> Result<(), OpError> {
    if got == expected {
        Ok(())
    } else {
        Err(OpError::BadLength {
            op,
            buffer,
            got,
            expected,
        })
    }
}
