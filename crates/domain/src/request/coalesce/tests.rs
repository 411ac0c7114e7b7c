use chrono::{DateTime, Utc};
use serde_json::json;

use super::*;
use crate::id::{LoopId, ObjectId, RequestId, UserId};
use crate::request::{BroadcastEntry, RequestInput};
use crate::Email;

fn t(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

fn user(n: u8) -> UserId {
    UserId::new(ObjectId::from_parts(1, [n; 8]))
}

fn input(text: &str) -> RequestInput {
    RequestInput {
        request_text: Some(text.into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("medium".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(60)),
        default_response: Some(json!(false)),
        ..RequestInput::default()
    }
}

fn made(n: u8, at: i64, fields: ValidRequest) -> ReviewRequest {
    let broadcasts = [2u8, 3]
        .iter()
        .map(|n| BroadcastEntry {
            user_id: user(*n),
            email: Email::parse(&format!("u{n}@x.io")).unwrap(),
            role: "member".into(),
            notification_sent: true,
            notification_error: None,
            answer: None,
        })
        .collect();
    ReviewRequest::create(
        RequestId::new(ObjectId::from_parts(1, [n; 8])),
        LoopId::new(ObjectId::from_parts(1, [8; 8])),
        user(1),
        None,
        fields,
        broadcasts,
        t(at),
    )
}

fn open_with_key(key: &str) -> ReviewRequest {
    let mut open = made(10, 0, input("Ship it?").validate().unwrap());
    open.take_followers(QuestionKey::parse(key).unwrap());
    open
}

fn joining(key: &str, at: i64) -> ReviewRequest {
    let mut fields = input("Ship it?");
    fields.timeout_seconds = Some(json!(3600));
    let mut later = made(11, at, fields.validate().unwrap());
    later.keep_key(QuestionKey::parse(key).unwrap());
    later
}

#[test]
fn a_named_key_is_checked_and_a_question_keys_itself_by_what_people_see() {
    assert!(QuestionKey::parse("").is_err());
    assert!(QuestionKey::parse(&"k".repeat(201)).is_err());
    assert!(QuestionKey::parse("a\nb").is_err());
    assert_eq!(QuestionKey::parse(" order-7 ").unwrap().as_str(), "order-7");

    let key = |i: RequestInput| QuestionKey::of_question(&i.validate().unwrap());
    let same = key(input("Ship it?"));
    assert_eq!(same, key(input("Ship it?")));
    assert!(same.as_str().starts_with("sha256:"));
    assert_ne!(same, key(input("Ship it now?")), "the text counts");
    let mut with_context = input("Ship it?");
    with_context.context = Some(json!({"order": 7}));
    assert_ne!(same, key(with_context), "the context counts");
    let mut other_metadata = input("Ship it?");
    other_metadata.metadata = Some(json!({"run": 2}));
    other_metadata.priority = Some("high".into());
    assert_eq!(
        same,
        key(other_metadata),
        "what reviewers are not shown does not"
    );
}

#[test]
fn a_given_key_wins_and_a_loop_that_keys_questions_hashes_the_rest() {
    let mut named = input("Ship it?");
    named.coalesce_key = Some("deploy-42".into());
    let named = named.validate().unwrap();
    assert_eq!(named.question_key(false).unwrap().as_str(), "deploy-42");
    assert_eq!(named.question_key(true).unwrap().as_str(), "deploy-42");
    let plain = input("Ship it?").validate().unwrap();
    assert_eq!(plain.question_key(false), None);
    assert!(plain.question_key(true).is_some());
    let mut bad = input("Ship it?");
    bad.coalesce_key = Some(String::new());
    assert_eq!(bad.validate().unwrap_err().errors[0].field, "coalesce_key");
}

#[test]
fn a_window_is_read_strictly_and_holds_up_to_its_end() {
    assert_eq!(Window::parse(None, "coalesce").unwrap(), None);
    assert_eq!(Window::parse(Some(&json!(null)), "coalesce").unwrap(), None);
    let w = Window::parse(Some(&json!({"window_seconds": 60})), "coalesce")
        .unwrap()
        .unwrap();
    assert_eq!(w.to_value(), json!({"window_seconds": 60}));
    assert!(w.holds(t(0), t(60)));
    assert!(!w.holds(t(0), t(61)));
    for bad in [
        json!(5),
        json!({}),
        json!({"window_seconds": 0}),
        json!({"window_seconds": "60"}),
        json!({"window_seconds": 60, "extra": 1}),
    ] {
        let e = Window::parse(Some(&bad), "reuse_answers").unwrap_err();
        assert!(e.errors[0].field.starts_with("reuse_answers"), "{bad}");
    }
}

#[test]
fn a_request_joins_an_open_one_and_takes_its_timeout_and_asks_nobody() {
    let open = open_with_key("k");
    assert!(open.accepts_followers());
    let mut later = joining("k", 5);
    later.join(&open).unwrap();
    assert_eq!(later.coalesced_into, Some(open.id));
    assert!(later.broadcasted_to.is_empty());
    assert_eq!(later.timeout_at, open.timeout_at);
    assert!(!later.accepts_followers(), "a follower takes in nobody");
    assert!(!later.is_due(t(3600)), "it ends with the one it joined");

    let mut other_key = joining("other", 5);
    assert!(other_key.join(&open).is_err());
    let mut ended = open.clone();
    ended.cancel(t(2)).unwrap();
    assert!(!ended.accepts_followers());
    assert!(joining("k", 5).join(&ended).is_err());
    let mut stopped = open.clone();
    stopped.stop_coalescing(t(3));
    assert!(!stopped.accepts_followers());
    assert!(joining("k", 5).join(&stopped).is_err());
}

#[test]
fn a_window_ends_the_time_an_open_request_takes_others_in() {
    let open = open_with_key("k");
    let window = Some(Window { window_seconds: 30 });
    assert!(!open.coalescing_expired(window, t(30)));
    assert!(open.coalescing_expired(window, t(31)));
    assert!(!open.coalescing_expired(None, t(10_000)));
}

#[test]
fn a_follower_ends_the_way_the_open_request_did() {
    let mut open = open_with_key("k");
    let mut later = joining("k", 5);
    later.join(&open).unwrap();
    assert_eq!(
        later.follow(&open, t(6)),
        Err(TransitionError::NotDue),
        "not while it is open"
    );
    open.respond(user(2), json!(true), Some("fine".into()), t(20))
        .unwrap();
    later.follow(&open, t(21)).unwrap();
    assert_eq!(later.status, RequestStatus::Completed);
    assert_eq!(later.response_data, Some(json!(true)));
    assert_eq!(later.response_by, Some(user(2)));
    assert_eq!(later.response_at, Some(t(20)));
    assert_eq!(later.response_comment.as_deref(), Some("fine"));
    assert_eq!(later.response_time_seconds, Some(15.0));
    assert_eq!(later.responses().len(), 1, "the answer is listed");
    assert!(later.was_broadcast_to(&user(2)));
    assert!(later.receipt_statement().is_some());
    assert_eq!(later.follow(&open, t(22)), Err(TransitionError::NotOpen));

    let mut timed_out = open_with_key("k");
    let mut late = joining("k", 5);
    late.join(&timed_out).unwrap();
    timed_out.time_out(t(60)).unwrap();
    late.follow(&timed_out, t(61)).unwrap();
    assert_eq!(late.status, RequestStatus::Timeout);
    assert_eq!(late.response_data, Some(json!(false)));
    assert_eq!(late.response_by, None);

    let mut cancelled = open_with_key("k");
    let mut dropped = joining("k", 5);
    dropped.join(&cancelled).unwrap();
    cancelled.cancel(t(9)).unwrap();
    dropped.follow(&cancelled, t(10)).unwrap();
    assert_eq!(dropped.status, RequestStatus::Cancelled);
    assert_eq!(dropped.cancelled_at, Some(t(10)));
}

#[test]
fn a_follower_of_a_quorum_lists_every_answer() {
    let mut fields = input("Ship it?");
    fields.quorum = Some(json!({"count": 2, "rule": "all_agree"}));
    let mut open = made(10, 0, fields.validate().unwrap());
    open.take_followers(QuestionKey::parse("k").unwrap());
    let mut later = joining("k", 5);
    later.join(&open).unwrap();
    open.respond(user(2), json!(true), None, t(10)).unwrap();
    open.respond(user(3), json!(true), None, t(11)).unwrap();
    later.follow(&open, t(12)).unwrap();
    assert_eq!(later.responses().len(), 2);
    assert_eq!(later.response_data, Some(json!(true)));
}

#[test]
fn only_a_persons_own_answer_is_reused_and_the_receipt_names_it() {
    let mut earlier = made(10, 0, input("Ship it?").validate().unwrap());
    earlier.keep_key(QuestionKey::parse("k").unwrap());
    assert!(!earlier.is_reusable_answer(), "not before it is answered");
    earlier.respond(user(2), json!(true), None, t(5)).unwrap();
    assert!(earlier.is_reusable_answer());

    let mut now = joining("k", 100);
    now.reuse(&earlier, t(100)).unwrap();
    assert_eq!(now.status, RequestStatus::Completed);
    assert_eq!(now.reused_from, Some(earlier.id));
    assert_eq!(now.response_data, Some(json!(true)));
    assert_eq!(now.response_by, Some(user(2)));
    assert_eq!(now.response_at, Some(t(100)));
    assert_eq!(now.broadcasted_to.len(), 1, "only the person who answered");
    assert!(
        !now.is_reusable_answer(),
        "a reused answer is not reused again"
    );
    let statement = String::from_utf8(now.receipt_statement().unwrap()).unwrap();
    assert!(statement.contains(&format!("\"reused_from\":\"{}\"", earlier.id)));

    let mut timed_out = made(12, 0, input("Ship it?").validate().unwrap());
    timed_out.time_out(t(60)).unwrap();
    assert!(!timed_out.is_reusable_answer(), "the timeout's default");
    assert!(joining("k", 100).reuse(&timed_out, t(100)).is_err());

    let mut by_rule = made(13, 0, input("Ship it?").validate().unwrap());
    by_rule
        .record
        .applied_rules
        .push(crate::rules::AppliedRule {
            loop_id: by_rule.loop_id,
            rule_id: "auto".into(),
            then: crate::rules::Action::Answer(json!(true)),
        });
    by_rule.decide_by_rule(json!(true), t(0)).unwrap();
    assert!(!by_rule.is_reusable_answer(), "a rule's answer");

    let mut test_fields = input("Ship it?").validate().unwrap();
    test_fields.test = true;
    let mut test = made(14, 0, test_fields);
    test.respond(user(2), json!(true), None, t(1)).unwrap();
    assert!(!test.is_reusable_answer(), "a test answer");
}

#[test]
fn a_shared_question_stays_as_it_is_and_a_follower_changes_nothing() {
    use crate::request::RequestPatch;
    let text = |t: &str| RequestPatch {
        request_text: Some(t.into()),
        ..RequestPatch::default()
    };
    let mut open = open_with_key("k");
    assert!(open.update(text("Ship it now?"), t(1)).is_err());
    open.update(
        RequestPatch {
            priority: Some("critical".into()),
            ..RequestPatch::default()
        },
        t(1),
    )
    .unwrap();
    let mut later = joining("k", 5);
    later.join(&open).unwrap();
    assert!(later
        .update(
            RequestPatch {
                priority: Some("low".into()),
                ..RequestPatch::default()
            },
            t(6)
        )
        .is_err());

    // A key kept only for reuse goes when the question changes.
    let mut kept = made(12, 0, input("Ship it?").validate().unwrap());
    kept.keep_key(QuestionKey::parse("k").unwrap());
    kept.update(text("Ship it now?"), t(1)).unwrap();
    assert_eq!(kept.coalesce_key, None);
}

#[test]
fn only_a_request_that_takes_the_same_answer_joins_or_reuses() {
    let open = open_with_key("k");
    let mut text_input = input("Ship it?");
    text_input.response_type = Some("text".into());
    text_input.default_response = None;
    let mut other = made(11, 5, text_input.validate().unwrap());
    other.keep_key(QuestionKey::parse("k").unwrap());
    assert!(other.join(&open).is_err());

    let mut answered = made(13, 0, input("Ship it?").validate().unwrap());
    answered.respond(user(2), json!(true), None, t(1)).unwrap();
    assert!(other.reuse(&answered, t(2)).is_err());
}

#[test]
fn an_image_is_part_of_the_question() {
    let image = |url: &str| {
        let mut i = input("Is this photo fine?");
        i.content_type = Some("image".into());
        i.image_url = Some(url.into());
        QuestionKey::of_question(&i.validate().unwrap())
    };
    assert_ne!(image("https://x.io/a.png"), image("https://x.io/b.png"));
    assert_eq!(image("https://x.io/a.png"), image("https://x.io/a.png"));
}
