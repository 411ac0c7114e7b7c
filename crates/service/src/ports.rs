//! The ports each service holds. Every service names the few it uses in a
//! struct of its own ([`RequestPorts`], [`LoopPorts`], ...), so its unit
//! tests mock only those; [`Ports`] is every port at once, which the
//! composition root builds and hands out (`RequestPorts::from(&ports)`).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use reviewloop_domain::{EventId, ValidationError};
use reviewloop_ports::{
    AccountStore, AnswerLinkStore, AuditStore, Clock, DeliveryQueue, EventFeed, IdSource,
    IdempotencyStore, LoopStore, Mailer, Meter, NoticeQueue, OperationsStore, PasswordHasher,
    PeopleStore, PushGateway, PushStore, QrRenderer, RateLimiter, RequestStore, ReviewStore,
    SlackApi, SlackStore, TargetGuard, TemplateStore, WebhookSender, WebhookStore,
};

use crate::receipts::ReceiptKeys;
use crate::watch::ChangeHub;

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
    /// One-click answer links sent by email.
    pub answer_links: Arc<dyn AnswerLinkStore>,
    /// Slack's Web API, for loops' Slack apps.
    pub slack: Arc<dyn SlackApi>,
    /// What loops' Slack apps posted, and the apps.
    pub slack_posts: Arc<dyn SlackStore>,
    /// People's Web Push devices and the server's VAPID key.
    pub push: Arc<dyn PushStore>,
    /// Encrypts, signs and delivers pushes.
    pub push_gateway: Arc<dyn PushGateway>,
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
    /// True when email can be sent.
    pub fn email_enabled(&self) -> bool {
        self.mailer.is_some()
    }
}

