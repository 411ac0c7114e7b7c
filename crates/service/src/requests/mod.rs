//! Review request use cases: the requester's side (create, read, list,
//! change, cancel, rate) and the reviewer's side (inbox, claim, release,
//! respond), plus the timeout that ends what nobody answered.
//!
//! Changes use optimistic concurrency: read, apply the domain transition,
//! write only if nobody else wrote in between, else read again and retry.
//! Two reviewers racing for one request therefore see exactly one winner.

mod create;
mod errors;
mod list;
mod offers;
mod reading;
mod repeats;
mod requester;
mod reviewer;
pub(crate) mod routing;
mod sweeps;
mod test_mode;
#[cfg(test)]
pub(crate) mod tests;

pub use errors::{
    ChangeRequestError, CreateRequestError, ListLoopRequestsError, TestClockError, TestRulesError,
};
pub use list::ListRequestsInput;
pub use routing::{Decision, PassedOver, Routing};
pub use test_mode::TestClock;

use chrono::{DateTime, Utc};
use reviewloop_domain::{
    ChangeError, Event, EventType, Loop, LoopId, RequestId, RequestStatus, ReviewRequest,
};
use reviewloop_ports::StoreError;

use crate::error::{Busy, Denied, Missing};
use crate::ports::{event_id, RequestPorts};
use crate::principal::Principal;
use reviewloop_wire::events as wire;

/// How often a change is retried after losing a race before giving up.
const WRITE_ATTEMPTS: usize = 5;

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
    ports: RequestPorts,
    public_url: String,
}

impl RequestService {
    /// A service whose polling URLs start with `public_url`.
    pub fn new(ports: RequestPorts, public_url: &str) -> Self {
        Self {
            ports,
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    async fn visible_loop<E>(&self, caller: &Principal, id: &LoopId) -> Result<Loop, E>
    where
        E: From<Missing> + From<StoreError>,
    {
        crate::loops::visible_loop(&*self.ports.loops, caller, id).await
    }

    async fn loop_of(&self, request: &ReviewRequest) -> Result<Option<Loop>, StoreError> {
        self.ports.loops.loop_by_id(&request.loop_id).await
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
    ) -> Result<(ReviewRequest, Loops), ChangeRequestError> {
        let not_found = || ChangeRequestError::NotFound(Missing::Request);
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
            Actor::Requester if is_reviewer => Err(Denied::RequestAccess.into()),
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
    ) -> Result<ReviewRequest, ChangeRequestError>
    where
        F: FnMut(&mut ReviewRequest, &Loop, DateTime<Utc>) -> Result<Vec<EventType>, ChangeError>,
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
            let was_open = request.status.is_open();
            let event_types = change(&mut request, lp, now)?;
            let events: Vec<Event> = event_types
                .into_iter()
                .map(|kind| {
                    let reviewer = matches!(actor, Actor::Reviewer)
                        .then_some((&caller.user_id, &caller.email));
                    wire::request_event(
                        event_id(&*self.ports.ids, real),
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
                    if was_open && !request.status.is_open() {
                        self.after_end(&request).await;
                    }
                    return Ok(request);
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(StoreError::NotFound) => return Err(Missing::Request.into()),
                Err(e) => return Err(e.into()),
            }
        }
        Err(Busy::Request.into())
    }

    /// The time for `account`'s requests: the real time, or for test data
    /// its test clock's.
    async fn now_for(
        &self,
        account: &reviewloop_domain::UserId,
        test: bool,
    ) -> Result<DateTime<Utc>, StoreError> {
        let now = self.ports.clock.now();
        if !test {
            return Ok(now);
        }
        let offset = self.ports.requests.test_clock_offset(account).await?;
        Ok(now + chrono::Duration::seconds(offset))
    }

    fn created(&self, request: ReviewRequest) -> CreatedRequest {
        CreatedRequest {
            polling_url: format!("{}/v1/api/requests/{}", self.public_url, request.id),
            request,
        }
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
