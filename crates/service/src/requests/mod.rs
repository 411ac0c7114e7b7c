//! Review request use cases: the requester's side (create, read, list,
//! change, cancel, rate) and the reviewer's side (inbox, claim, release,
//! respond), plus the timeout that ends what nobody answered.
//!
//! Changes use optimistic concurrency: read, apply the domain transition,
//! write only if nobody else wrote in between, else read again and retry.
//! Two reviewers racing for one request therefore see exactly one winner.

mod list;
pub(crate) mod routing;
#[cfg(test)]
pub(crate) mod tests;

pub use list::ListRequestsInput;
pub use routing::{Decision, PassedOver, Routing};

use std::sync::Arc;

use chrono::{DateTime, Utc};
use reviewloop_domain::{
    Event, EventType, FeedbackInput, Loop, LoopId, ObjectId, Permission, RequestId, RequestInput,
    RequestPatch, RequestStatus, ReviewRequest,
};
use reviewloop_ports::{InboxView, RequestPage, RequestQuery, StoreError};
use serde_json::Value;

use crate::error::{messages, Missing, ServiceError};
use crate::loops::LoopCache;
use crate::ports::Ports;
use crate::principal::Principal;
use crate::wire;

/// How often a change is retried after losing a race before giving up.
const WRITE_ATTEMPTS: usize = 5;
/// Inbox page size when none is asked for, and the largest allowed.
const INBOX_DEFAULT_LIMIT: u32 = 50;
const INBOX_MAX_LIMIT: u32 = 200;

/// The longest single move of a test clock: a year.
const MAX_CLOCK_ADVANCE: i64 = 365 * 24 * 60 * 60;
/// How far a test clock may run ahead in all: ten years.
const MAX_CLOCK_OFFSET: i64 = 10 * 365 * 24 * 60 * 60;
/// Test requests settled per account and pass.
const TEST_BATCH: u32 = 500;

/// An account's test clock: its time, how far it runs ahead of the real
/// one, and what the last move settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestClock {
    /// The account's test time.
    pub now: DateTime<Utc>,
    /// Seconds ahead of the real clock.
    pub offset_seconds: i64,
    /// Test requests answered by the move.
    pub answered: usize,
    /// Test requests timed out by the move.
    pub timed_out: usize,
}

/// A request just created, with where to poll for its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedRequest {
    /// The request.
    pub request: ReviewRequest,
    /// `PUBLIC_URL/v1/api/requests/ID`.
    pub polling_url: String,
}

/// A request's loop, and the loop it escalated to, if it did: an active
/// member of either may act on it as a reviewer it was sent to.
struct Loops {
    lp: Loop,
    escalated: Option<Loop>,
}

impl Loops {
    fn is_active_member(&self, user: &reviewloop_domain::UserId) -> bool {
        self.lp.is_active_member(user)
            || self
                .escalated
                .as_ref()
                .is_some_and(|e| e.is_active_member(user))
    }
}

/// Who may make a change.
#[derive(Clone, Copy)]
enum Actor {
    /// The request's creator (update, cancel, feedback).
    Requester,
    /// A reviewer it was broadcast to who is still an active member.
    Reviewer,
}

/// Review request use cases.
#[derive(Clone)]
pub struct RequestService {
    ports: Ports,
    public_url: String,
}

