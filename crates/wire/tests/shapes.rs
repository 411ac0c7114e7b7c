//! What each audience sees of a request, and what receivers of events get.
#![allow(clippy::unwrap_used)]

use chrono::{DateTime, Utc};
use reviewloop_domain::{
    ApiKeyId, BroadcastEntry, Email, Event, EventId, EventType, InviteCode, Loop, LoopId, Member,
    NewLoop, ObjectId, RequestId, RequestInput, ReviewRequest, UserId,
};
use reviewloop_wire::events::{loop_event, EventBody};
use reviewloop_wire::requests::RequestOut;
use serde_json::{json, Value};

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap()
}

fn oid(n: u8) -> ObjectId {
    ObjectId::from_parts(1, [n; 8])
}

fn user(n: u8) -> UserId {
    UserId::new(oid(n))
}

fn email(n: u8) -> Email {
    Email::parse(&format!("u{n}@x.io")).unwrap()
}

/// A pending request created by user 1, sent to users 1, 2 and 3.
fn a_request() -> ReviewRequest {
    let broadcasts = [1u8, 2, 3]
        .iter()
        .map(|n| BroadcastEntry {
            user_id: user(*n),
            email: email(*n),
            role: "member".into(),
            notification_sent: true,
            notification_error: None,
            answer: None,
        })
        .collect();
    let input = RequestInput {
        request_text: Some("Publish?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("single_select".into()),
        response_config: Some(json!({"options": ["yes", "no"]})),
        priority: Some("high".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(60)),
        default_response: Some(json!("no")),
        ..RequestInput::default()
    };
    ReviewRequest::create(
        RequestId::new(oid(60)),
        LoopId::new(oid(50)),
        user(1),
        None,
        input.validate().unwrap(),
        broadcasts,
        now(),
    )
}

fn shown(view: RequestOut<'_>) -> Value {
    serde_json::to_value(view).unwrap()
}

#[test]
fn the_requester_sees_everything_and_a_reviewer_only_what_it_needs() {
    let mut record = a_request().into_record();
    record.api_key_id = Some(ApiKeyId::new(oid(90)));
    record.callback_url = Some("https://hooks.example.com/t0ken".into());
    record.metadata = Some(json!({"run": 7}));
    let r = ReviewRequest::restore(record);
    let (creator, reviewer_id, stranger) = (user(1), user(2), user(9));

    let requester = shown(RequestOut::for_viewer(&r, &creator));
    assert_eq!(requester, shown(RequestOut::whole(&r)));
    assert_eq!(requester["callback_url"], "https://hooks.example.com/t0ken");
    assert_eq!(requester["metadata"], json!({"run": 7}));
    assert!(requester["api_key_id"].is_string());
    assert_eq!(requester["broadcasted_to"].as_array().unwrap().len(), 3);
    assert_eq!(requester["type"], "markdown");
    assert_eq!(requester["processing_type"], "time-sensitive");
    assert_eq!(requester["status"], "pending");
    assert_eq!(requester["applied_rules"], json!([]));

    let reviewer = shown(RequestOut::for_viewer(&r, &reviewer_id));
    for hidden in [
        "callback_url",
        "metadata",
        "api_key_id",
        "tags",
        "applied_rules",
    ] {
        assert!(
            reviewer.get(hidden).is_none(),
            "{hidden} shown to a reviewer"
        );
    }
    let entries = reviewer["broadcasted_to"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["email"], email(2).as_str());
    assert_eq!(entries[0]["notification_sent"], true);
    assert_eq!(reviewer["request_text"], "Publish?");
    assert!(
        shown(RequestOut::for_viewer(&r, &stranger))["broadcasted_to"]
            .as_array()
            .unwrap()
            .is_empty(),
        "a stranger's view lists nobody (strangers are refused before this)"
    );
}

#[test]
fn feedback_is_shown_with_its_time() {
    let mut r = a_request();
    r.respond(user(2), json!("yes"), None, now()).unwrap();
    r.give_feedback(Some(4.0), Some("quick".into()), now())
        .unwrap();
    let shown = shown(RequestOut::whole(&r));
    assert_eq!(shown["feedback"]["rating"], 4.0);
    assert_eq!(shown["feedback"]["comment"], "quick");
    assert!(shown["feedback"]["created_at"].is_string());
    assert_eq!(shown["response_data"], "yes");
}

#[test]
fn a_loop_event_body_names_the_loop_and_member() {
    let loop_id = LoopId::new(oid(50));
    let mut lp = Loop::create(
        loop_id,
        NewLoop::parse(Some("Reviewers"), None, None).unwrap(),
        Member::creator(loop_id, user(1), email(1), now()),
        InviteCode::from_random([3; 6]),
        now(),
    );
    lp.put_member(Member::joined(loop_id, user(2), email(2), now()))
        .unwrap();
    let member = lp.member(&user(2)).unwrap().clone();
    let event = loop_event(
        EventId::new(oid(70)),
        EventType::LoopMemberJoined,
        &lp,
        Some(&member),
        now(),
    );
    assert_eq!(event.account_id, lp.creator_id);
    let body = serde_json::to_value(EventBody::of(&event)).unwrap();
    assert_eq!(body["event"], "loop.member_joined");
    assert_eq!(body["id"], event.id.to_string());
    assert!(body["timestamp"].is_string());
    assert_eq!(body["data"]["loop"]["name"], "Reviewers");
    assert_eq!(body["data"]["member"]["email"], email(2).as_str());
    assert_eq!(body["data"]["member"]["status"], "active");
    assert!(body["data"]["member"].get("removed_at").is_none());
    // The audit log's facts come with the event, not from its payload.
    let logged = reviewloop_domain::AuditRecord::of_event(&event);
    assert_eq!(logged.data["member"], json!(user(2)));
}

#[test]
fn an_alternate_event_carries_its_object_at_the_top() {
    let event = Event::for_account(
        EventId::new(oid(71)),
        EventType::ReviewCompleted,
        user(1),
        json!({"review": {"id": "r1"}}),
        now(),
    );
    let body = serde_json::to_value(EventBody::of(&event)).unwrap();
    assert_eq!(body["review"]["id"], "r1");
    assert!(body.get("data").is_none());
}

#[test]
fn a_loop_patch_body_never_prints_a_slack_apps_secrets() {
    let body: reviewloop_wire::loops::LoopPatchIn = serde_json::from_value(serde_json::json!({
        "name": "Ops",
        "slack_app": {"bot_token": "xoxb-never-shown", "signing_secret": "SECRET-0123456789", "channel": "#x"},
    }))
    .unwrap();
    let shown = format!("{body:?}");
    assert!(
        !shown.contains("xoxb") && !shown.contains("SECRET"),
        "{shown}"
    );
    assert!(shown.contains("Ops"));
}
