use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::*;
use crate::id::ObjectId;
use crate::request::RequestInput;
use crate::request::{Escalation, Priority, RequestPatch};
use crate::Email;

fn t(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

fn user(n: u8) -> UserId {
    UserId::new(ObjectId::from_parts(1, [n; 8]))
}

fn request_with(input: RequestInput) -> ReviewRequest {
    let broadcasts = [1u8, 2, 3]
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
        RequestId::new(ObjectId::from_parts(1, [7; 8])),
        LoopId::new(ObjectId::from_parts(1, [8; 8])),
        user(1),
        None,
        input.validate().unwrap(),
        broadcasts,
        t(0),
    )
}

fn request() -> ReviewRequest {
    request_with(request_input())
}

fn in_status(status: RequestStatus) -> ReviewRequest {
    let mut r = request();
    match status {
        RequestStatus::Pending => {}
        RequestStatus::Claimed => {
            r.claim(user(2), t(1)).unwrap();
        }
        RequestStatus::Completed => assert!(r.respond(user(2), json!(true), None, t(1)).unwrap()),
        RequestStatus::Timeout => r.time_out(t(60)).unwrap(),
        RequestStatus::Cancelled => r.cancel(t(1)).unwrap(),
    }
    assert_eq!(r.status, status);
    r
}

const FINAL: [RequestStatus; 3] = [
    RequestStatus::Completed,
    RequestStatus::Timeout,
    RequestStatus::Cancelled,
];

#[test]
fn a_new_request_is_pending_broadcast_and_due_at_its_timeout() {
    let r = request();
    assert_eq!(r.status, RequestStatus::Pending);
    assert_eq!(r.broadcasted_at, Some(t(0)));
    assert_eq!(r.timeout_at, t(60));
    assert!(r.was_broadcast_to(&user(3)));
    assert!(!r.was_broadcast_to(&user(4)));
    assert!(!r.is_due(t(59)));
    assert!(r.is_due(t(60)));
}

#[test]
fn a_reminder_falls_due_with_a_quarter_of_the_time_left() {
    let mut r = request();
    assert_eq!(r.remind_at(), t(45), "60 s to answer: remind at 45 s");
    let patch = RequestPatch {
        timeout_seconds: Some(json!(400)),
        ..RequestPatch::default()
    };
    r.update(patch, t(10)).unwrap();
    assert_eq!(r.timeout_at, t(400));
    assert_eq!(r.remind_at(), t(300), "a later timeout moves it");
}

#[test]
fn claim_moves_pending_to_claimed_once() {
    let mut r = request();
    assert_eq!(r.claim(user(2), t(5)), Ok(true));
    assert_eq!(
        (r.status, r.claimed_by, r.claimed_at),
        (RequestStatus::Claimed, Some(user(2)), Some(t(5)))
    );
    assert_eq!(
        r.claim(user(2), t(6)),
        Ok(false),
        "claiming twice changes nothing"
    );
    assert_eq!(r.claimed_at, Some(t(5)));
    assert_eq!(r.claim(user(3), t(7)), Err(TransitionError::AlreadyClaimed));
}

#[test]
fn claim_refuses_final_states() {
    for status in FINAL {
        assert_eq!(
            in_status(status).claim(user(3), t(9)),
            Err(TransitionError::NotOpen),
            "{status}"
        );
    }
}

#[test]
fn release_gives_the_request_back() {
    let mut r = in_status(RequestStatus::Claimed);
    assert_eq!(
        r.release(user(3), t(2)),
        Err(TransitionError::AlreadyClaimed)
    );
    r.release(user(2), t(2)).unwrap();
    assert_eq!(
        (r.status, r.claimed_by, r.claimed_at),
        (RequestStatus::Pending, None, None)
    );
    assert_eq!(
        r.release(user(2), t(3)),
        Err(TransitionError::NotClaimedByYou)
    );
    for status in FINAL {
        assert_eq!(
            in_status(status).release(user(2), t(9)),
            Err(TransitionError::NotOpen)
        );
    }
}

