//! Web Push: the devices a person asked to be told on, what a push to one
//! says, and how urgent and how long-lived a push service should treat it
//! (RFC 8030). The cryptography (RFC 8291 payload encryption, RFC 8292
//! VAPID signatures) is the adapters'; here are the facts and the rules.

use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::error::ValidationError;
use crate::id::{PushSubscriptionId, RequestId, UserId};
use crate::request_fields::Priority;

/// The longest endpoint accepted; browsers' are a few hundred characters.
pub const MAX_ENDPOINT_CHARS: usize = 1024;
/// The longest device name kept.
pub const MAX_DEVICE_CHARS: usize = 80;
/// The longest a push service is asked to keep a push for a device that
/// is offline: four weeks, the most push services keep anything.
pub const MAX_PUSH_TTL_SECONDS: i64 = 28 * 24 * 3600;

/// A device that receives pushes for one person. Its endpoint and secret
/// stay out of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct PushSubscription {
    /// The subscription's id.
    pub id: PushSubscriptionId,
    /// The person told on it.
    pub user_id: UserId,
    /// The push service's URL for this device (its capability: whoever
    /// holds it can push to the device, so it is never shown back).
    pub endpoint: String,
    /// The device's P-256 public key, uncompressed (65 bytes).
    pub p256dh: Vec<u8>,
    /// The device's authentication secret (16 bytes).
    pub auth: Vec<u8>,
    /// What the device is, in words ("Chrome on Linux").
    pub device: String,
    /// When it was subscribed.
    pub created_at: DateTime<Utc>,
}

impl std::fmt::Debug for PushSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushSubscription")
            .field("id", &self.id)
            .field("user_id", &self.user_id)
            .field("push_service", &self.push_service())
            .field("device", &self.device)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

impl PushSubscription {
    /// The push service's origin (`https://fcm.googleapis.com`): what a
    /// person may be shown of the endpoint, and the VAPID `aud`.
    pub fn push_service(&self) -> String {
        origin_of(&self.endpoint).unwrap_or_default()
    }
}

/// What a browser's `PushSubscription.toJSON()` gives, checked. Its
/// endpoint and secret stay out of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct NewPushSubscription {
    /// The push service's URL for the device.
    pub endpoint: String,
    /// The device's public key, uncompressed (65 bytes, starting 0x04).
    pub p256dh: Vec<u8>,
    /// The device's authentication secret (16 bytes).
    pub auth: Vec<u8>,
    /// The device's name, when the caller gave one.
    pub device: Option<String>,
}

impl std::fmt::Debug for NewPushSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewPushSubscription")
            .field("push_service", &origin_of(&self.endpoint))
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl NewPushSubscription {
    /// Reads `{"endpoint", "keys": {"p256dh", "auth"}, "device"?}` (the
    /// browser's `expirationTime` is ignored), naming every bad field.
    /// Whether the key is a point on the curve is the caller's to check.
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        if !value.is_object() {
            return Err(ValidationError::field(
                "body",
                "the body must be a PushSubscription: {\"endpoint\", \"keys\": {\"p256dh\", \"auth\"}}",
            ));
        }
        let mut errors = ValidationError::default();
        let endpoint = match value["endpoint"].as_str().map(str::trim) {
            Some(url) if url.chars().count() > MAX_ENDPOINT_CHARS => {
                errors.extend(ValidationError::field(
                    "endpoint",
                    format!("endpoint must be at most {MAX_ENDPOINT_CHARS} characters"),
                ));
                None
            }
            Some(url) if origin_of(url).is_some() && !url.chars().any(char::is_whitespace) => {
                Some(url.to_owned())
            }
            _ => {
                errors.extend(ValidationError::field(
                    "endpoint",
                    "endpoint must be the push service's https URL",
                ));
                None
            }
        };
        let mut key = |name: &str, len: usize, check: fn(&[u8]) -> bool, rule: &str| {
            let field = format!("keys.{name}");
            let decoded = value["keys"][name].as_str().and_then(decode_base64url);
            match decoded {
                Some(bytes) if bytes.len() == len && check(&bytes) => Some(bytes),
                _ => {
                    errors.extend(ValidationError::field(
                        field.clone(),
                        format!("{field} {rule}"),
                    ));
                    None
                }
            }
        };
        let p256dh = key(
            "p256dh",
            65,
            |b| b[0] == 0x04,
            "must be the base64url of the device's uncompressed P-256 public key (65 bytes)",
        );
        let auth = key(
            "auth",
            16,
            |_| true,
            "must be the base64url of the device's 16-byte authentication secret",
        );
        let device = match &value["device"] {
            Value::Null => None,
            Value::String(name) if valid_device(name) => Some(name.trim().to_owned()),
            _ => {
                errors.extend(ValidationError::field(
                    "device",
                    format!("device must be a name of 1 to {MAX_DEVICE_CHARS} characters"),
                ));
                None
            }
        };
        errors.into_result()?;
        match (endpoint, p256dh, auth) {
            (Some(endpoint), Some(p256dh), Some(auth)) => Ok(Self {
                endpoint,
                p256dh,
                auth,
                device,
            }),
            _ => Err(ValidationError::field(
                "body",
                "the subscription is incomplete",
            )),
        }
    }
}

