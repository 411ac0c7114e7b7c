//! Decision receipts: what a third party needs to check who decided a
//! request, what, and when, without trusting the service's database.
//!
//! The domain fixes *what* is signed (the canonical statement of a final
//! request); the signature itself is made by whoever holds the key.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The one signature scheme receipts use.
pub const RECEIPT_ALG: &str = "Ed25519";

/// A signed statement of a request's final state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The key that signed, as listed at `/v1/receipts/keys`.
    pub key_id: String,
    /// base64url (no padding) of the signed bytes: the canonical JSON of
    /// [`ReviewRequest::receipt_statement`](crate::ReviewRequest::receipt_statement).
    pub signed: String,
    /// base64url (no padding) of the 64-byte Ed25519 signature of those bytes.
    pub signature: String,
}

/// `value` as canonical JSON: object keys sorted at every depth, no
/// whitespace. Signed bytes must not depend on how a map happens to be
/// ordered, so the same statement always gives the same bytes.
pub(crate) fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&map[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // serde_json keeps a map's insertion order when its `preserve_order`
    // feature is on and sorts it otherwise; inserting in sorted order gives
    // sorted output either way.
    sorted(value).to_string()
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth_without_spaces() {
        let value = json!({"b": 1, "a": {"z": [ {"y": 2, "x": 1} ], "c": null}});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"c":null,"z":[{"x":1,"y":2}]},"b":1}"#
        );
    }

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