#[test]
fn respond_from_pending_implies_the_claim_and_records_the_answer() {
    let mut r = request();
    r.respond(user(3), json!(true), None, t(12)).unwrap();
    assert_eq!(r.status, RequestStatus::Completed);
    assert_eq!(r.claimed_by, Some(user(3)));
    assert_eq!(r.response_by, Some(user(3)));
    assert_eq!(r.response_at, Some(t(12)));
    assert_eq!(r.response_data, Some(json!(true)));
    assert_eq!(r.response_time_seconds, Some(12.0));
}

#[test]
fn respond_from_claimed_needs_the_claim_holder() {
    let mut r = in_status(RequestStatus::Claimed);
    assert_eq!(
        r.respond(user(3), json!(true), None, t(2)),
        Err(ChangeError::Transition(TransitionError::AlreadyClaimed))
    );
    r.respond(user(2), json!(false), None, t(2)).unwrap();
    assert_eq!(r.response_by, Some(user(2)));
}

#[test]
fn respond_refuses_final_states_before_looking_at_the_answer() {
    for status in FINAL {
        assert_eq!(
            in_status(status).respond(user(2), json!("not a bool"), None, t(9)),
            Err(ChangeError::Transition(TransitionError::NotOpen)),
            "{status}"
        );
    }
}

#[test]
fn respond_refuses_an_invalid_answer_and_changes_nothing() {
    let mut r = request();
    let before = r.clone();
    let err = r.respond(user(2), json!("yes"), None, t(2)).unwrap_err();
    assert_eq!(err.to_string(), "response_data must be true or false");
    assert_eq!(r, before);
}

#[test]
fn time_out_applies_the_default_from_pending_or_claimed() {
    for status in [RequestStatus::Pending, RequestStatus::Claimed] {
        let mut r = in_status(status);
        assert_eq!(r.time_out(t(59)), Err(TransitionError::NotDue));
        r.time_out(t(61)).unwrap();
        assert_eq!(r.status, RequestStatus::Timeout);
        assert_eq!(r.response_data, Some(json!(false)));
        assert_eq!(r.response_at, Some(t(61)));
        assert_eq!(r.response_by, None);
    }
    for status in FINAL {
        assert_eq!(
            in_status(status).time_out(t(1000)),
            Err(TransitionError::NotOpen)
        );
    }
}

#[test]
fn cancel_works_from_pending_and_claimed_only() {
    for status in [RequestStatus::Pending, RequestStatus::Claimed] {
        let mut r = in_status(status);
        r.cancel(t(3)).unwrap();
        assert_eq!(
            (r.status, r.cancelled_at),
            (RequestStatus::Cancelled, Some(t(3)))
        );
    }
    let err = in_status(RequestStatus::Completed)
        .cancel(t(3))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Request is completed; only pending or claimed requests can be cancelled"
    );
    for status in FINAL {
        assert!(in_status(status).cancel(t(3)).is_err());
    }
}

#[test]
fn feedback_only_for_completed_and_replaces_the_previous_one() {
    for status in [
        RequestStatus::Pending,
        RequestStatus::Claimed,
        RequestStatus::Timeout,
        RequestStatus::Cancelled,
    ] {
        let err = in_status(status)
            .give_feedback(Some(5.0), None, t(3))
            .unwrap_err();
        assert!(
            matches!(
                err,
                ChangeError::Transition(TransitionError::WrongStatus { .. })
            ),
            "{status}"
        );
    }
    let mut r = in_status(RequestStatus::Completed);
    r.give_feedback(Some(4.0), Some("good".into()), t(3))
        .unwrap();
    r.give_feedback(Some(2.0), None, t(4)).unwrap();
    let fb = r.feedback.clone().unwrap();
    assert_eq!(
        (fb.rating, fb.comment, fb.created_at),
        (Some(2.0), None, t(4))
    );
}

#[test]
fn feedback_is_validated() {
    let mut r = in_status(RequestStatus::Completed);
    assert_eq!(
        r.give_feedback(Some(6.0), None, t(3))
            .unwrap_err()
            .to_string(),
        "rating must be a number from 1 to 5"
    );
    assert_eq!(
        r.give_feedback(None, Some(" ".into()), t(3))
            .unwrap_err()
            .to_string(),
        "feedback needs at least one of rating, comment, accuracy, timeliness, helpfulness, would_recommend, follow_up_needed, tags, category"
    );
    assert!(r.give_feedback(None, Some("c".repeat(5001)), t(3)).is_err());
    assert_eq!(r.feedback, None);
}

