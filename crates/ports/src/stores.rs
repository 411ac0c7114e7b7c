//! Storage ports. Every method that changes state takes the events that
//! change emits and writes both in one transaction (transactional outbox).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::{
    ApiKey, ApiKeyId, Email, Event, InviteCode, Loop, LoopId, Member, MemberStatus, Notice,
    Priority, QuestionKey, RequestId, RequestStatus, ReviewRequest, User, UserId,
};

use crate::StoreError;

/// Accounts and API keys.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// The account with this email.
    async fn user_by_email(&self, email: &Email) -> Result<Option<User>, StoreError>;
    /// The account with this id.
    async fn user_by_id(&self, id: &UserId) -> Result<Option<User>, StoreError>;
    /// Adds an account; `Conflict` when the email is taken.
    async fn insert_user(&self, user: &User) -> Result<(), StoreError>;
    /// Adds an account and its first key, but only if there is no account
    /// at all yet. Returns whether it did.
    async fn insert_first_user(&self, user: &User, key: &ApiKey) -> Result<bool, StoreError>;
    /// Adds a key.
    async fn insert_api_key(&self, key: &ApiKey) -> Result<(), StoreError>;
    /// Replaces the secret that signs an account's callbacks.
    async fn set_signing_secret(&self, user: &UserId, secret: &str) -> Result<(), StoreError>;
    /// The key with this hash, with its account.
    async fn api_key_by_hash(&self, hash: &str) -> Result<Option<(ApiKey, User)>, StoreError>;
    /// Every key of an account, newest first.
    async fn api_keys_of(&self, user: &UserId) -> Result<Vec<ApiKey>, StoreError>;
    /// Revokes a key; `None` when there is no such key.
    async fn revoke_api_key(
        &self,
        id: &ApiKeyId,
        at: DateTime<Utc>,
    ) -> Result<Option<ApiKey>, StoreError>;
}

/// Loops and their members.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait LoopStore: Send + Sync {
    /// Adds a loop with its members; `Conflict` when the invite code is taken.
    async fn insert_loop(&self, lp: &Loop, events: &[Event]) -> Result<(), StoreError>;
    /// A loop with its members that were not removed.
    async fn loop_by_id(&self, id: &LoopId) -> Result<Option<Loop>, StoreError>;
    /// The loop whose current invite code this is.
    async fn loop_by_invite_code(&self, code: &InviteCode) -> Result<Option<Loop>, StoreError>;
    /// Loops the account created, newest first.
    async fn loops_created_by(&self, user: &UserId) -> Result<Vec<Loop>, StoreError>;
    /// Loops where the account is an active member (its own included),
    /// by name.
    async fn loops_joined_by(&self, user: &UserId) -> Result<Vec<Loop>, StoreError>;
    /// Moves `loop_id`'s round-robin turn `count` places on, in one
    /// statement every instance shares, and returns where it stood: two
    /// offers at once never take the same turn.
    async fn take_turns(&self, loop_id: &LoopId, count: u64) -> Result<u64, StoreError>;
    /// Writes name, description, icon and `updated_at` (not the invite
    /// code, so an edit cannot bring back a code regenerated meanwhile);
    /// `NotFound` when the loop is gone.
    async fn update_loop(&self, lp: &Loop) -> Result<(), StoreError>;
    /// Replaces the invite code; `Conflict` when the code is taken,
    /// `NotFound` when the loop is gone.
    async fn set_invite_code(
        &self,
        id: &LoopId,
        code: &InviteCode,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Deletes a loop with its members, requests and feedback. With
    /// `refuse_if_open`, answers `Conflict` instead when the loop still has
    /// pending or claimed requests (checked in the same transaction).
    async fn delete_loop(
        &self,
        id: &LoopId,
        refuse_if_open: bool,
        events: &[Event],
    ) -> Result<(), StoreError>;
    /// A user's membership of a loop, removed ones included.
    async fn member(&self, loop_id: &LoopId, user: &UserId) -> Result<Option<Member>, StoreError>;
    /// Writes a membership if the stored one is still as it was read:
    /// `previous` is its status then, `None` for a membership that did not
    /// exist. `Conflict` when someone changed it meanwhile, `NotFound` when
    /// the loop is gone. `notices` (an invitation's email) are queued in
    /// the same transaction.
    async fn save_member(
        &self,
        member: &Member,
        previous: Option<MemberStatus>,
        events: &[Event],
        notices: &[Notice],
    ) -> Result<(), StoreError>;
}

