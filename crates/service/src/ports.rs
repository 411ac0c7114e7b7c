//! The bundle of ports the services share, built once by the composition root.

use std::sync::Arc;

use reviewloop_domain::EventId;

use crate::receipts::ReceiptKeys;
use crate::watch::ChangeHub;
use reviewloop_ports::{
    AccountStore, AuditStore, Clock, DeliveryQueue, EventFeed, IdSource, IdempotencyStore,
    LoopStore, Mailer, Meter, NoticeQueue, OperationsStore, PasswordHasher, PeopleStore,
    QrRenderer, RateLimiter, RequestStore, ReviewStore, TargetGuard, TemplateStore, WebhookSender,
    WebhookStore,
};

/// Every port, behind `Arc`s so services clone it cheaply.
#[derive(Clone)]
pub struct Ports {
    /// Accounts and keys.
    pub accounts: Arc<dyn AccountStore>,
    /// Loops and members.
    pub loops: Arc<dyn LoopStore>,
    /// Review requests.
    pub requests: Arc<dyn RequestStore>,
    /// Outcomes of retried create calls.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Reviews and their assignees.
    pub reviews: Arc<dyn ReviewStore>,
    /// Templates (reusable forms).
    pub templates: Arc<dyn TemplateStore>,
    /// Webhook subscriptions and their delivery records.
    pub webhooks: Arc<dyn WebhookStore>,
    /// The queue from the outbox to the receivers.
    pub deliveries: Arc<dyn DeliveryQueue>,
    /// Makes the POSTs (webhooks, callbacks, Slack).
    pub sender: Arc<dyn WebhookSender>,
    /// Emails and Slack messages waiting to be sent.
    pub notices: Arc<dyn NoticeQueue>,
    /// Sends email; `None` when no SMTP server is configured.
    pub mailer: Option<Arc<dyn Mailer>>,
    /// The outbox read as a stream.
    pub feed: Arc<dyn EventFeed>,
    /// Keeps webhook and callback targets off internal addresses.
    pub guard: Arc<dyn TargetGuard>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Randomness.
    pub ids: Arc<dyn IdSource>,
    /// QR codes.
    pub qr: Arc<dyn QrRenderer>,
    /// Per-key call counting.
    pub limiter: Arc<dyn RateLimiter>,
    /// Passwords, sessions and password links of the web application.
    pub people: Arc<dyn PeopleStore>,
    /// Slow password hashing.
    pub passwords: Arc<dyn PasswordHasher>,
    /// Wakes waiting readers when what they wait for changes.
    pub changes: Arc<ChangeHub>,
    /// Database health and queue depths, for operators.
    pub operations: Arc<dyn OperationsStore>,
    /// Counts what happens, for `/metrics`.
    pub meter: Arc<dyn Meter>,
    /// The accounts' audit logs.
    pub audit: Arc<dyn AuditStore>,
    /// The keys that sign decision receipts.
    pub receipts: Arc<ReceiptKeys>,
}

impl Ports {
    /// Refuses a target the service must not call (an internal address,
    /// unless the operator allows them), naming the `field` it came in.
    pub(crate) async fn check_target(
        &self,
        field: &str,
        url: &str,
    ) -> Result<(), reviewloop_domain::ValidationError> {
        self.guard.check(url).await.map_err(|why| {
            reviewloop_domain::ValidationError::field(
                field,
                format!("{field} is not allowed: {why}"),
            )
        })
    }

    /// True when email can be sent.
    pub fn email_enabled(&self) -> bool {
        self.mailer.is_some()
    }

    pub(crate) fn event_id(&self, now: chrono::DateTime<chrono::Utc>) -> EventId {
        EventId::new(self.ids.object_id(now))
    }
}
