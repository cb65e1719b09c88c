//! Renderings of results: the terminal tables, the exports (CSV, Markdown, JSON for
//! github-action-benchmark), comparisons, the HTML report with its SVG charts, and the tables of
//! each family and application driver. The data they render is `cryptoscope_model`'s.

pub mod ab;
pub mod aead;
pub mod answers;
pub mod apps;
pub mod cipher;
pub mod compare;
pub mod ct;
pub mod export;
pub mod history;
pub mod html;
pub mod openvpn;
pub mod published;
pub mod sig;
pub mod table;
pub mod tahoe;
pub mod tls;
pub mod tunnel;

// The data rendered here is the model's; its names are short within this crate.
use cryptoscope_model::results::*;
