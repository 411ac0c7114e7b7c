//! Events: what happened, written to the outbox in the same transaction as
//! the change itself, and delivered to subscribers from there.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Value};

use crate::account::Email;
use crate::id::{EventId, LoopId, RequestId, UserId};
use crate::member::Member;
use crate::request::ReviewRequest;
use crate::review_loop::Loop;

/// The kinds of event the service emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum EventType {
    /// A request was created and broadcast.
    #[serde(rename = "request.created")]
    RequestCreated,
    /// A reviewer claimed a request.
    #[serde(rename = "request.claimed")]
    RequestClaimed,
    /// A reviewer answered a request.
    #[serde(rename = "request.completed")]
    RequestCompleted,
    /// The requester cancelled a request.
    #[serde(rename = "request.cancelled")]
    RequestCancelled,
    /// A request timed out with its default response.
    #[serde(rename = "request.timeout")]
    RequestTimeout,
    /// Someone joined a loop.
    #[serde(rename = "loop.member_joined")]
    LoopMemberJoined,
    /// A member was removed from a loop.
    #[serde(rename = "loop.member_left")]
    LoopMemberLeft,
    /// A loop was deleted.
    #[serde(rename = "loop.deleted")]
    LoopDeleted,
    /// A template's name, description or fields changed.
    #[serde(rename = "template.updated")]
    TemplateUpdated,
    /// A review was sent.
    #[serde(rename = "review.created")]
    ReviewCreated,
    /// A review's assignees were set (at creation) or changed.
    #[serde(rename = "review.assigned")]
    ReviewAssigned,
    /// A reviewer started a review.
    #[serde(rename = "review.started")]
    ReviewStarted,
    /// A reviewer completed a review.
    #[serde(rename = "review.completed")]
    ReviewCompleted,
    /// The requester cancelled a review.
    #[serde(rename = "review.cancelled")]
    ReviewCancelled,
}

impl EventType {
    /// Every event type.
    pub const ALL: [EventType; 14] = [
        Self::RequestCreated,
        Self::RequestClaimed,
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

    /// For the alternate surface's events, the key of the one object they
    /// carry (`review`, `template`), which their deliveries put at the top
    /// level as that surface describes; `None` for the request surface's.
    pub fn alternate_key(&self) -> Option<&'static str> {
        match self {
            Self::TemplateUpdated => Some("template"),
            Self::ReviewCreated
            | Self::ReviewAssigned
            | Self::ReviewStarted
            | Self::ReviewCompleted
            | Self::ReviewCancelled => Some("review"),
            _ => None,
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
    /// The event's payload (`request`, `loop`, `reviewer`, `member`).
    pub data: Value,
    /// When it happened.
    pub created_at: DateTime<Utc>,
}

fn loop_summary(lp: &Loop) -> Value {
    json!({"id": lp.id, "name": lp.name, "creator_id": lp.creator_id})
}

impl Event {
    /// An event about a request; `reviewer` is who acted, where a reviewer did.
    pub fn for_request(
        id: EventId,
        event_type: EventType,
        request: &ReviewRequest,
        lp: &Loop,
        reviewer: Option<(&UserId, &Email)>,
        now: DateTime<Utc>,
    ) -> Self {
        let mut data = json!({"request": request, "loop": loop_summary(lp)});
        if let (Some((user_id, email)), Some(map)) = (reviewer, data.as_object_mut()) {
            map.insert(
                "reviewer".into(),
                json!({"user_id": user_id, "email": email}),
            );
        }
        Self {
            id,
            event_type,
            account_id: request.creator_id,
            request_id: Some(request.id),
            loop_id: Some(request.loop_id),
            data,
            created_at: now,
        }
    }

    /// An event about a loop, addressed to its creator; `member` is who
    /// joined or left, where someone did.
    pub fn for_loop(
        id: EventId,
        event_type: EventType,
        lp: &Loop,
        member: Option<&Member>,
        now: DateTime<Utc>,
    ) -> Self {
        let mut data = json!({"loop": loop_summary(lp)});
        if let (Some(member), Some(map)) = (member, data.as_object_mut()) {
            map.insert("member".into(), json!(member));
        }
        Self {
            id,
            event_type,
            account_id: lp.creator_id,
            request_id: None,
            loop_id: Some(lp.id),
            data,
            created_at: now,
        }
    }

    /// An event about an account's own resource that is neither a request
    /// nor a loop (a template): `data` is its payload as the edge shaped it.
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
        }
    }

    /// The body receivers get: `{"id","event","timestamp","data"}`, or for
    /// the alternate surface's events `{"id","event",KEY,"timestamp"}` with
    /// KEY its object (`review`, `template`).
    pub fn body(&self) -> Value {
        match self.event_type.alternate_key() {
            Some(key) => json!({
                "id": self.id,
                "event": self.event_type.as_str(),
                key: self.data[key],
                "timestamp": self.created_at,
            }),
            None => json!({
                "id": self.id,
                "event": self.event_type.as_str(),
                "timestamp": self.created_at,
                "data": self.data,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ObjectId;
    use crate::review_loop::{InviteCode, NewLoop};

    #[test]
    fn names_round_trip() {
        for e in EventType::ALL {
            assert_eq!(EventType::parse(e.as_str()), Some(e));
            assert_eq!(serde_json::to_value(e).unwrap(), json!(e.as_str()));
        }
        assert_eq!(EventType::parse("request.exploded"), None);
    }

    #[test]
    fn loop_event_body_names_the_loop_and_member() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let loop_id = LoopId::new(ObjectId::from_parts(1, [1; 8]));
        let creator = UserId::new(ObjectId::from_parts(1, [2; 8]));
        let member = Member::creator(loop_id, creator, Email::parse("c@x.io").unwrap(), now);
        let lp = Loop::create(
            loop_id,
            NewLoop::parse(Some("Ops"), None, None).unwrap(),
            member.clone(),
            InviteCode::from_random([1; 6]),
            now,
        );
        let event = Event::for_loop(
            EventId::new(ObjectId::from_parts(1, [3; 8])),
            EventType::LoopMemberJoined,
            &lp,
            Some(&member),
            now,
        );
        assert_eq!(event.account_id, creator);
        let body = event.body();
        assert_eq!(body["event"], "loop.member_joined");
        assert_eq!(body["id"], "000000010303030303030303");
        assert_eq!(body["timestamp"], "2027-01-15T08:00:00Z");
        assert_eq!(body["data"]["loop"]["name"], "Ops");
        assert_eq!(body["data"]["member"]["email"], "c@x.io");
    }
}
