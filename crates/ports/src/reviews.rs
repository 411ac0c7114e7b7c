//! Storage of reviews.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::{
    Event, LoopId, Priority, Review, ReviewId, ReviewStatus, TemplateId, UserId,
};

use crate::StoreError;

/// Whose reviews a listing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewScope {
    /// The reviews this account sent.
    SentBy(UserId),
    /// The reviews this account may answer: those naming it as an
    /// assignee, and those of teams where it is an active member.
    For(UserId),
}

/// A filtered page of reviews.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewQuery {
    /// Whose.
    pub scope: ReviewScope,
    /// Only this status.
    pub status: Option<ReviewStatus>,
    /// Only reviews sent with this template.
    pub template_id: Option<TemplateId>,
    /// Only reviews naming this account as an assignee.
    pub assignee: Option<UserId>,
    /// Only reviews of this team.
    pub team_id: Option<LoopId>,
    /// Only this priority.
    pub priority: Option<Priority>,
    /// Only reviews still open whose `due_date` is before this time.
    pub overdue_at: Option<DateTime<Utc>>,
    /// Page size.
    pub limit: u32,
    /// Rows to skip.
    pub offset: u32,
}

/// One page and the number of reviews matching the filters.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewPage {
    /// The page, newest first.
    pub reviews: Vec<Review>,
    /// Every review that matches, on all pages.
    pub total: u64,
}

/// Reviews and their assignees.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ReviewStore: Send + Sync {
    /// Adds a review with its assignees and events, in one transaction.
    async fn insert_review(&self, review: &Review, events: &[Event]) -> Result<(), StoreError>;
    /// One review with its assignees.
    async fn review_by_id(&self, id: &ReviewId) -> Result<Option<Review>, StoreError>;
    /// Writes a changed review (assignees included) with its events if the
    /// stored version is still the review's (then bumps it); `Conflict`
    /// when another writer got there first, `NotFound` when it is gone.
    async fn update_review(&self, review: &Review, events: &[Event]) -> Result<(), StoreError>;
    /// A filtered page, newest first.
    async fn list_reviews(&self, query: &ReviewQuery) -> Result<ReviewPage, StoreError>;
}
