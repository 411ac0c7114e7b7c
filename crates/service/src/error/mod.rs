//! The errors of the use cases. Each use case returns an enum of its own
//! that lists what can go wrong with it ([`use_case_error!`]), made of typed
//! causes ([`causes`]). Each cause falls into one class of
//! [`ServiceError`], and the surfaces map the classes, once each, to a
//! status and a body or a page; a caller that needs to tell two outcomes
//! apart matches on the use case's enum.

mod causes;

pub use causes::{
    AccountRule, BadResumePoint, Bug, Busy, Denied, IdempotencyRule, LoopRule, NotReady, OverLimit,
    ReviewState, SlackSignature, Unauthenticated, WebhookRule,
};
pub use common::{CreateError, EditError, ListError, QueryError, ReadError};

use reviewloop_domain::{ChangeError, TransitionError, ValidationError};
use reviewloop_ports::{RateLimitStatus, StoreError};

/// An error a surface can render: it falls into one class of
/// [`ServiceError`]. Every use case's error is one, and so is the class
/// itself (for the surfaces' own failures).
pub trait Failure: Into<ServiceError> + std::fmt::Debug {}

impl Failure for ServiceError {}

// A use case that can fail in one way only returns that cause itself.
impl Failure for StoreError {}
impl Failure for ValidationError {}
impl Failure for Missing {}
impl Failure for NotReady {}
impl Failure for Bug {}
impl Failure for Denied {}
impl Failure for OverLimit {}

/// Declares a use case's error: an enum with one variant per cause that
/// can happen, each a distinct type, converted into from its cause (so `?`
/// works) and into the class the surfaces render.
macro_rules! use_case_error {
    ($(
        $(#[$meta:meta])*
        pub enum $name:ident { $($variant:ident($cause:ty)),+ $(,)? }
    )+) => {$(
        $(#[$meta])*
        #[derive(Debug, thiserror::Error)]
        pub enum $name {
            $(
                #[doc = concat!("See [`", stringify!($cause), "`].")]
                #[error(transparent)]
                $variant(#[from] $cause),
            )+
        }

        impl From<$name> for $crate::ServiceError {
            fn from(error: $name) -> Self {
                match error {
                    $($name::$variant(cause) => cause.into(),)+
                }
            }
        }

        impl $crate::Failure for $name {}
    )+};
}
pub(crate) use use_case_error;

mod common;

/// Messages the specification fixes word for word, and a few of our own
/// that several use cases share.
pub mod messages {
    /// A member tried a creator-only operation.
    pub const LOOP_ACCESS_DENIED: &str = "Access denied to this loop";
    /// Someone other than the requester tried a requester-only operation.
    pub const REQUEST_ACCESS_DENIED: &str = "Access denied to this request";
    /// A non-creator tried to remove a member.
    pub const ONLY_CREATOR_REMOVES: &str = "Only loop creator can remove members";
    /// The creator tried to remove itself.
    pub const CREATOR_CANNOT_REMOVE_SELF: &str = "Loop creator cannot remove themselves";
    /// Deleting a loop that still has open requests, without `force`.
    pub const LOOP_HAS_ACTIVE_REQUESTS: &str = "Cannot delete loop with active requests";
    /// The Authorization header is absent or not a Bearer token.
    pub const MISSING_KEY: &str = "Missing API key: send Authorization: Bearer <key>";
    /// The key is unknown or revoked.
    pub const INVALID_KEY: &str = "Invalid or revoked API key";
    /// The key's account is suspended.
    pub const ACCOUNT_SUSPENDED: &str = "Account suspended";
    /// The key used up its hourly allowance.
    pub const RATE_LIMITED: &str = "Rate limit exceeded";
}

/// What a use case looked for and did not find, or found but may not show
/// the caller (the two are one answer, so nobody learns what exists). The
/// kind, not its message, is what the surfaces tell apart: the alternate
/// surface gives templates, reviews and teams codes of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// A loop (a team on the alternate surface).
    Loop,
    /// A review request.
    Request,
    /// A member of a loop.
    Member,
    /// A loop's invite code.
    InviteCode,
    /// An account.
    User,
    /// An API key.
    ApiKey,
    /// A template.
    Template,
    /// A review.
    Review,
    /// A webhook subscription.
    Webhook,
    /// A webhook delivery.
    Delivery,
    /// A password or sign-in link that is unknown, expired or used.
    Link,
    /// A device subscribed to Web Push.
    PushSubscription,
}

impl Missing {
    /// The message the client reads (the specification fixes some of them
    /// word for word).
    pub fn message(self) -> &'static str {
        match self {
            Self::Loop => "Loop not found",
            Self::Request => "Request not found",
            Self::Member => "Member not found in this loop",
            Self::InviteCode => "Invalid invite code",
            Self::User => "User not found",
            Self::ApiKey => "API key not found",
            Self::Template => "Template not found",
            Self::Review => "Review not found",
            Self::Webhook => "Webhook not found",
            Self::Delivery => "Delivery not found",
            Self::Link => "This link is invalid, expired or already used",
            Self::PushSubscription => "Push subscription not found",
        }
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// The class of a failure: what a client must tell apart, and what the
/// surfaces turn into one status code each.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The input is invalid; the message names every bad field. (400)
    #[error("{0}")]
    Invalid(#[from] ValidationError),
    /// A rule refuses the operation in the resource's current state. (400)
    #[error("{0}")]
    Refused(String),
    /// No usable credentials. (401)
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// Known caller, not allowed. (403)
    #[error("{0}")]
    Forbidden(String),
    /// Absent, or invisible to the caller. (404)
    #[error("{0}")]
    NotFound(Missing),
    /// Lost to the resource's state or to another writer. (409)
    #[error("{0}")]
    Conflict(String),
    /// Well-formed but impossible to honour, such as an idempotency key
    /// reused with another body. (422)
    #[error("{0}")]
    Unprocessable(String),
    /// Over the key's hourly limit. (429)
    #[error("{}", messages::RATE_LIMITED)]
    RateLimited(RateLimitStatus),
    /// The store is overloaded or down; the client may retry. (503)
    #[error("Database unavailable")]
    Unavailable(String),
    /// The instance is stopping; another one answers a retry. (503)
    #[error("Not ready: the instance is stopping")]
    Stopping,
    /// A bug or damaged data; logged in full, shown as a bare 500.
    #[error("Internal server error")]
    Unexpected(String),
}

impl From<StoreError> for ServiceError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(cause) => Self::Unavailable(cause),
            other => Self::Unexpected(other.to_string()),
        }
    }
}

impl From<TransitionError> for ServiceError {
    fn from(error: TransitionError) -> Self {
        match error {
            TransitionError::WrongStatus { .. } => Self::Refused(error.to_string()),
            TransitionError::RequesterExcluded | TransitionError::NotSentToYou => {
                Self::Forbidden(error.to_string())
            }
            // Both mean the service asked for something its own checks rule out.
            TransitionError::NotDue
            | TransitionError::ForeignMember
            | TransitionError::NotSealable => Self::Unexpected(error.to_string()),
            _ => Self::Conflict(error.to_string()),
        }
    }
}

impl From<ChangeError> for ServiceError {
    fn from(error: ChangeError) -> Self {
        match error {
            ChangeError::Transition(e) => e.into(),
            ChangeError::Invalid(e) => e.into(),
        }
    }
}
