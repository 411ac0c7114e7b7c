//! The causes a use case's error is made of: each a type of its own, so a
//! caller matches on what happened and never on a message. Each maps to
//! one class of [`ServiceError`], which is what the surfaces render.

use reviewloop_domain::{Email, Permission, TransitionError};
use reviewloop_ports::RateLimitStatus;

use super::{messages, ServiceError};

/// No usable credentials. (401)
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unauthenticated {
    /// No `Authorization: Bearer` header.
    #[error("{}", messages::MISSING_KEY)]
    MissingKey,
    /// The key is unknown or revoked.
    #[error("{}", messages::INVALID_KEY)]
    InvalidKey,
    /// A call with neither an API key nor a web session.
    #[error("{}", MISSING_KEY_OR_SESSION)]
    MissingKeyOrSession,
    /// A web session's call without its anti-forgery token, or with
    /// another one (a page of another site cannot know it).
    #[error("{}", BAD_CSRF_TOKEN)]
    BadCsrfToken,
    /// A sign-in with an unknown email or a wrong password (one answer for
    /// both, so nobody learns which accounts exist).
    #[error("{}", crate::people::WRONG_CREDENTIALS)]
    WrongCredentials,
}

/// A call that says it comes from Slack and cannot prove it. (401)
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SlackSignature {
    /// No `X-Slack-Request-Timestamp` or `X-Slack-Signature`.
    #[error("Missing Slack signature: send X-Slack-Request-Timestamp and X-Slack-Signature")]
    Missing,
    /// A timestamp more than five minutes from now (a replay, or a bad clock).
    #[error("Slack request timestamp is more than five minutes off")]
    Stale,
    /// A signature no loop's signing secret made.
    #[error("Invalid Slack signature")]
    Forged,
}

/// A known caller asked for something it may not do. (403)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// The key lacks a permission.
    #[error("Insufficient permissions: requires {0}")]
    Permission(Permission),
    /// A test-mode key asked for something that involves people or live
    /// data: the words name what.
    #[error("Test-mode keys cannot use {0}: use a live key")]
    TestKey(&'static str),
    /// A live key asked for the test clock.
    #[error(
        "The test clock belongs to test mode: use a key made with reviewloop key create --test"
    )]
    LiveKey,
    /// A member tried a creator-only change of a loop.
    #[error("{}", messages::LOOP_ACCESS_DENIED)]
    LoopAccess,
    /// A reviewer tried a requester-only change of a request.
    #[error("{}", messages::REQUEST_ACCESS_DENIED)]
    RequestAccess,
    /// A member who is not the creator tried to remove someone.
    #[error("{}", messages::ONLY_CREATOR_REMOVES)]
    OnlyCreatorRemoves,
    /// The account is suspended.
    #[error("{}", messages::ACCOUNT_SUSPENDED)]
    AccountSuspended,
    /// Someone other than a review's sender tried to change it.
    #[error("Only the sender of a review can change or cancel it")]
    NotReviewSender,
    /// Someone neither assigned nor in the review's team tried to answer it.
    #[error("Only an assignee or an active member of its team can answer this review")]
    NotReviewAnswerer,
    /// An API key tried to manage API keys.
    #[error("API keys are managed by a person signed in to the web application")]
    KeysNeedPerson,
    /// An API key tried to set up a Slack app, whose signing secret can
    /// speak for every member of the loop.
    #[error("A Slack app is set up by a person signed in to the web application")]
    SlackAppNeedsPerson,
}

/// Every try to write lost to another writer. (409)
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Busy {
    /// A review request.
    #[error("Request is being changed by someone else; try again")]
    Request,
    /// A loop.
    #[error("The loop is being changed by someone else; try again")]
    Loop,
    /// A review (told as a 503: the client may retry it as it is).
    #[error("review kept changing; try again")]
    Review,
}

