//! Events: what happened, written to the outbox in the same transaction as
//! the change itself, and delivered to subscribers from there.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::id::{EventId, LoopId, RequestId, UserId};
use crate::member::{Member, MemberStatus};
use crate::request::ReviewRequest;
use crate::request_fields::RequestStatus;
use crate::review::{Review, ReviewStatus};
use crate::review_loop::Loop;

/// The kinds of event the service emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// A request was created and broadcast.
    RequestCreated,
    /// A reviewer claimed a request.
    RequestClaimed,
    /// A request was decided: its reviewer answered, or its quorum's
    /// answers made a decision.
    RequestCompleted,
    /// One reviewer answered a request that needs a quorum.
    RequestAnswered,
    /// Nobody claimed a request in time: it was also sent to another loop.
    RequestEscalated,
    /// Nobody claimed a request offered to a few members in time: it was
    /// offered to the next ones.
    RequestReassigned,
    /// The requester cancelled a request.
    RequestCancelled,
    /// A request timed out with its default response.
    RequestTimeout,
    /// Someone joined a loop.
    LoopMemberJoined,
    /// A member was removed from a loop.
    LoopMemberLeft,
    /// A loop was deleted.
    LoopDeleted,
    /// A template's name, description or fields changed.
    TemplateUpdated,
    /// A review was sent.
    ReviewCreated,
    /// A review's assignees were set (at creation) or changed.
    ReviewAssigned,
    /// A reviewer started a review.
    ReviewStarted,
    /// A reviewer completed a review.
    ReviewCompleted,
    /// The requester cancelled a review.
    ReviewCancelled,
}

impl EventType {
    /// Every event type.
    pub const ALL: [EventType; 17] = [
        Self::RequestCreated,
        Self::RequestClaimed,
        Self::RequestAnswered,
        Self::RequestEscalated,
        Self::RequestReassigned,
        Self::RequestCompleted,
        Self::RequestCancelled,
        Self::RequestTimeout,
        Self::LoopMemberJoined,
        Self::LoopMemberLeft,
        Self::LoopDeleted,
        Self::TemplateUpdated,
        Self::ReviewCreated,
        Self::ReviewAssigned,
        Self::ReviewStarted,
        Self::ReviewCompleted,
        Self::ReviewCancelled,
    ];

    /// The event's name, as receivers see it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::RequestCreated => "request.created",
            Self::RequestClaimed => "request.claimed",
            Self::RequestCompleted => "request.completed",
            Self::RequestAnswered => "request.answered",
            Self::RequestEscalated => "request.escalated",
            Self::RequestReassigned => "request.reassigned",
            Self::RequestCancelled => "request.cancelled",
            Self::RequestTimeout => "request.timeout",
            Self::LoopMemberJoined => "loop.member_joined",
            Self::LoopMemberLeft => "loop.member_left",
            Self::LoopDeleted => "loop.deleted",
            Self::TemplateUpdated => "template.updated",
            Self::ReviewCreated => "review.created",
            Self::ReviewAssigned => "review.assigned",
            Self::ReviewStarted => "review.started",
            Self::ReviewCompleted => "review.completed",
            Self::ReviewCancelled => "review.cancelled",
        }
    }

    /// Parses an event name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

/// One event, addressed to the account whose subscribers receive it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Stable across delivery attempts, so receivers can be idempotent.
    pub id: EventId,
    /// What happened.
    pub event_type: EventType,
    /// The account that owns the resource (request or loop creator).
    pub account_id: UserId,
    /// The request concerned, if any.
    pub request_id: Option<RequestId>,
    /// The loop concerned.
    pub loop_id: Option<LoopId>,
    /// The event's payload, shaped by whoever writes the event (reviewloop's
    /// service, in its `wire` module): `request`, `loop`, `reviewer`,
    /// `member`, `review` or `template`.
    pub data: Value,
    /// When it happened.
    pub created_at: DateTime<Utc>,
    /// About test data: delivered only to test-mode subscriptions and
    /// streams, and kept out of the audit log.
    pub test: bool,
    /// What the account's audit log keeps of this event, taken from the
    /// objects it is about when it was made (never read back out of
    /// `data`); empty for an event read back from the outbox.
    pub facts: EventFacts,
}