/// Which requests of a reviewer's inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InboxView {
    /// What the reviewer can still act on: pending requests broadcast to
    /// it, and those it claimed (the API's inbox).
    #[default]
    Actionable,
    /// Pending requests broadcast to it.
    Available,
    /// Requests it claimed and has not answered.
    Claimed,
    /// Requests it answered.
    Answered,
}

/// What analytics need of one request: no text, no JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFacts {
    /// Its loop.
    pub loop_id: LoopId,
    /// Where it stands.
    pub status: RequestStatus,
    /// Who answered (a reviewer), if anyone did.
    pub response_by: Option<UserId>,
    /// Seconds from creation to a reviewer's answer.
    pub response_time_seconds: Option<f64>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Nobody was asked it: it joined an open request that asked the
    /// same question, or took a person's recent answer.
    pub saved: bool,
}

/// Orders of the request lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequestSort {
    /// Newest first (the default).
    #[default]
    CreatedAtDesc,
    /// Oldest first.
    CreatedAtAsc,
    /// Most urgent first, then newest.
    PriorityDesc,
    /// By status name, then newest.
    StatusAsc,
}

/// A filtered page of the requests an account created.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestQuery {
    /// Whose requests.
    pub creator: UserId,
    /// Only those made with this API key (`None`: the whole account's).
    pub api_key: Option<reviewloop_domain::ApiKeyId>,
    /// Only this status.
    pub status: Option<RequestStatus>,
    /// Only this priority.
    pub priority: Option<Priority>,
    /// Only this loop.
    pub loop_id: Option<LoopId>,
    /// Page size.
    pub limit: u32,
    /// Rows to skip.
    pub offset: u32,
    /// Order.
    pub sort: RequestSort,
    /// Test requests (for a test-mode key) or live ones.
    pub test: bool,
}

/// One page and the number of rows matching the filters.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestPage {
    /// The page.
    pub requests: Vec<ReviewRequest>,
    /// Every row that matches, on all pages.
    pub total: u64,
}

