//! Typed items of the application drivers. Each driver's items are stored as JSON
//! (`AppResult.data`); these types are what writers build and readers get back, so that a
//! renamed field fails the build, not a report. Every field added later is optional with a
//! default, so items stored by earlier versions still read.
//!
//! Every driver's items are typed: [`tahoe`], [`ct`], [`tls`], [`tunnel`], [`openvpn`], [`ab`].

pub mod ab;
pub mod ct;
pub mod openvpn;
pub mod tahoe;
pub mod tls;
pub mod tunnel;

use crate::AppResult;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

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

/// Reads a key that is present, possibly as null, as `Some` of its value: with
/// `#[serde(default, skip_serializing_if = "Option::is_none")]` on an `Option<Option<T>>`,
/// an absent key stays absent and a null one stays null.
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}
