//! Typed items of the application drivers. Each driver's items are stored as JSON
//! (`AppResult.data`); these types are what writers build and readers get back, so that a
//! renamed field fails the build, not a report. Every field added later is optional with a
//! default, so items stored by earlier versions still read.
//!
//! Typed so far: [`tahoe`] and [`tunnel`]. The TLS and constant-time items are still read by
//! key.

pub mod tahoe;
pub mod tunnel;

use crate::AppResult;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// An item type of one driver.
pub trait Item: Serialize + DeserializeOwned {
    /// The driver whose items these are.
    const DRIVER: &'static str;

    /// The stored form.
    fn to_app(&self, item: impl Into<String>) -> AppResult {
        AppResult {
            driver: Self::DRIVER.into(),
            item: item.into(),
            data: serde_json::to_value(self).expect("an item serialises"),
        }
    }

    /// This item read back from a stored one of its driver, if it is one; `None` for
    /// another driver's item or one that does not read as this type.
    fn from_app(a: &AppResult) -> Option<Self> {
        (a.driver == Self::DRIVER)
            .then(|| serde_json::from_value(a.data.clone()).ok())
            .flatten()
    }
}
