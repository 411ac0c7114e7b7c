//! The ports of reviewloop's core: what the use cases need from the world
//! (storage with a transactional outbox, time, randomness, rate limiting, QR
//! rendering), as traits. Adapters implement them; the `mock` feature adds
//! mockall mocks for unit tests of the services.

mod audit;
mod error;
mod idempotency;
mod notices;
mod operations;
mod people;
mod push;
mod receipts;
mod reviews;
mod slack;
mod stores;
mod system;
pub mod tally;
mod templates;
mod webhooks;

pub use audit::AuditStore;
pub use error::StoreError;
pub use idempotency::{IdempotencyBegin, IdempotencyStore};
pub use notices::{AnswerLinkStore, LeasedNotice, Mail, Mailer, NoticeQueue};
pub use operations::{AttemptResult, Backlog, Meter, NoMeter, OperationsStore, Queue};
pub use people::{HashError, PasswordHasher, PeopleStore, Session};
pub use push::{PushFailure, PushGateway, PushStore, WebPush};
pub use receipts::{ReceiptKey, ReceiptKeyStore};
pub use reviews::{ReviewPage, ReviewQuery, ReviewScope, ReviewStore};
pub use slack::{SlackApi, SlackFailure, SlackPost, SlackStore};
pub use stores::{
    AccountStore, InboxView, LoopStore, RequestFacts, RequestPage, RequestQuery, RequestSort,
    RequestStore,
};
pub use system::{Clock, IdSource, QrError, QrRenderer, RateLimitStatus, RateLimiter, RateWindow};
pub use templates::TemplateStore;
pub use webhooks::{
    DeliveryQueue, Dispatch, EventFeed, LeasedDelivery, Outgoing, SendOutcome, TargetGuard,
    TargetShares, WebhookHealth, WebhookSender, WebhookStore,
};

#[cfg(feature = "mock")]
pub use audit::MockAuditStore;
#[cfg(feature = "mock")]
pub use idempotency::MockIdempotencyStore;
#[cfg(feature = "mock")]
pub use notices::{MockAnswerLinkStore, MockMailer, MockNoticeQueue};
#[cfg(feature = "mock")]
pub use operations::MockOperationsStore;
#[cfg(feature = "mock")]
pub use people::{MockPasswordHasher, MockPeopleStore};
#[cfg(feature = "mock")]
pub use push::{MockPushGateway, MockPushStore};
#[cfg(feature = "mock")]
pub use receipts::MockReceiptKeyStore;
#[cfg(feature = "mock")]
pub use reviews::MockReviewStore;
#[cfg(feature = "mock")]
pub use slack::{MockSlackApi, MockSlackStore};
#[cfg(feature = "mock")]
pub use stores::{MockAccountStore, MockLoopStore, MockRequestStore};
#[cfg(feature = "mock")]
pub use system::{MockClock, MockIdSource, MockQrRenderer, MockRateLimiter};
#[cfg(feature = "mock")]
pub use templates::MockTemplateStore;
#[cfg(feature = "mock")]
pub use webhooks::{
    MockDeliveryQueue, MockEventFeed, MockTargetGuard, MockWebhookSender, MockWebhookStore,
};