impl RequestService {
    /// A service whose polling URLs start with `public_url`.
    pub fn new(ports: Ports, public_url: &str) -> Self {
        Self {
            ports,
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    async fn visible_loop(&self, caller: &Principal, id: &LoopId) -> Result<Loop, ServiceError> {
        crate::loops::visible_loop(&self.ports, caller, id).await
    }

    async fn loop_of(&self, request: &ReviewRequest) -> Result<Option<Loop>, ServiceError> {
        Ok(self.ports.loops.loop_by_id(&request.loop_id).await?)
    }

    /// Loads a request with its loop and checks the caller may act on it
    /// as `actor` (else 403 for a requester-only change by a reviewer; 404
    /// for anyone who may not see it). Reads go through
    /// [`RequestService::get`] instead.
    async fn load(
        &self,
        caller: &Principal,
        id: &RequestId,
        actor: Actor,
    ) -> Result<(ReviewRequest, Loops), ServiceError> {
        let not_found = || ServiceError::NotFound(Missing::Request);
        let request = self
            .ports
            .requests
            .request_by_id(id)
            .await?
            // Test data and live data never meet.
            .filter(|r| r.test == caller.test)
            .ok_or_else(not_found)?;
        let lp = self.loop_of(&request).await?.ok_or_else(not_found)?;
        let escalated = match request.escalated_to() {
            Some(to) => self.ports.loops.loop_by_id(&to).await?,
            None => None,
        };
        let loops = Loops { lp, escalated };
        let is_creator = request.creator_id == caller.user_id;
        let is_reviewer =
            request.was_broadcast_to(&caller.user_id) && loops.is_active_member(&caller.user_id);
        match actor {
            Actor::Requester if is_creator => Ok((request, loops)),
            Actor::Requester if is_reviewer => Err(ServiceError::Forbidden(
                messages::REQUEST_ACCESS_DENIED.into(),
            )),
            Actor::Reviewer if is_reviewer => Ok((request, loops)),
            _ => Err(not_found()),
        }
    }

    /// Applies `change` and writes the result with its events, retrying on
    /// a lost race. `change` returns the events to emit, in order.
    async fn change<F>(
        &self,
        caller: &Principal,
        id: &RequestId,
        actor: Actor,
        mut change: F,
    ) -> Result<ReviewRequest, ServiceError>
    where
        F: FnMut(&mut ReviewRequest, &Loop, DateTime<Utc>) -> Result<Vec<EventType>, ServiceError>,
    {
        let (mut attempt, mut attempts) = (0, WRITE_ATTEMPTS);
        while attempt < attempts {
            attempt += 1;
            let (mut request, loops) = self.load(caller, id, actor).await?;
            let lp = &loops.lp;
            // Every race lost means another write landed. Each reviewer
            // answers a quorum request once, so racing answers can beat this
            // one at most once per reviewer: that many more tries always
            // suffice for it to land or be refused for a reason.
            attempts = WRITE_ATTEMPTS + request.broadcasted_to.len();
            let now = self.now_for(&request.creator_id, request.test).await?;
            // Events, like ids, keep the real time (the outbox is ordered and
            // purged by it); a test request's own times are its clock's.
            let real = if request.test {
                self.ports.clock.now()
            } else {
                now
            };
            // Only an active member's claim counts: one left behind by a
            // removed member is void, so the request is open to others.
            if let (RequestStatus::Claimed, Some(holder)) = (request.status, request.claimed_by) {
                if !loops.is_active_member(&holder) {
                    request.release(holder, now)?;
                }
            }
            let event_types = change(&mut request, lp, now)?;
            let events: Vec<Event> = event_types
                .into_iter()
                .map(|kind| {
                    let reviewer = matches!(actor, Actor::Reviewer)
                        .then_some((&caller.user_id, &caller.email));
                    wire::request_event(
                        self.ports.event_id(real),
                        kind,
                        &request,
                        lp,
                        reviewer,
                        real,
                    )
                })
                .collect();
            match self.ports.requests.update_request(&request, &events).await {
                Ok(()) => {
                    request.written();
                    self.ports.changes.request_written(&request);
                    if !events.is_empty() {
                        self.ports.changes.outbox_written();
                    }
                    return Ok(request);
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(StoreError::NotFound) => return Err(ServiceError::NotFound(Missing::Request)),
                Err(e) => return Err(e.into()),
            }
        }
        Err(ServiceError::Conflict(
            "Request is being changed by someone else; try again".into(),
        ))
    }

    /// Creates a request in a loop the caller can see and broadcasts it to
    /// the loop's active members, in one transaction with `request.created`.
    /// With `id` (an idempotent retry), a request the caller already created
    /// under that id is answered instead of a new one.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        caller: &Principal,
        loop_id: &LoopId,
        input: RequestInput,
        id: Option<ObjectId>,
    ) -> Result<CreatedRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        let lp = self.visible_loop(caller, loop_id).await?;
        let mut fields = input.validate()?;
        if !caller.test && (fields.test_response.is_some() || fields.test_delay_seconds.is_some()) {
            let field = if fields.test_response.is_some() {
                "test_response"
            } else {
                "test_delay_seconds"
            };
            return Err(reviewloop_domain::ValidationError::field(
                field,
                "test_response and test_delay_seconds are for test-mode keys (reviewloop key create --test)",
            )
            .into());
        }
        fields.test = caller.test;
        if let Some(escalation) = &fields.escalation {
            self.check_escalation(caller, &lp.id, escalation).await?;
        }
        if let Some(url) = &fields.callback_url {
            self.ports.check_target("callback_url", url).await?;
        }
        let routing = routing::route(&self.ports, lp, None, &fields, &caller.user_id).await?;
        let lp = routing.lp;
        let mut fields = fields
            .with_loop_quorum(lp.quorum)
            .with_loop_escalation(lp.escalation);
        if fields.escalation.is_some_and(|e| e.to_loop_id == lp.id) || fields.test {
            // A rule routed it into the loop it would escalate to, or it is
            // test data, which reaches no people.
            fields.escalation = None;
        }
        fields.applied_rules = routing.applied;
        let answer = match routing.decision {
            Decision::Answer(answer) => {
                fields.quorum = None;
                fields.escalation = None;
                Some(answer)
            }
            Decision::Quorum(quorum) => {
                fields.quorum = Some(quorum);
                None
            }
            Decision::People => None,
        };
        let now = self.now_for(&caller.user_id, caller.test).await?;
        // A request a rule answered is asked of nobody, a test request too.
        let broadcasts = if answer.is_some() || caller.test {
            Vec::new()
        } else {
            lp.broadcast_entries(fields.priority, self.ports.email_enabled())
        };
        // Ids and events keep the real time (see `change`).
        let real = self.ports.clock.now();
        let id = RequestId::new(id.unwrap_or_else(|| self.ports.ids.object_id(real)));
        let mut request = ReviewRequest::create(
            id,
            lp.id,
            caller.user_id,
            caller.api_key_id,
            fields,
            broadcasts,
            now,
        );
        let mut kinds = vec![EventType::RequestCreated];
        match answer {
            Some(answer) => {
                request.decide_by_rule(answer, now)?;
                // Test decisions are not signed: a receipt proves a real one.
                if !request.test {
                    self.ports.receipts.sealer().await?.seal(&mut request);
                }
                kinds.push(EventType::RequestCompleted);
            }
            // A test request with no delay is answered as it is made.
            None if request.test => {
                if request.answer_as_test(now).is_ok() {
                    kinds.push(EventType::RequestCompleted);
                }
            }
            None => request.check_quorum()?,
        }
        let events: Vec<Event> = kinds
            .into_iter()
            .map(|kind| {
                wire::request_event(self.ports.event_id(real), kind, &request, &lp, None, real)
            })
            .collect();
        match self.ports.requests.insert_request(&request, &events).await {
            Ok(()) => {
                self.ports.changes.request_written(&request);
                self.ports.changes.outbox_written();
            }
            // The loop was deleted between reading it and writing the request.
            Err(StoreError::NotFound) => return Err(ServiceError::NotFound(Missing::Loop)),
            Err(StoreError::Conflict(cause)) => {
                // An earlier attempt under the same idempotency key got here first.
                return match self.ports.requests.request_by_id(&request.id).await? {
                    Some(existing) if existing.creator_id == caller.user_id => {
                        Ok(self.created(existing))
                    }
                    _ => Err(ServiceError::Unexpected(format!(
                        "request insert conflicted: {cause}"
                    ))),
                };
            }
            Err(e) => return Err(e.into()),
        }
        Ok(self.created(request))
    }

    /// Refuses an escalation to a loop the caller may not use, or back
    /// into the loop the request is sent to.
    async fn check_escalation(
        &self,
        caller: &Principal,
        from: &LoopId,
        escalation: &reviewloop_domain::Escalation,
    ) -> Result<(), ServiceError> {
        escalation.check_target(from, "escalation")?;
        if !crate::loops::may_use(&self.ports, &caller.user_id, &escalation.to_loop_id).await? {
            return Err(crate::loops::unusable("escalation.to_loop_id").into());
        }
        Ok(())
    }

    /// What the rules of `loop_id` (or `draft` rules in their place) would
    /// do with a request made from `input`, without making it. The
    /// sample's context must hold every value this loop's rules read.
    pub async fn test_rules(
        &self,
        caller: &Principal,
        loop_id: &LoopId,
        input: RequestInput,
        draft: Option<Value>,
    ) -> Result<Routing, ServiceError> {
        caller.require(Permission::LoopsRead)?;
        let lp = self.visible_loop(caller, loop_id).await?;
        // Rules not yet saved are the owner's to try: they may route
        // anywhere the owner may, which a member must not explore.
        if draft.is_some() && !lp.is_creator(&caller.user_id) {
            return Err(ServiceError::Forbidden(messages::LOOP_ACCESS_DENIED.into()));
        }
        let draft = draft
            .map(|rules| reviewloop_domain::Rules::parse(Some(&rules)))
            .transpose()?;
        let fields = input.validate()?;
        let rules = draft.as_ref().unwrap_or(&lp.rules);
        if let Some((rule, pointer)) = rules.missing_pointer(fields.context.as_ref()) {
            return Err(reviewloop_domain::ValidationError::field(
                format!("context{pointer}"),
                format!(
                    "the sample's context has no {pointer}, which rule {rule} reads: add it to see what the rules do"
                ),
            )
            .into());
        }
        routing::route(&self.ports, lp, draft.as_ref(), &fields, &caller.user_id).await
    }

    /// The time for `account`'s requests: the real time, or for test data
    /// its test clock's.
    async fn now_for(
        &self,
        account: &reviewloop_domain::UserId,
        test: bool,
    ) -> Result<DateTime<Utc>, ServiceError> {
        let now = self.ports.clock.now();
        if !test {
            return Ok(now);
        }
        let offset = self.ports.requests.test_clock_offset(account).await?;
        Ok(now + chrono::Duration::seconds(offset))
    }

    /// The caller's test clock. Test-mode keys only.
    pub async fn test_clock(&self, caller: &Principal) -> Result<TestClock, ServiceError> {
        caller.require(Permission::RequestsRead)?;
        Self::require_test(caller)?;
        let offset = self
            .ports
            .requests
            .test_clock_offset(&caller.user_id)
            .await?;
        Ok(TestClock {
            now: self.ports.clock.now() + chrono::Duration::seconds(offset),
            offset_seconds: offset,
            answered: 0,
            timed_out: 0,
        })
    }

    /// Moves the caller's test clock `advance_seconds` ahead, then settles
    /// at once what fell due: test requests answered or timed out, with
    /// their events, before this returns. Test-mode keys only.
    pub async fn advance_test_clock(
        &self,
        caller: &Principal,
        advance_seconds: Option<Value>,
    ) -> Result<TestClock, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        Self::require_test(caller)?;
        let seconds = advance_seconds
            .as_ref()
            .and_then(Value::as_i64)
            .filter(|s| (1..=MAX_CLOCK_ADVANCE).contains(s))
            .ok_or_else(|| {
                reviewloop_domain::ValidationError::field(
                    "advance_seconds",
                    format!(
                        "advance_seconds must be a whole number of seconds from 1 to {MAX_CLOCK_ADVANCE}"
                    ),
                )
            })?;
        let before = self
            .ports
            .requests
            .test_clock_offset(&caller.user_id)
            .await?;
        if before.saturating_add(seconds) > MAX_CLOCK_OFFSET {
            return Err(reviewloop_domain::ValidationError::field(
                "advance_seconds",
                format!(
                    "advance_seconds would move the test clock more than {} years ahead of the real one",
                    MAX_CLOCK_OFFSET / (365 * 24 * 60 * 60)
                ),
            )
            .into());
        }
        let now = self.ports.clock.now();
        let offset = match self
            .ports
            .requests
            .advance_test_clock(&caller.user_id, seconds, now)
            .await
        {
            // Two first advances raced to make the clock: add to it now.
            Err(StoreError::Conflict(_)) => {
                self.ports
                    .requests
                    .advance_test_clock(&caller.user_id, seconds, now)
                    .await?
            }
            other => other?,
        };
        let (mut answered, mut timed_out) = (0, 0);
        loop {
            let (a, t, full) = self.settle_account(&caller.user_id, TEST_BATCH).await?;
            answered += a;
            timed_out += t;
            if !full {
                break;
            }
        }
        Ok(TestClock {
            now: now + chrono::Duration::seconds(offset),
            offset_seconds: offset,
            answered,
            timed_out,
        })
    }