impl Event {
    /// An event about a request, addressed to its creator, with `data` its
    /// payload as the writer of the event shaped it.
    pub fn for_request(
        id: EventId,
        event_type: EventType,
        request: &ReviewRequest,
        data: Value,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            event_type,
            account_id: request.creator_id,
            request_id: Some(request.id),
            loop_id: Some(request.loop_id),
            data,
            created_at: now,
            test: request.test,
            facts: EventFacts::of_request(request),
        }
    }

    /// An event about a loop, addressed to its creator.
    pub fn for_loop(
        id: EventId,
        event_type: EventType,
        lp: &Loop,
        data: Value,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            event_type,
            account_id: lp.creator_id,
            request_id: None,
            loop_id: Some(lp.id),
            data,
            created_at: now,
            test: false,
            facts: EventFacts::default(),
        }
    }

    /// An event about an account's own resource that is neither a request
    /// nor a loop (a template, a review).
    pub fn for_account(
        id: EventId,
        event_type: EventType,
        account_id: UserId,
        data: Value,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            event_type,
            account_id,
            request_id: None,
            loop_id: None,
            data,
            created_at: now,
            test: false,
            facts: EventFacts::default(),
        }
    }
}

impl Event {
    /// The reviewer who acted, for the log.
    pub fn by_reviewer(mut self, reviewer: UserId) -> Self {
        self.facts.reviewer = Some(reviewer);
        self
    }

    /// The member who joined or left, for the log.
    pub fn about_member(mut self, member: &Member) -> Self {
        self.facts.member = Some((member.user_id, member.status));
        self
    }

    /// The review the event is about, for the log.
    pub fn about_review(mut self, review: &Review) -> Self {
        self.facts.review_status = Some(review.record().status);
        self
    }
}

/// The facts of an event that say what was decided and by whom: what an
/// audit entry keeps of it ([`crate::AuditRecord::of_event`]), while the
/// whole payload stays in the outbox only as long as it is retained. Set by
/// the event's constructors and [`Event::by_reviewer`],
/// [`Event::about_member`] and [`Event::about_review`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventFacts {
    /// The request's status after the event.
    pub(crate) status: Option<RequestStatus>,
    /// Its answer.
    pub(crate) response_data: Option<Value>,
    /// What the reviewer who decided it wrote with the answer.
    pub(crate) response_comment: Option<String>,
    /// Who answered it.
    pub(crate) response_by: Option<UserId>,
    /// Who holds it.
    pub(crate) claimed_by: Option<UserId>,
    /// The rule that answered it at creation.
    pub(crate) decided_by_rule: Option<String>,
    /// When it went to another loop.
    pub(crate) escalated_at: Option<DateTime<Utc>>,
    /// The reviewer who acted.
    pub(crate) reviewer: Option<UserId>,
    /// The member who joined or left, and their status after.
    pub(crate) member: Option<(UserId, MemberStatus)>,
    /// The review's status after the event.
    pub(crate) review_status: Option<ReviewStatus>,
}

impl EventFacts {
    /// The facts of `request` as it is after the event.
    pub(crate) fn of_request(request: &ReviewRequest) -> Self {
        Self {
            status: Some(request.status),
            response_data: request.response_data.clone().filter(|v| !v.is_null()),
            response_comment: request.response_comment.clone(),
            response_by: request.response_by,
            claimed_by: request.claimed_by,
            decided_by_rule: request.decided_by_rule().map(str::to_owned),
            escalated_at: request.escalated_at,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::Email;
    use crate::id::ObjectId;
    use crate::member::Member;
    use crate::review_loop::{InviteCode, NewLoop};

    #[test]
    fn names_round_trip() {
        for e in EventType::ALL {
            assert_eq!(EventType::parse(e.as_str()), Some(e));
        }
        assert_eq!(EventType::parse("request.exploded"), None);
    }

    #[test]
    fn a_loop_event_is_addressed_to_the_loop_creator() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let loop_id = LoopId::new(ObjectId::from_parts(1, [1; 8]));
        let creator = UserId::new(ObjectId::from_parts(1, [2; 8]));
        let member = Member::creator(loop_id, creator, Email::parse("c@x.io").unwrap(), now);
        let lp = Loop::create(
            loop_id,
            NewLoop::parse(Some("Ops"), None, None).unwrap(),
            member,
            InviteCode::from_random([1; 6]),
            now,
        );
        let event = Event::for_loop(
            EventId::new(ObjectId::from_parts(1, [3; 8])),
            EventType::LoopMemberJoined,
            &lp,
            Value::Null,
            now,
        );
        assert_eq!(event.account_id, creator);
        assert_eq!(event.loop_id, Some(loop_id));
        assert_eq!(event.request_id, None);
    }
}