fn valid_device(name: &str) -> bool {
    let name = name.trim();
    !name.is_empty()
        && name.chars().count() <= MAX_DEVICE_CHARS
        && !name.chars().any(char::is_control)
}

/// Base64url, with or without padding (browsers give it without).
fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(text.trim())
        .or_else(|_| URL_SAFE.decode(text.trim()))
        .ok()
}

/// `scheme://host[:port]` of an http(s) URL, or `None` when it is not one.
/// The port is kept when it is not the scheme's default (RFC 6454).
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    // No credentials in a push endpoint.
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    let default = if scheme == "https" { ":443" } else { ":80" };
    let authority = authority.strip_suffix(default).unwrap_or(&authority);
    Some(format!("{scheme}://{authority}"))
}

/// A short name for the device a browser's `User-Agent` describes: its
/// browser and system ("Firefox on Android"), or "A browser" when neither
/// is known.
pub fn device_name(user_agent: &str) -> String {
    let has = |needle: &str| user_agent.contains(needle);
    let browser = if has("Edg/") {
        Some("Edge")
    } else if has("Firefox/") {
        Some("Firefox")
    } else if has("Chrome/") || has("Chromium/") || has("CriOS/") {
        Some("Chrome")
    } else if has("Safari/") {
        Some("Safari")
    } else {
        None
    };
    let system = if has("Android") {
        Some("Android")
    } else if has("iPhone") || has("iPad") {
        Some("iOS")
    } else if has("Windows") {
        Some("Windows")
    } else if has("Mac OS X") || has("Macintosh") {
        Some("macOS")
    } else if has("CrOS") {
        Some("ChromeOS")
    } else if has("Linux") {
        Some("Linux")
    } else {
        None
    };
    match (browser, system) {
        (Some(b), Some(s)) => format!("{b} on {s}"),
        (Some(b), None) => b.to_owned(),
        (None, Some(s)) => format!("A browser on {s}"),
        (None, None) => "A browser".to_owned(),
    }
}

/// How soon a push service should deliver a push about a request of
/// `priority` (RFC 8030 `Urgency`): a device on battery may hold back
/// low-urgency pushes, so only low-priority requests may wait.
pub fn push_urgency(priority: Priority) -> &'static str {
    match priority {
        Priority::Low => "low",
        Priority::Medium => "normal",
        Priority::High | Priority::Critical => "high",
    }
}

/// How long (seconds, RFC 8030 `TTL`) a push service keeps a push for a
/// device that is offline: until the request's deadline, after which it
/// can no longer be answered; at least a minute and at most four weeks.
pub fn push_ttl(now: DateTime<Utc>, deadline: DateTime<Utc>) -> u32 {
    let left = (deadline - now)
        .num_seconds()
        .clamp(60, MAX_PUSH_TTL_SECONDS);
    u32::try_from(left).unwrap_or(u32::MAX)
}

/// What a push carries, as the service worker reads it after the device
/// decrypted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushPayload {
    /// The notification's title.
    pub title: String,
    /// The notification's text.
    pub body: String,
    /// The page a click opens.
    pub url: String,
    /// The request, when the push is about one.
    pub request_id: Option<RequestId>,
    /// The request's priority, when the push is about one.
    pub priority: Option<Priority>,
}

impl PushPayload {
    /// The JSON the device decrypts: `title`, `body`, `url`, `request_id`
    /// and `priority` (the last two `null` for a push about no request).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "title": self.title,
            "body": self.body,
            "url": self.url,
            "request_id": self.request_id,
            "priority": self.priority.map(|p| p.as_str()),
        })
    }
}

/// The server's VAPID key pair (RFC 8292): a P-256 key whose public half
/// browsers are given to subscribe with, and whose private half signs each
/// push. Its secret stays out of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct VapidKey {
    /// The public key, uncompressed (65 bytes).
    pub public_key: Vec<u8>,
    /// The private scalar (32 bytes).
    pub secret_key: Vec<u8>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

impl std::fmt::Debug for VapidKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VapidKey")
            .field("public_key", &self.public_key_base64url())
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

impl VapidKey {
    /// The public key as browsers take it for `applicationServerKey`.
    pub fn public_key_base64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(&self.public_key)
    }
}

#[cfg(test)]
mod tests;