#[test]
fn the_longer_feedback_is_kept_whole_and_each_bad_part_named() {
    let mut r = in_status(RequestStatus::Completed);
    let input = FeedbackInput {
        accuracy: Some(5.0),
        timeliness: Some(4.0),
        would_recommend: Some(true),
        tags: Some(vec![" fast ".into(), "accurate".into()]),
        category: Some("positive".into()),
        ..FeedbackInput::default()
    };
    r.record_feedback(input, t(3)).unwrap();
    let kept = r.feedback.clone().unwrap();
    assert_eq!(
        (
            kept.accuracy,
            kept.would_recommend,
            kept.tags,
            kept.category.as_deref()
        ),
        (
            Some(5.0),
            Some(true),
            vec!["fast".to_owned(), "accurate".to_owned()],
            Some("positive")
        )
    );
    let bad = FeedbackInput {
        helpfulness: Some(0.0),
        tags: Some(vec![String::new()]),
        category: Some("meh".into()),
        ..FeedbackInput::default()
    };
    let ChangeError::Invalid(e) = r.record_feedback(bad, t(4)).unwrap_err() else {
        panic!("a validation error")
    };
    let fields: Vec<&str> = e.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["helpfulness", "tags", "category"]);
}

#[test]
fn update_changes_pending_requests_only() {
    let patch = RequestPatch {
        priority: Some("critical".into()),
        ..RequestPatch::default()
    };
    for status in [
        RequestStatus::Claimed,
        RequestStatus::Completed,
        RequestStatus::Timeout,
        RequestStatus::Cancelled,
    ] {
        assert!(
            in_status(status).update(patch.clone(), t(5)).is_err(),
            "{status}"
        );
    }
    let mut r = request();
    r.update(patch, t(5)).unwrap();
    assert_eq!((r.priority, r.updated_at), (Priority::Critical, t(5)));
}

#[test]
fn update_recomputes_the_timeout_from_creation() {
    let mut r = request();
    r.update(
        RequestPatch {
            timeout_seconds: Some(json!(3600)),
            ..RequestPatch::default()
        },
        t(30),
    )
    .unwrap();
    assert_eq!(
        (r.timeout_seconds, r.timeout_at),
        (3600, t(0) + Duration::seconds(3600))
    );
    let err = r
        .update(
            RequestPatch {
                timeout_seconds: Some(json!(10)),
                ..RequestPatch::default()
            },
            t(30),
        )
        .unwrap_err();
    assert!(err.to_string().contains("would already have passed"));
}

#[test]
fn update_checks_the_default_against_the_new_config_and_is_all_or_nothing() {
    let mut r = request_with(RequestInput {
        request_text: Some("Pick".into()),
        content_type: Some("markdown".into()),
        response_type: Some("single_select".into()),
        response_config: Some(json!({"options": ["a", "b"]})),
        priority: Some("low".into()),
        processing_type: Some("deferred".into()),
        default_response: Some(json!("a")),
        ..RequestInput::default()
    });
    let before = r.clone();
    let patch = RequestPatch {
        request_text: Some("New text".into()),
        response_config: Some(json!({"options": ["b", "c"]})),
        ..RequestPatch::default()
    };
    let err = r.update(patch, t(5)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "default_response 'a' is not one of the options: b, c"
    );
    assert_eq!(r, before, "a refused patch changes nothing");

    // A wrong new configuration is reported alone, not the default checked
    // against the options it would have replaced.
    let patch = RequestPatch {
        response_config: Some(json!({"options": ["x", ""]})),
        default_response: Some(json!("x")),
        ..RequestPatch::default()
    };
    let err = r.update(patch, t(5)).unwrap_err().to_string();
    assert!(err.contains("response_config.options"), "{err}");
    assert!(!err.contains("default_response"), "{err}");

    let patch = RequestPatch {
        response_config: Some(json!({"options": ["b", "c"]})),
        default_response: Some(json!("c")),
        context: Some(json!({"k": 1})),
        ..RequestPatch::default()
    };
    r.update(patch, t(6)).unwrap();
    assert_eq!(
        r.response_config.as_value(),
        &json!({"options": ["b", "c"]})
    );
    assert_eq!(r.default_response, Some(json!("c")));
    assert_eq!(r.context, Some(json!({"k": 1})));

    r.update(
        RequestPatch {
            default_response: Some(Value::Null),
            context: Some(Value::Null),
            ..RequestPatch::default()
        },
        t(7),
    )
    .unwrap();
    assert_eq!(
        (r.default_response.clone(), r.context.clone()),
        (None, None)
    );
}

