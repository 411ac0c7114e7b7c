//! Ports of event delivery: subscriptions, the delivery queue, the HTTP
//! sender and the guard that keeps deliveries off internal addresses.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::{
    Delivery, DeliveryAttempt, DeliveryId, Event, EventId, Notice, UserId, Webhook, WebhookId,
};

use crate::StoreError;

/// Webhook subscriptions and the record of their deliveries.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Adds a subscription.
    async fn insert_webhook(&self, webhook: &Webhook) -> Result<(), StoreError>;
    /// One subscription.
    async fn webhook_by_id(&self, id: &WebhookId) -> Result<Option<Webhook>, StoreError>;
    /// An account's subscriptions, newest first.
    async fn webhooks_of(&self, account: &UserId) -> Result<Vec<Webhook>, StoreError>;
    /// Writes url, events, secret, description, active, disabled reason;
    /// `NotFound` when it is gone.
    async fn update_webhook(&self, webhook: &Webhook) -> Result<(), StoreError>;
    /// Deletes a subscription with its deliveries.
    async fn delete_webhook(&self, id: &WebhookId) -> Result<(), StoreError>;
    /// A subscription's latest deliveries, newest first, each with its attempts.
    async fn deliveries_of(
        &self,
        webhook: &WebhookId,
        limit: u32,
    ) -> Result<Vec<(Delivery, Vec<DeliveryAttempt>)>, StoreError>;
    /// One delivery.
    async fn delivery_by_id(&self, id: &DeliveryId) -> Result<Option<Delivery>, StoreError>;
    /// Writes a delivery that [`Delivery::redeliver`] put back in the queue,
    /// if the stored one has still ended: `Conflict` when a worker took it up
    /// meanwhile, `NotFound` when it is gone.
    async fn redeliver(&self, delivery: &Delivery) -> Result<(), StoreError>;
}

/// What dispatching one event writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// The event.
    pub event: EventId,
    /// Its deliveries, each with the exact body to send.
    pub deliveries: Vec<(Delivery, String)>,
    /// The notices it causes (emails and Slack messages of a new request).
    pub notices: Vec<Notice>,
    /// The one-click answer links those emails carry.
    pub answer_links: Vec<reviewloop_domain::AnswerLink>,
}

/// How many deliveries to each URL one worker may have in flight: a
/// receiver that is slow or down holds a few slots, never all of them,
/// while one that answers quickly may be sent more at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetShares {
    /// Each URL's share, unless `per_url` names it.
    pub per_target: u32,
    /// URLs with a share of their own.
    pub per_url: std::collections::HashMap<String, u32>,
    /// What the worker already has in flight, per URL.
    pub in_flight: std::collections::HashMap<String, u32>,
}

impl TargetShares {
    /// `per_target` for every URL, nothing in flight.
    pub fn each(per_target: u32) -> Self {
        Self {
            per_target,
            ..Self::default()
        }
    }

    /// `url`'s share.
    pub fn share(&self, url: &str) -> u32 {
        self.per_url.get(url).copied().unwrap_or(self.per_target)
    }

    /// The largest share of any URL.
    pub fn most(&self) -> u32 {
        self.per_url
            .values()
            .copied()
            .fold(self.per_target, u32::max)
    }
}

/// A delivery handed to one worker until `leased_until`.
#[derive(Debug, Clone, PartialEq)]
pub struct LeasedDelivery {
    /// The delivery as it stands.
    pub delivery: Delivery,
    /// The exact body to send.
    pub payload: String,
    /// Until when this worker holds it.
    pub leased_until: DateTime<Utc>,
}

/// How a subscription fared in an attempt, for its health record.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookHealth {
    /// The subscription.
    pub webhook_id: WebhookId,
    /// Whether the attempt succeeded (clears the failing streak).
    pub success: bool,
    /// When the attempt was made (starts a failing streak).
    pub at: DateTime<Utc>,
    /// A streak of failures that began at or before this disables the subscription…
    pub disable_if_failing_since: DateTime<Utc>,
    /// …with this reason.
    pub disable_reason: String,
}

/// The queue between the outbox and the receivers.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Events not dispatched yet, oldest first.
    async fn undispatched_events(&self, limit: u32) -> Result<Vec<Event>, StoreError>;
    /// The active subscriptions of these accounts.
    async fn active_webhooks_of(&self, accounts: &[UserId]) -> Result<Vec<Webhook>, StoreError>;
    /// Writes each event's deliveries (with their bodies) and notices and
    /// marks it dispatched, all in one transaction, skipping every event
    /// another dispatcher already took; returns how many this call
    /// dispatched.
    async fn dispatch_all(
        &self,
        events: &[Dispatch],
        now: DateTime<Utc>,
    ) -> Result<usize, StoreError>;
    /// Takes up to `limit` due deliveries (pending, due, not leased, and
    /// not for a disabled subscription), leasing them until `lease_until`.
    /// No URL gets more than its share of `shares` in flight in all,
    /// counting what the caller already has.
    async fn lease_due(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
        shares: &TargetShares,
    ) -> Result<Vec<LeasedDelivery>, StoreError>;
    /// Records an attempt and the delivery's new state (lease released),
    /// and the subscription's health, in one transaction; `Conflict` when
    /// the lease `leased_until` is no longer this worker's.
    async fn record_attempt(
        &self,
        delivery: &Delivery,
        attempt: &DeliveryAttempt,
        health: Option<WebhookHealth>,
        leased_until: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Deletes up to `limit` records that only history needs, created
    /// before `before`: finished deliveries (with their attempts), and
    /// dispatched events (never the newest, whose position the stream goes
    /// on from). Returns how many rows it deleted.
    async fn purge_history(&self, before: DateTime<Utc>, limit: u32) -> Result<u64, StoreError>;
}

/// One HTTP POST to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Where.
    pub url: String,
    /// Headers, signatures included.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

/// What came of a POST.
#[derive(Debug, Clone, PartialEq)]
pub struct SendOutcome {
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// How long it took.
    pub latency_ms: u64,
    /// Why it failed (no answer, refused target, time-out), if it did.
    pub error: Option<String>,
}

impl SendOutcome {
    /// A 2xx answer.
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Makes webhook and callback POSTs: time-limited, no redirects, and never
/// to an internal address unless the operator allowed it.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookSender: Send + Sync {
    /// POSTs `outgoing` once.
    async fn send(&self, outgoing: &Outgoing) -> SendOutcome;
}

/// Checks where a webhook or callback URL points before it is accepted.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait TargetGuard: Send + Sync {
    /// `Err(why)` when the URL names or resolves to a loopback, private,
    /// link-local, multicast or unspecified address (and that is not
    /// allowed). A name that does not resolve now is accepted: delivery
    /// checks again.
    async fn check(&self, url: &str) -> Result<(), String>;
}

/// The outbox read as a stream, for clients that listen instead of
/// receiving webhooks.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait EventFeed: Send + Sync {
    /// An account's events committed after position `after`, in commit
    /// order, each with its position.
    async fn events_after(
        &self,
        account: &UserId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Event)>, StoreError>;
    /// The position of the newest event (0 when there is none).
    async fn last_position(&self) -> Result<i64, StoreError>;
    /// Gives up to `limit` committed events that have no position yet the
    /// next positions, oldest first; returns how many it numbered. Events
    /// are visible to [`EventFeed::events_after`] only once numbered, and
    /// numbering runs one transaction at a time, so a position is never
    /// given below one a reader may already have passed.
    async fn number_new_events(&self, limit: u32) -> Result<usize, StoreError>;
}
