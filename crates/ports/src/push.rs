//! Web Push: where devices' subscriptions and the VAPID key are kept, and
//! the push services that carry pushes to devices.

use async_trait::async_trait;
use reviewloop_domain::{PushSubscription, PushSubscriptionId, UserId, VapidKey};

use crate::StoreError;

/// Where subscriptions and the server's VAPID key pair are kept.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PushStore: Send + Sync {
    /// The VAPID key pair, if one was made.
    async fn vapid_key(&self) -> Result<Option<VapidKey>, StoreError>;
    /// Keeps `key` unless a key pair exists already (two instances starting
    /// at once make one pair between them).
    async fn insert_first_vapid_key(&self, key: &VapidKey) -> Result<(), StoreError>;
    /// Replaces the key pair and removes every subscription (made with the
    /// old public key, they can no longer be pushed to), in one
    /// transaction; answers how many were removed.
    async fn replace_vapid_key(&self, key: &VapidKey) -> Result<u64, StoreError>;
    /// Keeps a subscription. An endpoint names one browser profile: when
    /// it is kept already, the existing row (and its id) is given to
    /// `subscription`'s person, keys and device; the kept subscription is
    /// returned.
    async fn save_push_subscription(
        &self,
        subscription: &PushSubscription,
    ) -> Result<PushSubscription, StoreError>;
    /// The subscriptions of these people, oldest first.
    async fn push_subscriptions_of(
        &self,
        users: &[UserId],
    ) -> Result<Vec<PushSubscription>, StoreError>;
    /// One subscription.
    async fn push_subscription(
        &self,
        id: &PushSubscriptionId,
    ) -> Result<Option<PushSubscription>, StoreError>;
    /// Removes one; `false` when it was gone already.
    async fn delete_push_subscription(&self, id: &PushSubscriptionId) -> Result<bool, StoreError>;
}

/// One push on its way to one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPush {
    /// The device's subscription: where, and the keys to encrypt for it.
    pub subscription: PushSubscription,
    /// The plain payload (JSON), encrypted on the way.
    pub payload: Vec<u8>,
    /// Seconds the push service keeps it for an offline device.
    pub ttl: u32,
    /// `very-low`, `low`, `normal` or `high`.
    pub urgency: &'static str,
    /// Pushes with the same topic replace each other while undelivered.
    pub topic: Option<String>,
}

/// Why a push service did not take a push, in words without secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushFailure {
    /// 404 or 410: the subscription expired or was withdrawn.
    #[error("the push service no longer knows the device: {0}")]
    Gone(String),
    /// The push service refused it for good (a bad request, a refused
    /// signature, a target the guard refuses).
    #[error("{0}")]
    Refused(String),
    /// No answer, an error of the push service's own, or a request to
    /// slow down: worth trying again later.
    #[error("{0}")]
    Unreachable(String),
}

/// Encrypts pushes (RFC 8291), signs them with the VAPID key (RFC 8292)
/// and delivers them to push services (RFC 8030).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PushGateway: Send + Sync {
    /// Delivers `push`, signed with `key` (on behalf of the operator's
    /// contact, which is the adapter's to know).
    async fn push(&self, key: &VapidKey, push: &WebPush) -> Result<(), PushFailure>;
    /// A new key pair, from the operating system's randomness.
    fn new_vapid_key(&self) -> Result<VapidKey, String>;
    /// Whether `p256dh` is a point on P-256 (pushes to it can be
    /// encrypted).
    fn is_device_key(&self, p256dh: &[u8]) -> bool;
}