/// A rule about loops and their members refuses the change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopRule {
    /// Deleting a loop with open requests, without `force`. (400)
    #[error("{}", messages::LOOP_HAS_ACTIVE_REQUESTS)]
    HasActiveRequests,
    /// The creator tried to remove itself. (400)
    #[error("{}", messages::CREATOR_CANNOT_REMOVE_SELF)]
    CreatorStays,
    /// Inviting someone who is an active member already. (409)
    #[error("User is already an active member of this loop")]
    AlreadyMember,
}

/// A rule about accounts and keys refuses the change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountRule {
    /// An account with that email exists. (409)
    #[error("A user with email {0} already exists")]
    EmailTaken(Email),
    /// A sign-up with an email that has an account. (409)
    #[error("{}", crate::people::ACCOUNT_EXISTS)]
    AccountExists,
    /// The server cannot send email, so it cannot send a reset link. (400)
    #[error("{}", crate::people::NO_EMAIL)]
    NoEmail,
    /// A key id that is not one. (400)
    #[error("{0}")]
    BadKeyId(String),
}

/// A review could not change state, in the words of the review surface.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReviewState {
    /// Another reviewer started it. (409)
    #[error("Review already started by another reviewer")]
    StartedByOther,
    /// It is completed or cancelled. (409)
    #[error("Review is not open")]
    NotOpen,
    /// The change needs another state. (400)
    #[error("Review is {status}; only {allowed} reviews can be {action}")]
    WrongStatus {
        /// Its status now.
        status: String,
        /// The statuses that allow the change, in words.
        allowed: &'static str,
        /// The change, in the past participle.
        action: &'static str,
    },
    /// Any other refusal of the domain, as it words it.
    #[error(transparent)]
    Other(TransitionError),
}

impl From<TransitionError> for ReviewState {
    fn from(error: TransitionError) -> Self {
        match error {
            TransitionError::AlreadyClaimed => Self::StartedByOther,
            TransitionError::NotOpen => Self::NotOpen,
            TransitionError::WrongStatus {
                status,
                allowed,
                action,
            } => Self::WrongStatus {
                status,
                allowed,
                action,
            },
            other => Self::Other(other),
        }
    }
}

/// A rule about webhooks refuses the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WebhookRule {
    /// Redelivering through a webhook that is turned off. (409)
    #[error("Webhook is disabled; turn it on (active: true) first")]
    Disabled,
}

/// Why an `Idempotency-Key` cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyRule {
    /// The key is not a usable key. (400)
    #[error("Idempotency-Key must be 1 to {max} characters")]
    BadKey {
        /// The longest key accepted.
        max: usize,
    },
    /// A web session has no API key to scope it to. (400)
    #[error("Idempotency-Key needs an API key")]
    NeedsApiKey,
    /// The key was used before with another body. (422)
    #[error("Idempotency key reused with a different body")]
    Reused,
    /// The first request with the key is still running. (409)
    #[error("A request with this Idempotency-Key is still being processed")]
    InProgress,
}

/// The event stream cannot resume where the client asked. (400)
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Last-Event-ID must be an event id from this stream")]
pub struct BadResumePoint;

/// The key used up its hourly allowance. (429)
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", messages::RATE_LIMITED)]
pub struct OverLimit(pub RateLimitStatus);

/// The instance cannot serve now. (503)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    /// The database does not answer.
    #[error("not ready: {0}")]
    Store(String),
    /// The instance is stopping (after SIGTERM): calls go elsewhere.
    #[error("not ready: the instance is stopping")]
    Stopping,
}

/// A bug or damaged data: what the service's own checks should have ruled
/// out. Logged in full, shown as a bare 500.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Bug(pub String);

impl Bug {
    /// A bug described by `what`.
    pub fn new(what: impl Into<String>) -> Self {
        Self(what.into())
    }
}

const MISSING_KEY_OR_SESSION: &str = "Missing credentials: send Authorization: Bearer <API key>, \
     or call from a signed-in page with its X-CSRF-Token header";
const BAD_CSRF_TOKEN: &str = "The web session's X-CSRF-Token header is missing or wrong";