/// Review requests.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RequestStore: Send + Sync {
    /// Adds a request with its broadcast entries. A request that joined
    /// another (`coalesced_into`) is added only while that one still
    /// takes others in; else `Conflict`, as when an open request with the
    /// same key, account and loop that takes others in exists already.
    async fn insert_request(
        &self,
        request: &ReviewRequest,
        events: &[Event],
    ) -> Result<(), StoreError>;
    /// A request with its broadcast entries.
    async fn request_by_id(&self, id: &RequestId) -> Result<Option<ReviewRequest>, StoreError>;
    /// A request with its broadcast entries, and whether `viewer` is an
    /// active member of its loop (or of the loop it escalated to): all
    /// that deciding whether `viewer` may read it needs, in one trip at
    /// most. Shared, not copied: a store may hand the same request to
    /// every reader until it changes.
    async fn request_for_viewer(
        &self,
        id: &RequestId,
        viewer: &UserId,
    ) -> Result<Option<(std::sync::Arc<ReviewRequest>, bool)>, StoreError>;
    /// Writes a changed request if the stored version is still
    /// `request.version` (then bumps it); `Conflict` when another writer got
    /// there first, `NotFound` when the request is gone.
    async fn update_request(
        &self,
        request: &ReviewRequest,
        events: &[Event],
    ) -> Result<(), StoreError>;
    /// Writes many changed requests, each with its events, in one
    /// transaction, each only if its stored version is still
    /// `request.version`. Returns, in order, whether each landed (`false`:
    /// another writer got there first, or the request is gone).
    async fn update_requests(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError>;
    /// A filtered, ordered page of an account's requests.
    async fn list_requests(&self, query: &RequestQuery) -> Result<RequestPage, StoreError>;
    /// The facts of every request `creator` created since `since`
    /// (optionally in one loop), for analytics.
    async fn request_facts(
        &self,
        creator: &UserId,
        loop_id: Option<LoopId>,
        since: DateTime<Utc>,
    ) -> Result<Vec<RequestFacts>, StoreError>;
    /// Pending and claimed requests of a loop.
    async fn open_requests_in_loop(
        &self,
        loop_id: &LoopId,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// Pending and claimed requests of other loops that escalated to
    /// `loop_id`.
    async fn open_requests_escalated_to(
        &self,
        loop_id: &LoopId,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// One view of `user`'s inbox (see [`InboxView`]), in loops where it is
    /// still an active member. Open views: most urgent first, then oldest
    /// first; `Done`: most recently answered first.
    async fn inbox(
        &self,
        user: &UserId,
        view: InboxView,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// Open requests whose `timeout_at` is at or before `now`, soonest
    /// first. Where several instances share the store, they are taken for
    /// this caller for a few seconds: another instance asking at the same
    /// time gets other requests.
    async fn due_requests(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// Pending requests whose escalation is due at or before `now`,
    /// soonest first.
    async fn due_escalations(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// How far `account`'s test clock runs ahead of the real one, in
    /// seconds (0 until it was first advanced).
    async fn test_clock_offset(&self, account: &UserId) -> Result<i64, StoreError>;
    /// Moves `account`'s test clock `seconds` further ahead; returns the
    /// new offset.
    async fn advance_test_clock(
        &self,
        account: &UserId,
        seconds: i64,
        now: DateTime<Utc>,
    ) -> Result<i64, StoreError>;
    /// The accounts that have open test requests.
    async fn accounts_with_open_tests(&self) -> Result<Vec<UserId>, StoreError>;
    /// `account`'s open test requests whose automatic answer or timeout is
    /// at or before `now` (its test clock's time), soonest first.
    async fn due_test_requests(
        &self,
        account: &UserId,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// The open request of `creator` in `loop_id` that takes in others
    /// with `key` (test requests or live ones), if there is one.
    async fn open_request_with_key(
        &self,
        creator: &UserId,
        loop_id: &LoopId,
        test: bool,
        key: &QuestionKey,
    ) -> Result<Option<ReviewRequest>, StoreError>;
    /// The most recent live request of `creator` in `loop_id` with `key`
    /// that a person completed at or after `since`, answered by itself
    /// (not reused, not joined to another).
    async fn answer_to_reuse(
        &self,
        creator: &UserId,
        loop_id: &LoopId,
        key: &QuestionKey,
        since: DateTime<Utc>,
    ) -> Result<Option<ReviewRequest>, StoreError>;
    /// The open requests that joined `request`.
    async fn open_followers(&self, request: &RequestId) -> Result<Vec<ReviewRequest>, StoreError>;
    /// Up to `limit` open requests that joined one that has ended (left
    /// over when an instance stopped between the two writes).
    async fn stranded_followers(&self, limit: u32) -> Result<Vec<ReviewRequest>, StoreError>;
    /// For each member of `loop_id` with any, how many open requests of
    /// the loop are offered to it (unanswered) or held by it.
    async fn open_loads(&self, loop_id: &LoopId) -> Result<Vec<(UserId, u64)>, StoreError>;
    /// Pending, unclaimed requests due to be offered to more members at
    /// or before `now`, soonest first.
    async fn due_reassignments(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError>;
    /// Writes reassigned requests, each with its events and the broadcast
    /// entries the reassignment added, in one transaction, each only if
    /// its stored version is still `request.version`. Returns, in order,
    /// whether each landed.
    async fn reassign_requests(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError>;
    /// How many requests that joined `request` stand in `status` (the
    /// status it has: the others were cancelled on their own).
    async fn follower_count(
        &self,
        request: &RequestId,
        status: RequestStatus,
    ) -> Result<u64, StoreError>;
    /// Writes requests that ended with the one they joined, each with its
    /// events and the broadcast entries it took from that one, in one
    /// transaction, each only if its stored version is still
    /// `request.version`. Returns, in order, whether each landed.
    async fn settle_followers(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError>;
    /// Writes escalated requests, each with its events and the broadcast
    /// entries the escalation added, in one transaction, each only if its
    /// stored version is still `request.version`. Returns, in order,
    /// whether each landed.
    async fn escalate_requests(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError>;
}