#[test]
fn an_empty_patch_is_refused() {
    let err = request().update(RequestPatch::default(), t(1)).unwrap_err();
    assert!(err.to_string().starts_with("nothing to update"));
}

#[test]
fn the_requester_sees_everything_and_a_reviewer_only_its_own_entry() {
    let r = request();
    let (creator, reviewer_id, stranger_id) = (user(1), user(2), user(9));
    let requester = r.audience_of(&creator);
    assert!(requester.sees_requester_fields());
    assert_eq!(
        r.broadcasted_to
            .iter()
            .filter(|e| requester.sees_entry(e))
            .count(),
        3
    );
    let reviewer = r.audience_of(&reviewer_id);
    assert!(!reviewer.sees_requester_fields());
    let seen: Vec<_> = r
        .broadcasted_to
        .iter()
        .filter(|e| reviewer.sees_entry(e))
        .map(|e| e.user_id)
        .collect();
    assert_eq!(seen, [user(2)]);
    let stranger = r.audience_of(&stranger_id);
    assert_eq!(
        r.broadcasted_to
            .iter()
            .filter(|e| stranger.sees_entry(e))
            .count(),
        0,
        "a stranger's view lists nobody (strangers are refused before this)"
    );
}

fn receipt(key: &str) -> crate::receipt::Receipt {
    crate::receipt::Receipt {
        key_id: key.into(),
        signed: "c2lnbmVk".into(),
        signature: "c2ln".into(),
    }
}