    fn require_test(caller: &Principal) -> Result<(), ServiceError> {
        if caller.test {
            Ok(())
        } else {
            Err(ServiceError::Forbidden(
                "The test clock belongs to test mode: use a key made with reviewloop key create --test".into(),
            ))
        }
    }

    /// Answers or times out the open test requests of every account that
    /// fell due on its test clock, up to `batch` per account; returns how
    /// many it ended.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn settle_test_requests(&self, batch: u32) -> Result<usize, ServiceError> {
        let mut ended = 0;
        for account in self.ports.requests.accounts_with_open_tests().await? {
            let (answered, timed_out, _) = self.settle_account(&account, batch).await?;
            ended += answered + timed_out;
        }
        Ok(ended)
    }

    /// One pass over `account`'s due test requests: (answered, timed out,
    /// whether the pass was full).
    async fn settle_account(
        &self,
        account: &reviewloop_domain::UserId,
        batch: u32,
    ) -> Result<(usize, usize, bool), ServiceError> {
        let now = self.now_for(account, true).await?;
        let due = self
            .ports
            .requests
            .due_test_requests(account, now, batch)
            .await?;
        let full = due.len() >= batch as usize;
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        for mut request in due {
            let kind = if request.answer_as_test(now).is_ok() {
                EventType::RequestCompleted
            } else if request.time_out(now).is_ok() {
                EventType::RequestTimeout
            } else {
                continue;
            };
            loops.load(&self.ports, request.loop_id).await?;
            let Some(lp) = loops.get(&request.loop_id) else {
                continue;
            };
            let real = self.ports.clock.now();
            let event =
                wire::request_event(self.ports.event_id(real), kind, &request, lp, None, real);
            changes.push((request, vec![event]));
        }
        if changes.is_empty() {
            return Ok((0, 0, false));
        }
        let landed = self.ports.requests.update_requests(&changes).await?;
        let ended = self.announce(&changes, &landed);
        let answered = ended
            .iter()
            .filter(|r| r.status == RequestStatus::Completed)
            .count();
        Ok((answered, ended.len() - answered, full))
    }

    fn created(&self, request: ReviewRequest) -> CreatedRequest {
        CreatedRequest {
            polling_url: format!("{}/v1/api/requests/{}", self.public_url, request.id),
            request,
        }
    }

    /// One request the caller created or was sent (shared with other
    /// readers of the same state, not copied).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<Arc<ReviewRequest>, ServiceError> {
        caller.require(Permission::RequestsRead)?;
        self.ports
            .requests
            .request_for_viewer(id, &caller.user_id)
            .await?
            .filter(|(request, active)| {
                request.test == caller.test && request.is_readable_by(&caller.user_id, *active)
            })
            .map(|(request, _)| request)
            .ok_or(ServiceError::NotFound(Missing::Request))
    }

    /// [`RequestService::get`], but while the request is still open, waits
    /// up to `wait` for it to be answered, time out or be cancelled. The
    /// wait holds no connection and reads nothing: it sleeps until a
    /// change to this request is announced (by this instance's writers or,
    /// on PostgreSQL, the other instances' notifications), then reads once.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_when_settled(
        &self,
        caller: &Principal,
        id: &RequestId,
        wait: std::time::Duration,
    ) -> Result<Arc<ReviewRequest>, ServiceError> {
        let deadline = tokio::time::Instant::now() + wait;
        let watcher = self.ports.changes.watch_request(*id);
        // Listening before the read: a change between the read and the
        // sleep still wakes us.
        let mut changed = Box::pin(watcher.notify().notified());
        let mut request = self.get(caller, id).await?;
        loop {
            if !request.status.is_open() || tokio::time::Instant::now() >= deadline {
                return Ok(request);
            }
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
            changed = Box::pin(watcher.notify().notified());
            request = if request.creator_id == caller.user_id {
                // The creator may always read it: every waiting creator
                // can share one read of the new state.
                self.newest_for_creator(&watcher, request).await?
            } else {
                // A reviewer's right to read it may have ended meanwhile.
                self.get(caller, id).await?
            };
        }
    }

    /// The newest state of a request its creator waits for: from whoever
    /// read or wrote it last, or read now by one waiter for all of them.
    async fn newest_for_creator(
        &self,
        watcher: &crate::watch::RequestWatcher,
        seen: Arc<ReviewRequest>,
    ) -> Result<Arc<ReviewRequest>, ServiceError> {
        let shared = watcher.shared();
        if let Some(newer) = shared.newer_than(seen.version) {
            return Ok(newer);
        }
        let _turn = shared.reading().await;
        if let Some(newer) = shared.newer_than(seen.version) {
            return Ok(newer);
        }
        let fresh = Arc::new(
            self.ports
                .requests
                .request_by_id(&seen.id)
                .await?
                .ok_or(ServiceError::NotFound(Missing::Request))?,
        );
        shared.publish(fresh.clone());
        Ok(fresh)
    }

    /// A page of the requests the caller created, with the query it answers.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(
        &self,
        caller: &Principal,
        input: ListRequestsInput,
    ) -> Result<(RequestPage, RequestQuery), ServiceError> {
        caller.require(Permission::RequestsRead)?;
        let query = input.into_query(caller.user_id, caller.test)?;
        Ok((self.ports.requests.list_requests(&query).await?, query))
    }

    /// A page of the requests the caller created in one loop it can see.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_in_loop(
        &self,
        caller: &Principal,
        loop_id: &LoopId,
        mut input: ListRequestsInput,
    ) -> Result<(RequestPage, RequestQuery), ServiceError> {
        caller.require(Permission::RequestsRead)?;
        self.visible_loop(caller, loop_id).await?;
        input.loop_id = Some(loop_id.to_string());
        let query = input.into_query(caller.user_id, caller.test)?;
        Ok((self.ports.requests.list_requests(&query).await?, query))
    }

    /// Changes a pending request (requester only).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        caller: &Principal,
        id: &RequestId,
        patch: RequestPatch,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            request.update(patch.clone(), now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// Cancels a pending or claimed request (requester only).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn cancel(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            request.cancel(now)?;
            Ok(vec![EventType::RequestCancelled])
        })
        .await
    }

    /// Rates a completed request (requester only); replaces earlier feedback.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn feedback(
        &self,
        caller: &Principal,
        id: &RequestId,
        input: FeedbackInput,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            request.record_feedback(input.clone(), now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// Sets only the rating and comment of the requester's feedback,
    /// keeping its other parts; read and changed in one step, so a
    /// concurrent API call cannot be lost in between.
    pub async fn rate(
        &self,
        caller: &Principal,
        id: &RequestId,
        rating: Option<f64>,
        comment: Option<String>,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        self.change(caller, id, Actor::Requester, |request, _, now| {
            let input = FeedbackInput::rating_and_comment(
                request.feedback.as_ref(),
                rating,
                comment.clone(),
            );
            request.record_feedback(input, now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// One view of the caller's inbox ([`InboxView::Actionable`] is what it
    /// can still act on), most urgent first, then oldest.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn inbox(
        &self,
        caller: &Principal,
        view: InboxView,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> Result<Vec<ReviewRequest>, ServiceError> {
        caller.require(Permission::RequestsRead)?;
        let limit = limit.unwrap_or(INBOX_DEFAULT_LIMIT);
        if !(1..=INBOX_MAX_LIMIT).contains(&limit) {
            return Err(reviewloop_domain::ValidationError::field(
                "limit",
                format!("limit must be a whole number from 1 to {INBOX_MAX_LIMIT}"),
            )
            .into());
        }
        // Test requests are sent to nobody, and a test-mode key sees no
        // live request: its inbox is always empty.
        if caller.test {
            return Ok(Vec::new());
        }
        Ok(self
            .ports
            .requests
            .inbox(&caller.user_id, view, limit, offset.unwrap_or(0))
            .await?)
    }

    /// Claims a request for the caller.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn claim(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        let by = caller.user_id;
        self.change(caller, id, Actor::Reviewer, |request, _, now| {
            Ok(request
                .claim(by, now)?
                .then_some(EventType::RequestClaimed)
                .into_iter()
                .collect())
        })
        .await
    }

    /// Gives back a claim the caller holds.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn release(
        &self,
        caller: &Principal,
        id: &RequestId,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        let by = caller.user_id;
        self.change(caller, id, Actor::Reviewer, |request, _, now| {
            request.release(by, now)?;
            Ok(Vec::new())
        })
        .await
    }

    /// Answers a request: from pending, or from a claim the caller holds.
    /// An answer to a quorum request fires `request.answered`; the answer
    /// that decides a request (the only one, without a quorum) also fires
    /// `request.completed` and seals the receipt, in the same write, so
    /// among racing last answers exactly one decides.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn respond(
        &self,
        caller: &Principal,
        id: &RequestId,
        answer: Option<Value>,
    ) -> Result<ReviewRequest, ServiceError> {
        caller.require(Permission::RequestsWrite)?;
        let answer = answer.ok_or_else(|| {
            reviewloop_domain::ValidationError::field("response_data", "response_data is required")
        })?;
        let by = caller.user_id;
        let sealer = self.ports.receipts.sealer().await?;
        self.change(caller, id, Actor::Reviewer, |request, _, now| {
            let quorum = request.quorum.is_some();
            let decided = request.respond(by, answer.clone(), now)?;
            let mut events = Vec::with_capacity(2);
            if quorum {
                events.push(EventType::RequestAnswered);
            }
            if decided {
                sealer.seal(request);
                events.push(EventType::RequestCompleted);
            }
            Ok(events)
        })
        .await
    }

    /// Escalates every pending request whose escalation is due, up to
    /// `batch` of them, and returns how many escalated. The other loop must
    /// be one the requester may use; otherwise the request keeps to its
    /// loop and drops the escalation.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn escalate_due(&self, batch: u32) -> Result<usize, ServiceError> {
        let now = self.ports.clock.now();
        let due = self.ports.requests.due_escalations(now, batch).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        for mut request in due {
            let Some(escalation) = request.escalation else {
                continue;
            };
            loops.load(&self.ports, request.loop_id).await?;
            loops.load(&self.ports, escalation.to_loop_id).await?;
            let Some(home) = loops.get(&request.loop_id) else {
                continue;
            };
            // The requester sees who its request went to: it may go only
            // among people the requester may see.
            let target = loops
                .get(&escalation.to_loop_id)
                .filter(|to| to.is_visible_to(&request.creator_id));
            let mut events = Vec::new();
            match target {
                Some(to) => {
                    let priority = if escalation.raise_priority {
                        request.priority.raised()
                    } else {
                        request.priority
                    };
                    let reviewers = to.broadcast_entries(priority, self.ports.email_enabled());
                    if request.escalate(reviewers, now).is_err() {
                        continue;
                    }
                    events.push(wire::request_event(
                        self.ports.event_id(now),
                        EventType::RequestEscalated,
                        &request,
                        home,
                        None,
                        now,
                    ));
                }
                None => request.drop_escalation(now),
            }
            changes.push((request, events));
        }
        if changes.is_empty() {
            return Ok(0);
        }
        let landed = self.ports.requests.escalate_requests(&changes).await?;
        // A dropped escalation lands too, but did not escalate.
        Ok(self
            .announce(&changes, &landed)
            .iter()
            .filter(|r| r.escalated_at.is_some())
            .count())
    }

    /// Times out every open request that is due, up to `batch` of them, and
    /// returns how many it ended. A request another writer changed first
    /// (answered, cancelled, or timed out by another instance) is skipped.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn time_out_due(&self, batch: u32) -> Result<usize, ServiceError> {
        let now = self.ports.clock.now();
        // Loops are read once per pass, not once per request.
        let mut loops = LoopCache::default();
        let mut changes = Vec::new();
        let due = self.ports.requests.due_requests(now, batch).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let sealer = self.ports.receipts.sealer().await?;
        for mut request in due {
            if request.time_out(now).is_err() {
                continue;
            }
            sealer.seal(&mut request);
            loops.load(&self.ports, request.loop_id).await?;
            let Some(lp) = loops.get(&request.loop_id) else {
                continue;
            };
            let event = wire::request_event(
                self.ports.event_id(now),
                EventType::RequestTimeout,
                &request,
                lp,
                None,
                now,
            );
            changes.push((request, vec![event]));
        }
        if changes.is_empty() {
            return Ok(0);
        }
        // One transaction for the pass; a request answered meanwhile is
        // simply not among those that landed.
        let landed = self.ports.requests.update_requests(&changes).await?;
        let ended = self.announce(&changes, &landed);
        for request in &ended {
            let late = now - request.timeout_at;
            self.ports
                .meter
                .timeout_lag(late.num_milliseconds() as f64 / 1000.0);
        }
        Ok(ended.len())
    }

    /// After a batch write: tells waiters of each change that landed (at
    /// its new version) and, if any of them wrote events, the outbox's
    /// readers; returns the requests that landed.
    fn announce<'a>(
        &self,
        changes: &'a [(ReviewRequest, Vec<Event>)],
        landed: &[bool],
    ) -> Vec<&'a ReviewRequest> {
        let mut events = false;
        let written: Vec<&ReviewRequest> = changes
            .iter()
            .zip(landed)
            .filter(|(_, landed)| **landed)
            .map(|((request, written_events), _)| {
                events |= !written_events.is_empty();
                let mut written = request.clone();
                written.written();
                self.ports.changes.request_written(&written);
                request
            })
            .collect();
        if events {
            self.ports.changes.outbox_written();
        }
        written
    }
}