/// Declares the ports one service holds: a struct of some of [`Ports`]'
/// fields, taken from the bundle by `From<&Ports>`, and (in unit tests)
/// from the test kit, which then makes mocks of those ports only.
macro_rules! service_ports {
    ($(#[$doc:meta])* $name:ident { $($field:ident: $ty:ty),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[allow(missing_docs)] // Each field is the port of the same name in `Ports`.
        pub struct $name {
            $(pub $field: $ty),+
        }

        impl From<&Ports> for $name {
            fn from(all: &Ports) -> Self {
                Self {
                    $($field: all.$field.clone()),+
                }
            }
        }

        #[cfg(test)]
        impl crate::testkit::FromKit for $name {
            fn from_kit(kit: &mut crate::testkit::Wiring) -> Self {
                Self {
                    $($field: kit.$field()),+
                }
            }
        }
    };
}

service_ports!(
    /// What [`crate::AccountService`] uses.
    AccountPorts {
        accounts: Arc<dyn AccountStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::AnalyticsService`] uses.
    AnalyticsPorts {
        loops: Arc<dyn LoopStore>,
        requests: Arc<dyn RequestStore>,
        clock: Arc<dyn Clock>,
    }
);

service_ports!(
    /// What [`crate::AuditService`] uses.
    AuditPorts {
        audit: Arc<dyn AuditStore>,
        accounts: Arc<dyn AccountStore>,
    }
);

service_ports!(
    /// What [`crate::Authenticator`] uses.
    AuthPorts {
        accounts: Arc<dyn AccountStore>,
        limiter: Arc<dyn RateLimiter>,
        people: Arc<dyn PeopleStore>,
        clock: Arc<dyn Clock>,
    }
);

service_ports!(
    /// What [`crate::DeliveryService`] uses.
    DeliveryPorts {
        deliveries: Arc<dyn DeliveryQueue>,
        accounts: Arc<dyn AccountStore>,
        webhooks: Arc<dyn WebhookStore>,
        sender: Arc<dyn WebhookSender>,
        meter: Arc<dyn Meter>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::EventStream`] uses.
    EventPorts {
        feed: Arc<dyn EventFeed>,
        changes: Arc<ChangeHub>,
    }
);

service_ports!(
    /// What [`crate::IdempotencyService`] uses.
    IdempotencyPorts {
        idempotency: Arc<dyn IdempotencyStore>,
        clock: Arc<dyn Clock>,
    }
);

service_ports!(
    /// What [`crate::LoopService`] uses.
    LoopPorts {
        loops: Arc<dyn LoopStore>,
        requests: Arc<dyn RequestStore>,
        accounts: Arc<dyn AccountStore>,
        qr: Arc<dyn QrRenderer>,
        guard: Arc<dyn TargetGuard>,
        mailer: Option<Arc<dyn Mailer>>,
        changes: Arc<ChangeHub>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::NoticeService`] uses.
    NoticePorts {
        notices: Arc<dyn NoticeQueue>,
        slack: Arc<dyn SlackApi>,
        slack_posts: Arc<dyn SlackStore>,
        push: Arc<dyn PushStore>,
        push_gateway: Arc<dyn PushGateway>,
        loops: Arc<dyn LoopStore>,
        requests: Arc<dyn RequestStore>,
        reviews: Arc<dyn ReviewStore>,
        sender: Arc<dyn WebhookSender>,
        mailer: Option<Arc<dyn Mailer>>,
        meter: Arc<dyn Meter>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::PushService`] uses.
    PushPorts {
        push: Arc<dyn PushStore>,
        push_gateway: Arc<dyn PushGateway>,
        guard: Arc<dyn TargetGuard>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::SlackService`] uses.
    SlackPorts {
        slack: Arc<dyn SlackApi>,
        slack_posts: Arc<dyn SlackStore>,
        requests: Arc<dyn RequestStore>,
        loops: Arc<dyn LoopStore>,
        accounts: Arc<dyn AccountStore>,
        clock: Arc<dyn Clock>,
    }
);

service_ports!(
    /// What [`crate::OneClickService`] uses.
    OneClickPorts {
        answer_links: Arc<dyn AnswerLinkStore>,
        requests: Arc<dyn RequestStore>,
        loops: Arc<dyn LoopStore>,
        accounts: Arc<dyn AccountStore>,
        clock: Arc<dyn Clock>,
    }
);

service_ports!(
    /// What [`crate::OperationsService`] uses.
    OperationsPorts {
        operations: Arc<dyn OperationsStore>,
        meter: Arc<dyn Meter>,
        clock: Arc<dyn Clock>,
        changes: Arc<ChangeHub>,
    }
);

service_ports!(
    /// What [`crate::PeopleService`] uses.
    PeoplePorts {
        people: Arc<dyn PeopleStore>,
        accounts: Arc<dyn AccountStore>,
        passwords: Arc<dyn PasswordHasher>,
        mailer: Option<Arc<dyn Mailer>>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
        // Joining a loop on sign-up is the loop service's.
        loops: Arc<dyn LoopStore>,
        requests: Arc<dyn RequestStore>,
        qr: Arc<dyn QrRenderer>,
        guard: Arc<dyn TargetGuard>,
        changes: Arc<ChangeHub>,
    }
);

service_ports!(
    /// What [`crate::RequestService`] uses.
    RequestPorts {
        requests: Arc<dyn RequestStore>,
        meter: Arc<dyn Meter>,
        loops: Arc<dyn LoopStore>,
        guard: Arc<dyn TargetGuard>,
        mailer: Option<Arc<dyn Mailer>>,
        receipts: Arc<ReceiptKeys>,
        changes: Arc<ChangeHub>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::ReviewService`] uses.
    ReviewPorts {
        reviews: Arc<dyn ReviewStore>,
        templates: Arc<dyn TemplateStore>,
        loops: Arc<dyn LoopStore>,
        accounts: Arc<dyn AccountStore>,
        guard: Arc<dyn TargetGuard>,
        changes: Arc<ChangeHub>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::TemplateService`] uses.
    TemplatePorts {
        templates: Arc<dyn TemplateStore>,
        changes: Arc<ChangeHub>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

service_ports!(
    /// What [`crate::WebhookService`] uses.
    WebhookPorts {
        webhooks: Arc<dyn WebhookStore>,
        sender: Arc<dyn WebhookSender>,
        guard: Arc<dyn TargetGuard>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    }
);

impl From<&PeoplePorts> for LoopPorts {
    fn from(p: &PeoplePorts) -> Self {
        Self {
            loops: p.loops.clone(),
            requests: p.requests.clone(),
            accounts: p.accounts.clone(),
            qr: p.qr.clone(),
            guard: p.guard.clone(),
            mailer: p.mailer.clone(),
            changes: p.changes.clone(),
            clock: p.clock.clone(),
            ids: p.ids.clone(),
        }
    }
}

/// Refuses a target the service must not call (an internal address,
/// unless the operator allows them), naming the `field` it came in.
pub(crate) async fn check_target(
    guard: &dyn TargetGuard,
    field: &str,
    url: &str,
) -> Result<(), ValidationError> {
    guard
        .check(url)
        .await
        .map_err(|why| ValidationError::field(field, format!("{field} is not allowed: {why}")))
}

/// A fresh event id, ordered by `now`.
pub(crate) fn event_id(ids: &dyn IdSource, now: DateTime<Utc>) -> EventId {
    EventId::new(ids.object_id(now))
}