#[test]
fn a_statement_names_the_decision_and_hashes_the_text() {
    let r = in_status(RequestStatus::Completed);
    let bytes = r.receipt_statement().unwrap();
    let statement: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(statement["request_id"], json!(r.id));
    assert_eq!(statement["loop_id"], json!(r.loop_id));
    assert_eq!(statement["status"], "completed");
    assert_eq!(statement["response_data"], json!(true));
    assert_eq!(statement["response_by"], json!(user(2)));
    assert_eq!(statement["response_at"], json!(t(1)));
    assert_eq!(
        statement["request_text_sha256"],
        crate::receipt::sha256_hex(b"Ship it?")
    );
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with(r#"{"loop_id":"#), "keys sorted: {text}");

    let timed_out = in_status(RequestStatus::Timeout);
    let statement: serde_json::Value =
        serde_json::from_slice(&timed_out.receipt_statement().unwrap()).unwrap();
    assert_eq!(statement["status"], "timeout");
    assert_eq!(
        statement["response_data"],
        json!(false),
        "the default stands"
    );
    assert_eq!(statement["response_by"], json!(null));
}

#[test]
fn only_a_decided_request_is_sealed_and_only_once() {
    for status in [
        RequestStatus::Pending,
        RequestStatus::Claimed,
        RequestStatus::Cancelled,
    ] {
        let mut r = in_status(status);
        assert!(r.receipt_statement().is_none());
        assert_eq!(r.seal(receipt("k1")), Err(TransitionError::NotSealable));
        assert_eq!(r.receipt, None);
    }
    let mut r = in_status(RequestStatus::Completed);
    r.seal(receipt("k1")).unwrap();
    assert_eq!(r.seal(receipt("k2")), Err(TransitionError::NotSealable));
    assert_eq!(r.receipt.as_ref().unwrap().key_id, "k1", "the first stays");
}

fn quorum_request(quorum: serde_json::Value) -> ReviewRequest {
    request_with(RequestInput {
        request_text: Some("Refund 900 EUR?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("high".into()),
        processing_type: Some("deferred".into()),
        quorum: Some(quorum),
        ..RequestInput::default()
    })
}

#[test]
fn a_quorum_request_is_decided_by_the_answer_that_completes_it() {
    let mut r = quorum_request(json!({"count": 2, "rule": "all_agree"}));
    assert!(r.check_quorum().is_ok(), "users 2 and 3 may answer");
    assert_eq!(
        r.respond(user(1), json!(true), None, t(1)),
        Err(TransitionError::RequesterExcluded.into()),
        "the requester may not answer its own quorum request"
    );
    assert_eq!(
        r.claim(user(2), t(1)),
        Err(TransitionError::QuorumNotClaimable)
    );
    assert!(!r.respond(user(2), json!(true), None, t(2)).unwrap());
    assert_eq!(r.status, RequestStatus::Pending);
    assert!(r.has_answered(&user(2)) && !r.may_answer(&user(2)));
    assert_eq!(
        r.respond(user(2), json!(false), None, t(3)),
        Err(TransitionError::AlreadyAnswered.into()),
        "each reviewer answers once"
    );
    assert!(r.may_answer(&user(3)) && !r.may_answer(&user(1)));
    assert!(r.respond(user(3), json!(true), None, t(4)).unwrap());
    assert_eq!(r.status, RequestStatus::Completed);
    assert_eq!(r.response_data, Some(json!(true)));
    assert_eq!(
        r.response_by,
        Some(user(3)),
        "the deciding answer's reviewer"
    );
    let who: Vec<UserId> = r.responses().iter().map(|a| a.user_id).collect();
    assert_eq!(who, [user(2), user(3)], "every answer listed, oldest first");
}

#[test]
fn a_quorum_that_disagrees_stays_open_until_its_timeout() {
    let mut r = quorum_request(json!({"count": 2, "exclude_requester": false}));
    assert!(!r.respond(user(1), json!(true), None, t(1)).unwrap());
    assert!(!r.respond(user(2), json!(false), None, t(2)).unwrap());
    assert!(
        r.respond(user(3), json!("maybe"), None, t(3)).is_err(),
        "answers are checked"
    );
    assert!(r.respond(user(3), json!(false), None, t(3)).unwrap());
    assert_eq!(r.response_data, Some(json!(false)));
    assert_eq!(r.responses().len(), 3);
}

#[test]
fn a_quorum_larger_than_the_reviewers_is_refused_by_name() {
    let r = quorum_request(json!({"count": 3, "rule": "majority"}));
    let error = r.check_quorum().unwrap_err();
    assert_eq!(error.errors[0].field, "quorum.count");
    let r = quorum_request(json!({"count": 3, "rule": "majority", "exclude_requester": false}));
    assert!(r.check_quorum().is_ok());
}

#[test]
fn a_single_answer_is_listed_among_the_responses() {
    let r = in_status(RequestStatus::Completed);
    let responses = r.responses();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].user_id, user(2));
    assert_eq!(responses[0].email.as_str(), "u2@x.io");
    assert!(in_status(RequestStatus::Timeout).responses().is_empty());
}

