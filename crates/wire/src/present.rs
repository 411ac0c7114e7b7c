//! Fields where an explicit `null` means something else than an absent key.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// For `Option<Value>` fields where an explicit `null` means "clear it":
/// a present field (even `null`) becomes `Some`, an absent one stays `None`.
pub fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Like [`present`] for optional text: `null` becomes `Some(None)`.
pub fn present_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}
