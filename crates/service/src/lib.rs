//! reviewloop's use cases, written against the ports only: accounts and API
//! keys, loops and membership, review requests and their lifecycle. Every
//! rule about who may do what lives here, so every adapter and every
//! surface gets it for free.

mod accounts;
mod analytics;
mod audit;
mod auth;
mod delivery;
mod error;
mod events;
mod idempotency;
mod loops;
mod notices;
mod operations;
mod people;
mod ports;
mod principal;
mod receipts;
mod requests;
mod reviews;
pub mod signing;
mod templates;
mod watch;
mod webhooks;

#[cfg(test)]
mod testkit;

pub use accounts::{AccountService, CreatedKey, NewKey};
pub use analytics::{Analytics, AnalyticsService, ANALYTICS_WINDOWS};
pub use audit::{
    AuditPage, AuditService, ChainVerdict, AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT, LINK_BATCH,
};
pub use auth::{Allowance, Authenticator, KeyCache};
pub use delivery::DeliveryService;
pub use error::{messages, Missing, ServiceError};
pub use events::EventStream;
pub use idempotency::{IdempotencyService, IdempotencyTicket, Idempotent};
pub use loops::{LoopInvite, LoopPatch, LoopService, RemovedMember};
pub use notices::NoticeService;
pub use operations::OperationsService;
pub use people::{
    PeopleService, SignInThrottle, SignedIn, SignedUp, SignupPolicy, WebSession, ACCOUNT_EXISTS,
    SESSION_DAYS, SETUP_LINK_DAYS, WRONG_CREDENTIALS,
};
pub use ports::{
    AccountPorts, AnalyticsPorts, AuditPorts, AuthPorts, DeliveryPorts, EventPorts,
    IdempotencyPorts, LoopPorts, NoticePorts, OperationsPorts, PeoplePorts, Ports, RequestPorts,
    ReviewPorts, TemplatePorts, WebhookPorts,
};
pub use principal::Principal;
pub use receipts::{PublicKey, ReceiptKeys, REFRESH as RECEIPT_KEY_REFRESH};
pub use requests::{
    CreatedRequest, Decision, ListRequestsInput, PassedOver, RequestService, Routing, TestClock,
};
pub use reviews::{ListReviewsInput, ReviewService, MAX_REVIEW_PAGE};
pub use templates::TemplateService;
pub use watch::{ChangeHub, RequestWatcher};
pub use webhooks::{WebhookInput, WebhookPatch, WebhookService, WebhookView, TEST_EVENT};
