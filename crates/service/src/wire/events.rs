//! Event payloads, shaped when the event is written to the outbox, and the
//! bodies receivers get.

use chrono::{DateTime, Utc};
use reviewloop_domain::{Email, Event, EventId, EventType, Loop, Member, ReviewRequest, UserId};
use serde_json::{json, Value};

use super::loops::{loop_summary, MemberView};
use super::request::full_request;

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
    let mut data = json!({"request": full_request(request), "loop": loop_summary(lp)});
    if let (Some((user_id, email)), Some(map)) = (reviewer, data.as_object_mut()) {
        map.insert(
            "reviewer".into(),
            json!({"user_id": user_id, "email": email.as_str()}),
        );
    }
    let event = Event::for_request(id, event_type, request, data, now);
    match reviewer {
        Some((user_id, _)) => event.by_reviewer(*user_id),
        None => event,
    }
}

/// An event about `lp`; `member` is who joined or left, where someone did.
pub fn loop_event(
    id: EventId,
    event_type: EventType,
    lp: &Loop,
    member: Option<&Member>,
    now: DateTime<Utc>,
) -> Event {
    let mut data = json!({"loop": loop_summary(lp)});
    if let (Some(member), Some(map)) = (member, data.as_object_mut()) {
        map.insert("member".into(), json!(MemberView::of(member)));
    }
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
pub fn event_body(event: &Event) -> Value {
    match alternate_key(event.event_type) {
        Some(key) => json!({
            "id": event.id,
            "event": event.event_type.as_str(),
            key: event.data[key],
            "timestamp": event.created_at,
        }),
        None => json!({
            "id": event.id,
            "event": event.event_type.as_str(),
            "timestamp": event.created_at,
            "data": event.data,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Kit;

    #[test]
    fn a_loop_event_body_names_the_loop_and_member() {
        let kit = Kit::new();
        let lp = kit.a_loop(&[2], &[]);
        let member = lp.member(&kit.user_id(2)).unwrap().clone();
        let event = loop_event(
            EventId::new(kit.oid(70)),
            EventType::LoopMemberJoined,
            &lp,
            Some(&member),
            kit.now,
        );
        assert_eq!(event.account_id, lp.creator_id);
        let body = event_body(&event);
        assert_eq!(body["event"], "loop.member_joined");
        assert_eq!(body["id"], event.id.to_string());
        assert!(body["timestamp"].is_string());
        assert_eq!(body["data"]["loop"]["name"], lp.name.as_str());
        assert_eq!(body["data"]["member"]["email"], Kit::email(2).as_str());
        assert_eq!(body["data"]["member"]["status"], "active");
        assert!(body["data"]["member"].get("removed_at").is_none());
    }

    #[test]
    fn an_alternate_event_carries_its_object_at_the_top() {
        let kit = Kit::new();
        let event = Event::for_account(
            EventId::new(kit.oid(71)),
            EventType::ReviewCompleted,
            kit.user_id(1),
            json!({"review": {"id": "r1"}}),
            kit.now,
        );
        let body = event_body(&event);
        assert_eq!(body["review"]["id"], "r1");
        assert!(body.get("data").is_none());
    }
}
