//! The JSON-lines protocol between `cryptoscope` and its workers: the events, defined in the
//! model (`cryptoscope_model::events`) with the requests, re-exported here.

pub use cryptoscope_model::events::*;