fn escalating(raise: bool) -> ReviewRequest {
    request_with(RequestInput {
        request_text: Some("Refund?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("high".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(600)),
        escalation: Some(json!({
            "after_seconds": 60,
            "to_loop_id": LoopId::new(ObjectId::from_parts(1, [9; 8])).to_string(),
            "raise_priority": raise,
        })),
        ..RequestInput::default()
    })
}

fn entry(n: u8) -> BroadcastEntry {
    BroadcastEntry {
        user_id: user(n),
        email: Email::parse(&format!("u{n}@x.io")).unwrap(),
        role: "member".into(),
        notification_sent: false,
        notification_error: None,
        answer: None,
    }
}

#[test]
fn an_unclaimed_request_escalates_once_to_the_reviewers_it_lacks() {
    let mut r = escalating(true);
    assert_eq!(r.escalate_at(), Some(t(60)));
    assert_eq!(
        r.escalate(vec![entry(4)], t(59)),
        Err(TransitionError::NotDue)
    );
    assert_eq!(r.escalate(vec![entry(3), entry(4), entry(5)], t(60)), Ok(2));
    let roles: Vec<&str> = r.broadcasted_to.iter().map(|b| b.role.as_str()).collect();
    assert_eq!(
        roles,
        ["member", "member", "member", "escalation", "escalation"]
    );
    assert_eq!(r.priority, Priority::Critical, "raised one step");
    assert_eq!(r.escalated_at, Some(t(60)));
    assert_eq!(
        r.escalated_to(),
        Some(LoopId::new(ObjectId::from_parts(1, [9; 8])))
    );
    assert_eq!(r.escalate_at(), None, "once");
    assert!(r.escalate(vec![entry(6)], t(70)).is_err());
    assert!(
        r.respond(user(5), json!(true), None, t(80)).is_ok(),
        "an added reviewer answers"
    );
}

#[test]
fn a_claimed_or_ended_request_does_not_escalate() {
    let mut claimed = escalating(false);
    claimed.claim(user(2), t(10)).unwrap();
    assert!(claimed.escalate(vec![entry(4)], t(60)).is_err());
    claimed.release(user(2), t(70)).unwrap();
    assert_eq!(
        claimed.escalate(vec![entry(4)], t(71)),
        Ok(1),
        "released after the deadline: it escalates"
    );
    assert_eq!(claimed.priority, Priority::High, "no raise asked for");
    let mut done = escalating(false);
    done.cancel(t(5)).unwrap();
    assert_eq!(done.escalate_at(), None);
    let mut dropped = escalating(false);
    dropped.drop_escalation(t(61));
    assert_eq!(dropped.escalate_at(), None);
    assert!(dropped.escalation.is_none());
}

#[test]
fn an_escalation_must_come_before_the_timeout() {
    let mut input = RequestInput {
        request_text: Some("x".into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("low".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(60)),
        escalation: Some(json!({"after_seconds": 60, "to_loop_id": "65f0c0ffee0000000000abcd"})),
        ..RequestInput::default()
    };
    let error = input.clone().validate().unwrap_err();
    assert_eq!(error.errors[0].field, "escalation.after_seconds");
    input.escalation = Some(serde_json::Value::Null);
    let loop_default = Escalation::parse(
        Some(&json!({"after_seconds": 120, "to_loop_id": "65f0c0ffee0000000000abcd"})),
        "escalation",
    )
    .unwrap();
    let fields = input.clone().validate().unwrap();
    assert!(
        fields
            .with_loop_escalation(loop_default)
            .escalation
            .is_none(),
        "null declines it"
    );
    input.escalation = None;
    let fields = input.validate().unwrap();
    assert!(
        fields
            .with_loop_escalation(loop_default)
            .escalation
            .is_none(),
        "a default that would come after the timeout is left out"
    );
}

#[test]
fn a_rule_answers_a_new_request_with_an_answer_that_fits() {
    let mut r = request();
    assert!(
        r.decide_by_rule(json!("yes"), t(0)).is_err(),
        "not a boolean"
    );
    assert_eq!(r.status, RequestStatus::Pending);
    r.decide_by_rule(json!(true), t(0)).unwrap();
    assert_eq!(r.status, RequestStatus::Completed);
    assert_eq!(r.response_by, None);
    assert_eq!(r.response_data, Some(json!(true)));
    assert!(r.receipt_statement().is_some(), "it can be sealed");
    assert!(r.decide_by_rule(json!(false), t(1)).is_err(), "once");
}

fn test_request(delay: Option<i64>) -> ReviewRequest {
    let mut fields = RequestInput {
        test_response: Some(json!(true)),
        test_delay_seconds: delay.map(|d| json!(d)),
        ..request_input()
    }
    .validate()
    .unwrap();
    fields.test = true;
    ReviewRequest::create(
        RequestId::new(ObjectId::from_parts(1, [7; 8])),
        LoopId::new(ObjectId::from_parts(1, [8; 8])),
        user(1),
        None,
        fields,
        Vec::new(),
        t(0),
    )
}

fn request_input() -> RequestInput {
    RequestInput {
        request_text: Some("Ship it?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("medium".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(60)),
        default_response: Some(json!(false)),
        ..RequestInput::default()
    }
}

#[test]
fn a_test_request_answers_itself_when_its_clock_gets_there() {
    let mut r = test_request(Some(30));
    assert_eq!(r.test_due_at(), Some(t(30)));
    assert_eq!(r.answer_as_test(t(29)), Err(TransitionError::NotDue));
    r.answer_as_test(t(45)).unwrap();
    assert_eq!(r.status, RequestStatus::Completed);
    assert_eq!(r.response_at, Some(t(30)), "answered when it was due");
    assert_eq!(r.response_by, None);
    assert_eq!(r.test_due_at(), None);

    // Without a test_response it waits for its timeout.
    let mut fields = request_input().validate().unwrap();
    fields.test = true;
    let waiting = ReviewRequest::create(
        RequestId::new(ObjectId::from_parts(1, [7; 8])),
        LoopId::new(ObjectId::from_parts(1, [8; 8])),
        user(1),
        None,
        fields,
        Vec::new(),
        t(0),
    );
    assert_eq!(waiting.test_due_at(), Some(t(60)));
    assert_eq!(
        request().test_due_at(),
        None,
        "live requests are not the test sweep's"
    );

    let bad = RequestInput {
        test_response: Some(json!("yes")),
        test_delay_seconds: Some(json!(60)),
        ..request_input()
    }
    .validate()
    .unwrap_err();
    let fields: Vec<&str> = bad.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["test_response", "test_delay_seconds"]);
}

#[test]
fn a_stored_configuration_that_no_longer_parses_is_read_but_not_answered() {
    let mut record = request().into_record();
    // A select whose options are gone: no answer could fit.
    record.response_type = crate::ResponseType::SingleSelect;
    record.response_config =
        crate::RequestConfig::restore(record.response_type, json!({"options": []}));
    let mut r = ReviewRequest::restore(record);
    assert_eq!(r.response_config.as_value(), &json!({"options": []}));
    assert!(r.config().is_err());
    assert!(r.respond(user(2), json!("a"), None, t(1)).is_err());
}

#[test]
fn a_comment_travels_with_its_answer() {
    let mut r = request();
    r.respond(
        user(3),
        json!(true),
        Some("Title needs a fix".into()),
        t(12),
    )
    .unwrap();
    assert_eq!(r.response_comment.as_deref(), Some("Title needs a fix"));
    let responses = r.responses();
    assert_eq!(responses[0].comment, Some("Title needs a fix"));

    let mut q = quorum_request(json!({"count": 2, "rule": "all_agree"}));
    assert!(!q
        .respond(user(2), json!(true), Some("ok by me".into()), t(2))
        .unwrap());
    assert_eq!(
        q.response_comment, None,
        "undecided: no comment decides yet"
    );
    assert!(q.respond(user(3), json!(true), None, t(3)).unwrap());
    let comments: Vec<_> = q.responses().iter().map(|a| a.comment).collect();
    assert_eq!(comments, vec![Some("ok by me"), None]);
    assert_eq!(q.response_comment, None, "the deciding answer carried none");
}

#[test]
fn an_update_sets_the_callback_and_refuses_another_type() {
    let mut r = request();
    let patch = RequestPatch {
        callback_url: Some(json!("https://hooks.example.com/done")),
        processing_type: Some(r.processing_type.as_str().to_owned()),
        response_type: Some(r.response_type.as_str().to_owned()),
        ..RequestPatch::default()
    };
    r.update(patch, t(5)).unwrap();
    assert_eq!(
        r.callback_url.as_deref(),
        Some("https://hooks.example.com/done")
    );
    let cleared = RequestPatch {
        callback_url: Some(Value::Null),
        ..RequestPatch::default()
    };
    r.update(cleared, t(6)).unwrap();
    assert_eq!(r.callback_url, None);
    let other = RequestPatch {
        processing_type: Some("deferred-or-else".into()),
        response_type: Some("number".into()),
        callback_url: Some(json!("ftp://x")),
        ..RequestPatch::default()
    };
    let before = r.clone();
    let refused = match r.update(other, t(7)) {
        Err(ChangeError::Invalid(e)) => e,
        other => panic!("{other:?}"),
    };
    let fields: Vec<&str> = refused.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["callback_url", "processing_type", "response_type"]);
    assert_eq!(r, before, "nothing changed");
}
