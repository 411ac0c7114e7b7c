//! Identifiers: 12 bytes shown as 24 lowercase hexadecimal characters. The
//! first 4 bytes are the creation time in Unix seconds (so ids sort by
//! creation), the other 8 are random and supplied by the caller.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ValidationError;

/// A path or body id that is not 24 hexadecimal characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid ID format")]
pub struct InvalidId;

/// The raw 12-byte identifier behind every typed id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId([u8; 12]);

impl ObjectId {
    /// Builds an id from its creation time and 8 random bytes. Seconds
    /// outside the `u32` range are clamped, which only matters after 2106.
    pub fn from_parts(unix_seconds: i64, random: [u8; 8]) -> Self {
        let seconds = u32::try_from(unix_seconds.max(0)).unwrap_or(u32::MAX);
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&seconds.to_be_bytes());
        bytes[4..].copy_from_slice(&random);
        Self(bytes)
    }

    /// Parses 24 hexadecimal characters, upper or lower case.
    pub fn parse(s: &str) -> Result<Self, InvalidId> {
        let raw = s.as_bytes();
        if raw.len() != 24 {
            return Err(InvalidId);
        }
        let mut bytes = [0u8; 12];
        for (i, pair) in raw.chunks_exact(2).enumerate() {
            let high = hex_value(pair[0]).ok_or(InvalidId)?;
            let low = hex_value(pair[1]).ok_or(InvalidId)?;
            bytes[i] = (high << 4) | low;
        }
        Ok(Self(bytes))
    }

    /// The creation time in Unix seconds encoded in the first 4 bytes.
    pub fn unix_seconds(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// The 24 lowercase hexadecimal characters, without allocating: ids
    /// are written into every answer, so this is on every hot path.
    fn hex(&self) -> [u8; 24] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 24];
        for (i, byte) in self.0.iter().enumerate() {
            out[2 * i] = DIGITS[usize::from(byte >> 4)];
            out[2 * i + 1] = DIGITS[usize::from(byte & 0x0f)];
        }
        out
    }

    /// Passes the text form to `f` (no allocation).
    fn with_str<T>(&self, f: impl FnOnce(&str) -> T) -> T {
        let hex = self.hex();
        // Always ASCII hex digits.
        f(std::str::from_utf8(&hex).unwrap_or_default())
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_str(|s| f.pad(s))
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({self})")
    }
}

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(ObjectId);

        impl $name {
            /// Wraps a raw id.
            pub fn new(id: ObjectId) -> Self {
                Self(id)
            }

            /// Parses 24 hexadecimal characters.
            pub fn parse(s: &str) -> Result<Self, InvalidId> {
                ObjectId::parse(s).map(Self)
            }

            /// Parses the id a client gave as `field`, with a message
            /// naming it.
            pub fn parse_field(field: &str, s: &str) -> Result<Self, ValidationError> {
                Self::parse(s).map_err(|_| {
                    ValidationError::field(
                        field,
                        format!("{field} must be an id of 24 hexadecimal characters"),
                    )
                })
            }

            /// The raw id.
            pub fn object_id(&self) -> ObjectId {
                self.0
            }
        }

        impl FromStr for $name {
            type Err = InvalidId;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.0.with_str(|s| serializer.serialize_str(s))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                Self::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

typed_id!(
    /// Identifies a user account.
    UserId
);
typed_id!(
    /// Identifies a loop.
    LoopId
);
typed_id!(
    /// Identifies a review request.
    RequestId
);
typed_id!(
    /// Identifies an API key (never the key itself).
    ApiKeyId
);
typed_id!(
    /// Identifies an event in the outbox.
    EventId
);
typed_id!(
    /// Identifies a webhook subscription.
    WebhookId
);
typed_id!(
    /// Identifies one event's delivery to one receiver.
    DeliveryId
);
typed_id!(
    /// Identifies a template (a reusable form).
    TemplateId
);
typed_id!(
    /// Identifies a review (a request of the alternate surface).
    ReviewId
);
typed_id!(
    /// Identifies a notice (an email or Slack message to send).
    NoticeId
);
typed_id!(
    /// Identifies a device subscribed to Web Push.
    PushSubscriptionId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_24_lowercase_hex_with_time_first() {
        let id = ObjectId::from_parts(0x5f5e_1000, [0xAB, 1, 2, 3, 4, 5, 6, 0xFF]);
        assert_eq!(id.to_string(), "5f5e1000ab010203040506ff");
        assert_eq!(id.unix_seconds(), 0x5f5e_1000);
    }

    #[test]
    fn parses_upper_and_lower_case_and_round_trips() {
        let id = LoopId::parse("5F5E1000AB010203040506FF").unwrap();
        assert_eq!(id.to_string(), "5f5e1000ab010203040506ff");
        assert_eq!(LoopId::parse(&id.to_string()).unwrap(), id);
    }

    #[test]
    fn refuses_wrong_length_and_non_hex() {
        for bad in [
            "",
            "abc",
            "5f5e1000ab010203040506f",
            "5f5e1000ab010203040506fff",
            "5f5e1000ab010203040506fg",
            "zzzzzzzzzzzzzzzzzzzzzzzz",
            "5f5e1000ab01020304050€",
        ] {
            assert_eq!(RequestId::parse(bad), Err(InvalidId), "{bad:?}");
        }
    }

    #[test]
    fn ids_sort_by_creation_time() {
        let early = ObjectId::from_parts(100, [0xFF; 8]);
        let late = ObjectId::from_parts(101, [0; 8]);
        assert!(early < late);
        assert!(early.to_string() < late.to_string());
    }

    #[test]
    fn negative_time_clamps_to_zero() {
        assert_eq!(ObjectId::from_parts(-5, [0; 8]).unix_seconds(), 0);
    }

    #[test]
    fn serializes_as_a_string() {
        let id = UserId::parse("5f5e1000ab010203040506ff").unwrap();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"5f5e1000ab010203040506ff\"");
        let back: UserId = serde_json::from_str(&json).unwrap();
        assert_eq!(back, id);
        assert!(serde_json::from_str::<UserId>("\"nope\"").is_err());
    }
}