impl From<Unauthenticated> for ServiceError {
    fn from(cause: Unauthenticated) -> Self {
        Self::Unauthenticated(match cause {
            Unauthenticated::MissingKey => messages::MISSING_KEY,
            Unauthenticated::InvalidKey => messages::INVALID_KEY,
            Unauthenticated::WrongCredentials => crate::people::WRONG_CREDENTIALS,
            Unauthenticated::MissingKeyOrSession => MISSING_KEY_OR_SESSION,
            Unauthenticated::BadCsrfToken => BAD_CSRF_TOKEN,
        })
    }
}

impl From<SlackSignature> for ServiceError {
    fn from(cause: SlackSignature) -> Self {
        Self::Unauthenticated(match cause {
            SlackSignature::Missing => {
                "Missing Slack signature: send X-Slack-Request-Timestamp and X-Slack-Signature"
            }
            SlackSignature::Stale => "Slack request timestamp is more than five minutes off",
            SlackSignature::Forged => "Invalid Slack signature",
        })
    }
}

impl From<Denied> for ServiceError {
    fn from(cause: Denied) -> Self {
        Self::Forbidden(cause.to_string())
    }
}

impl From<Busy> for ServiceError {
    fn from(cause: Busy) -> Self {
        match cause {
            Busy::Request | Busy::Loop => Self::Conflict(cause.to_string()),
            Busy::Review => Self::Unavailable(cause.to_string()),
        }
    }
}

impl From<LoopRule> for ServiceError {
    fn from(cause: LoopRule) -> Self {
        match cause {
            LoopRule::AlreadyMember => Self::Conflict(cause.to_string()),
            LoopRule::HasActiveRequests | LoopRule::CreatorStays => {
                Self::Refused(cause.to_string())
            }
        }
    }
}

impl From<AccountRule> for ServiceError {
    fn from(cause: AccountRule) -> Self {
        match cause {
            AccountRule::EmailTaken(_) | AccountRule::AccountExists => {
                Self::Conflict(cause.to_string())
            }
            AccountRule::NoEmail | AccountRule::BadKeyId(_) => Self::Refused(cause.to_string()),
        }
    }
}

impl From<ReviewState> for ServiceError {
    fn from(cause: ReviewState) -> Self {
        match cause {
            ReviewState::StartedByOther | ReviewState::NotOpen => Self::Conflict(cause.to_string()),
            ReviewState::WrongStatus { .. } => Self::Refused(cause.to_string()),
            ReviewState::Other(other) => other.into(),
        }
    }
}

impl From<WebhookRule> for ServiceError {
    fn from(cause: WebhookRule) -> Self {
        Self::Conflict(cause.to_string())
    }
}

impl From<IdempotencyRule> for ServiceError {
    fn from(cause: IdempotencyRule) -> Self {
        match cause {
            IdempotencyRule::BadKey { .. } | IdempotencyRule::NeedsApiKey => {
                Self::Refused(cause.to_string())
            }
            IdempotencyRule::Reused => Self::Unprocessable(cause.to_string()),
            IdempotencyRule::InProgress => Self::Conflict(cause.to_string()),
        }
    }
}

impl From<BadResumePoint> for ServiceError {
    fn from(cause: BadResumePoint) -> Self {
        Self::Refused(cause.to_string())
    }
}

impl From<OverLimit> for ServiceError {
    fn from(cause: OverLimit) -> Self {
        Self::RateLimited(cause.0)
    }
}

impl From<NotReady> for ServiceError {
    fn from(cause: NotReady) -> Self {
        match cause {
            NotReady::Store(_) => Self::Unavailable(cause.to_string()),
            NotReady::Stopping => Self::Stopping,
        }
    }
}

impl From<Bug> for ServiceError {
    fn from(cause: Bug) -> Self {
        Self::Unexpected(cause.0)
    }
}

impl From<super::Missing> for ServiceError {
    fn from(cause: super::Missing) -> Self {
        Self::NotFound(cause)
    }
}

impl std::error::Error for super::Missing {}
