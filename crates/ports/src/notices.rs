//! Notices on their way to reviewers: the queue that keeps them, and the
//! mail server that takes emails.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::{AnswerLink, LoopId, Notice, RequestId, ReviewRequest};

use crate::StoreError;

/// One email to hand to the mail server.
#[derive(Debug, Clone, PartialEq)]
pub struct Mail {
    /// The recipient's address.
    pub to: String,
    /// The subject line.
    pub subject: String,
    /// The plain text part.
    pub text: String,
    /// The HTML part, sent as an alternative to the text.
    pub html: Option<String>,
}

/// Sends email (an SMTP server, in production).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait Mailer: Send + Sync {
    /// Hands `mail` over; on failure, why, in words without secrets.
    async fn send(&self, mail: &Mail) -> Result<(), String>;
}

/// A notice handed to one worker until `leased_until`.
#[derive(Debug, Clone, PartialEq)]
pub struct LeasedNotice {
    /// The notice as it stands.
    pub notice: Notice,
    /// Until when this worker holds it.
    pub leased_until: DateTime<Utc>,
}

/// Where notices wait, written with the change that causes them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait NoticeQueue: Send + Sync {
    /// Adds notices that no other change has to be written with.
    async fn enqueue(&self, notices: &[Notice]) -> Result<(), StoreError>;
    /// Takes up to `limit` due pending notices, leasing them until
    /// `lease_until`.
    async fn lease_due_notices(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<LeasedNotice>, StoreError>;
    /// Writes a notice's new state (lease released) and, for the email of
    /// a new request, what its reviewer's broadcast entry says, in one
    /// transaction; `Conflict` when the lease is no longer this worker's.
    async fn record_notice(
        &self,
        notice: &Notice,
        leased_until: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Open requests whose reminder fell due by `now` and was not handled
    /// yet, with their broadcast entries, soonest first.
    async fn requests_to_remind(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// Marks the reminder of `request` handled at `at` and queues its
    /// `notices`, in one transaction; `false` (and nothing written) when
    /// it was handled already or the request is no longer open.
    async fn record_reminder(
        &self,
        request: &RequestId,
        at: DateTime<Utc>,
        notices: &[Notice],
    ) -> Result<bool, StoreError>;
    /// A loop's latest notices, newest first.
    async fn notices_of_loop(&self, id: &LoopId, limit: u32) -> Result<Vec<Notice>, StoreError>;
}

/// Where one-click answer links are kept (written with the notices that
/// carry them, by [`crate::DeliveryQueue::dispatch_all`]).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AnswerLinkStore: Send + Sync {
    /// The link whose token hashes to `token_hash`, used or not.
    async fn answer_link(&self, token_hash: &str) -> Result<Option<AnswerLink>, StoreError>;
    /// Marks the link spent at `at`; `false` when it was spent already.
    async fn use_answer_link(
        &self,
        token_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
}
