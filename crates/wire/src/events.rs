//! Event payloads, shaped when an event is written to the outbox, and the
//! bodies receivers get.

use chrono::{DateTime, Utc};
use reviewloop_domain::{Email, Event, EventId, EventType, Loop, Member, ReviewRequest, UserId};
use serde::Serialize;
use serde_json::Value;

use crate::loops::{LoopSummary, MemberOut};
use crate::requests::RequestOut;

/// Who acted on a request.
#[derive(Debug, Serialize)]
pub struct ActorOut<'a> {
    pub user_id: UserId,
    pub email: &'a str,
}

/// The payload of `request.*` events.
#[derive(Debug, Serialize)]
pub struct RequestEventData<'a> {
    pub request: RequestOut<'a>,
    #[serde(rename = "loop")]
    pub lp: LoopSummary<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<ActorOut<'a>>,
    /// `request.reassigned` only: the members this offer reached, whom it
    /// tells (those offered before were told before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_to: Option<&'a [UserId]>,
}

/// The payload of `loop.*` events.
#[derive(Debug, Serialize)]
pub struct LoopEventData<'a> {
    #[serde(rename = "loop")]
    pub lp: LoopSummary<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<MemberOut<'a>>,
}

fn payload(data: &impl Serialize) -> Value {
    // Our payloads hold no map with keys that are not strings.
    serde_json::to_value(data).unwrap_or(Value::Null)
}

/// An event about `request` in `lp`; `reviewer` is who acted, where a
/// reviewer did. Its payload holds the whole request and the loop's summary.
pub fn request_event(
    id: EventId,
    event_type: EventType,
    request: &ReviewRequest,
    lp: &Loop,
    reviewer: Option<(&UserId, &Email)>,
    now: DateTime<Utc>,
) -> Event {
    let data = payload(&RequestEventData {
        request: RequestOut::whole(request),
        lp: LoopSummary::of(lp),
        reviewer: reviewer.map(|(user_id, email)| ActorOut {
            user_id: *user_id,
            email: email.as_str(),
        }),
        offered_to: None,
    });
    let event = Event::for_request(id, event_type, request, data, now);
    match reviewer {
        Some((user_id, _)) => event.by_reviewer(*user_id),
        None => event,
    }
}

/// `request.reassigned`: `request` was also offered to `offered_to`.
pub fn reassigned_event(
    id: EventId,
    request: &ReviewRequest,
    lp: &Loop,
    offered_to: &[UserId],
    now: DateTime<Utc>,
) -> Event {
    let data = payload(&RequestEventData {
        request: RequestOut::whole(request),
        lp: LoopSummary::of(lp),
        reviewer: None,
        offered_to: Some(offered_to),
    });
    Event::for_request(id, EventType::RequestReassigned, request, data, now)
}

/// An event about `lp`; `member` is who joined or left, where someone did.
pub fn loop_event(
    id: EventId,
    event_type: EventType,
    lp: &Loop,
    member: Option<&Member>,
    now: DateTime<Utc>,
) -> Event {
    let data = payload(&LoopEventData {
        lp: LoopSummary::of(lp),
        member: member.map(MemberOut::of),
    });
    let event = Event::for_loop(id, event_type, lp, data, now);
    match member {
        Some(member) => event.about_member(member),
        None => event,
    }
}

/// For the alternate surface's events, the key of the one object they
/// carry (`review`, `template`), which their deliveries put at the top
/// level as that surface describes; `None` for the request surface's.
fn alternate_key(event_type: EventType) -> Option<&'static str> {
    match event_type {
        EventType::TemplateUpdated => Some("template"),
        EventType::ReviewCreated
        | EventType::ReviewAssigned
        | EventType::ReviewStarted
        | EventType::ReviewCompleted
        | EventType::ReviewCancelled => Some("review"),
        _ => None,
    }
}

/// The body receivers get: `{"id","event","timestamp","data"}`, or for the
/// alternate surface's events `{"id","event",KEY,"timestamp"}` with KEY its
/// object (`review`, `template`).
#[derive(Debug, Serialize)]
pub struct EventBody<'a> {
    pub id: EventId,
    pub event: &'static str,
    #[serde(flatten)]
    pub object: std::collections::BTreeMap<&'static str, &'a Value>,
    pub timestamp: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<&'a Value>,
}

impl<'a> EventBody<'a> {
    /// What receivers of `event` get.
    pub fn of(event: &'a Event) -> Self {
        let (object, data) = match alternate_key(event.event_type) {
            Some(key) => (
                std::collections::BTreeMap::from([(key, &event.data[key])]),
                None,
            ),
            None => (std::collections::BTreeMap::new(), Some(&event.data)),
        };
        Self {
            id: event.id,
            event: event.event_type.as_str(),
            object,
            timestamp: event.created_at,
            data,
        }
    }
}
