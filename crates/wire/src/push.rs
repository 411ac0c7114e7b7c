//! Web Push: the server's public key and people's devices. A device's
//! endpoint is a capability (whoever holds it can push to the device), so
//! it is taken but never shown back: a device shows its push service.

use chrono::{DateTime, Utc};
use reviewloop_domain::{PushSubscription, PushSubscriptionId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::schema;

/// The key browsers subscribe with (`applicationServerKey`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = VapidKey)]
pub struct VapidKeyOut {
    /// Base64url of the uncompressed P-256 point (65 bytes).
    pub public_key: String,
}

/// The keys of a browser's `PushSubscription`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = PushKeys)]
pub struct PushKeysIn {
    /// Base64url of the device's uncompressed P-256 public key.
    pub p256dh: Option<String>,
    /// Base64url of the device's 16-byte authentication secret.
    pub auth: Option<String>,
}

/// A device to push to: what the browser's `PushSubscription.toJSON()`
/// gives, and optionally a name for it.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewPushSubscription, example = json!({"endpoint": "https://fcm.googleapis.com/fcm/send/dXJs...", "keys": {"p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", "auth": "tBHItJI5svbpez7KI4CCXg"}}))]
pub struct PushSubscriptionIn {
    /// The push service's URL for the device.
    pub endpoint: Option<String>,
    pub keys: Option<PushKeysIn>,
    /// The browser's own; ignored.
    #[serde(rename = "expirationTime")]
    pub expiration_time: Option<serde_json::Value>,
    /// A name for the device; by default the browser and system the
    /// `User-Agent` names ("Chrome on Android").
    pub device: Option<String>,
}

/// A subscribed device.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PushSubscription)]
pub struct PushSubscriptionOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: PushSubscriptionId,
    /// What the device is.
    pub device: &'a str,
    /// The push service's origin (the endpoint itself is not shown).
    pub push_service: String,
    pub created_at: DateTime<Utc>,
}

impl<'a> PushSubscriptionOut<'a> {
    /// `subscription`, without its endpoint and keys.
    pub fn of(subscription: &'a PushSubscription) -> Self {
        Self {
            id: subscription.id,
            device: &subscription.device,
            push_service: subscription.push_service(),
            created_at: subscription.created_at,
        }
    }
}

/// `{"subscription": ...}`: one device.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = OnePushSubscription)]
pub struct OnePushSubscriptionOut<'a> {
    pub subscription: &'a PushSubscriptionOut<'a>,
}

/// The caller's devices.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PushSubscriptionList)]
pub struct PushSubscriptionListOut<'a> {
    pub subscriptions: &'a [PushSubscriptionOut<'a>],
    pub count: usize,
}

/// A removed device.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PushSubscriptionDeleted)]
pub struct PushSubscriptionDeletedOut {
    #[schema(value_type = schema::Id)]
    pub subscription_id: PushSubscriptionId,
}

/// What came of a test push.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = TestPush)]
pub struct TestPushOut {
    #[schema(value_type = schema::Id)]
    pub subscription_id: PushSubscriptionId,
    /// `sent`, `removed` (the push service no longer knows the device) or
    /// `failed`.
    pub result: &'static str,
    /// Why it failed.
    pub error: Option<String>,
}
