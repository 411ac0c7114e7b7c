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
mod fresh;
mod idempotency;
mod loops;
mod notices;
mod one_click;
mod operations;
mod people;
mod ports;
mod principal;
mod push;
mod receipts;
mod requests;
mod reviews;
pub mod signing;
mod slack;
mod templates;
mod watch;
mod webhooks;

#[cfg(test)]
mod testkit;

pub use accounts::{
    AccountService, BootstrapError, CreateKeyError, CreateUserError, CreatedKey, ListKeysError,
    NewKey, RevokeKeyError, SigningSecretError,
};
pub use analytics::{Analytics, AnalyticsError, AnalyticsService, ANALYTICS_WINDOWS};
pub use audit::{
    AuditPage, AuditService, ChainVerdict, VerifyAuditError, AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT,
    LINK_BATCH,
};
pub use auth::{Allowance, AuthError, Authenticator, KeyCache};
pub use delivery::DeliveryService;
pub use error::{
    messages, AccountRule, BadResumePoint, Bug, Busy, CreateError, Denied, EditError, Failure,
    IdempotencyRule, ListError, LoopRule, Missing, NotReady, OverLimit, QueryError, ReadError,
    ReviewState, ServiceError, SlackSignature, Unauthenticated, WebhookRule,
};
pub use events::{EventStream, StreamStartError};
pub use idempotency::{
    IdempotencyError, IdempotencyService, IdempotencyTicket, Idempotent, IN_PROGRESS_RETRY_AFTER,
    STALE_SECONDS,
};
pub use loops::{
    CreateLoopError, DeleteLoopError, InviteCodeError, InviteMemberError, JoinLoopError,
    LoopInvite, LoopPatch, LoopService, NewInviteCodeError, RemoveMemberError, RemovedMember,
    SetNotifyError,
};
pub use notices::{NoticeService, Planned};
pub use one_click::{OneClick, OneClickError, OneClickService, OneClickState};
pub use operations::OperationsService;
pub use people::{
    same_token, PasswordError, PasswordLinkError, PasswordResetError, PeopleService, SignInError,
    SignInThrottle, SignUpError, SignedIn, SignedUp, SignupPolicy, WebSession, ACCOUNT_EXISTS,
    SESSION_COOKIE, SESSION_DAYS, SETUP_LINK_DAYS, WRONG_CREDENTIALS,
};
pub use ports::{
    AccountPorts, AnalyticsPorts, AuditPorts, AuthPorts, DeliveryPorts, EventPorts,
    IdempotencyPorts, LoopPorts, NoticePorts, OneClickPorts, OperationsPorts, PeoplePorts, Ports,
    RequestPorts, ReviewPorts, SlackPorts, TemplatePorts, WebhookPorts,
};
pub use principal::Principal;
pub use push::{DeviceError, PushService, SubscribeError, TestPush, VapidKeyError, MAX_DEVICES};
pub use receipts::{
    PublicKey, ReceiptKeyError, ReceiptKeys, SweepError, REFRESH as RECEIPT_KEY_REFRESH,
};
pub use requests::{
    ChangeRequestError, CreateRequestError, CreatedRequest, Decision, ListLoopRequestsError,
    ListRequestsInput, PassedOver, RequestService, Routing, TestClock, TestClockError,
    TestRulesError,
};
pub use reviews::{
    ChangeReviewError, ListReviewsInput, ReviewService, SendReviewError, MAX_REVIEW_PAGE,
};
pub use slack::{SignedBy, SlackError, SlackOutcome, SlackService};
pub use templates::TemplateService;
pub use watch::{ChangeHub, RequestWatcher};
pub use webhooks::{
    RedeliverError, WebhookInput, WebhookPatch, WebhookService, WebhookView, TEST_EVENT,
};
