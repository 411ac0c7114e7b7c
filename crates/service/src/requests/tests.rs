use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use chrono::Duration;
use reviewloop_domain::{
    BroadcastEntry, FeedbackInput, LoopId, Permission, RequestInput, RequestStatus,
};
use reviewloop_ports::RequestPage;
use serde_json::json;

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

const URL: &str = "http://127.0.0.1:8080";

pub(crate) fn input() -> RequestInput {
    RequestInput {
        request_text: Some("Publish?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("single_select".into()),
        response_config: Some(json!({"options": ["yes", "no"]})),
        priority: Some("high".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(60)),
        default_response: Some(json!("no")),
        ..RequestInput::default()
    }
}

/// A pending request in `kit.a_loop`, created by user 1, sent to users 1, 2 and 3.
pub(crate) fn a_request(kit: &Kit) -> ReviewRequest {
    let broadcasts = [1u8, 2, 3]
        .iter()
        .map(|n| BroadcastEntry {
            user_id: kit.user_id(*n),
            email: Kit::email(*n),
            role: "member".into(),
            notification_sent: true,
            notification_error: None,
            answer: None,
        })
        .collect();
    ReviewRequest::create(
        RequestId::new(kit.oid(60)),
        LoopId::new(kit.oid(50)),
        kit.user_id(1),
        None,
        input().validate().unwrap(),
        broadcasts,
        kit.now,
    )
}

fn service(kit: Kit) -> RequestService {
    RequestService::new(kit.ports(), URL)
}

/// Serves `request` (and then `later`, if given, from the second read on)
/// and the loop with active members 2 and 3.
fn serve(kit: &mut Kit, request: ReviewRequest, later: Option<ReviewRequest>) {
    let lp = kit.a_loop(&[2, 3], &[]);
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    let reads = Arc::new(AtomicUsize::new(0));
    kit.requests().expect_request_by_id().returning(move |_| {
        let n = reads.fetch_add(1, Ordering::SeqCst);
        Ok(Some(match (&later, n) {
            (Some(later), n) if n > 0 => later.clone(),
            _ => request.clone(),
        }))
    });
}

#[tokio::test]
async fn create_broadcasts_to_active_members_with_a_created_event() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[3]);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    let (u1, u2) = (kit.user_id(1), kit.user_id(2));
    kit.requests()
        .expect_insert_request()
        .withf(move |r, events| {
            let to: Vec<_> = r.broadcasted_to.iter().map(|b| b.user_id).collect();
            to == [u1, u2]
                && r.status == RequestStatus::Pending
                && events.len() == 1
                && events[0].event_type == EventType::RequestCreated
                && events[0].data["request"]["id"] == json!(r.id)
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let now = kit.now;
    let created = service(kit)
        .create(&caller, &loop_id, input(), None)
        .await
        .unwrap();
    assert_eq!(created.request.timeout_at, now + Duration::seconds(60));
    assert_eq!(created.request.api_key_id, caller.api_key_id);
    assert_eq!(
        created.polling_url,
        format!("{URL}/v1/api/requests/{}", created.request.id)
    );
}

#[tokio::test]
async fn create_refuses_invisible_loops_and_invalid_bodies() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2], &[3]);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.requests().expect_insert_request().never();
    let (creator, pending, stranger) = (kit.principal(1), kit.principal(3), kit.principal(9));
    let svc = service(kit);
    for caller in [pending, stranger] {
        let err = svc
            .create(&caller, &loop_id, input(), None)
            .await
            .classed()
            .unwrap_err();
        assert!(matches!(err, ServiceError::NotFound(Missing::Loop)));
    }
    let bad = RequestInput {
        priority: Some("urgent".into()),
        ..input()
    };
    let err = svc.create(&creator, &loop_id, bad, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "priority must be one of low, medium, high, critical"
    );
}

#[tokio::test]
async fn create_needs_requests_write() {
    let kit = Kit::new();
    let mut caller = kit.principal(1);
    caller.permissions = vec![Permission::RequestsRead];
    let err = service(kit)
        .create(
            &caller,
            &LoopId::new(caller.user_id.object_id()),
            input(),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Insufficient permissions: requires requests:write"
    );
}

#[tokio::test]
async fn reviewers_see_requests_strangers_and_removed_members_do_not() {
    let mut kit = Kit::new();
    let request = a_request(&kit);
    let id = request.id;
    // user 3 was sent the request but is no longer an active member; the
    // store says only user 2 is.
    let active = kit.principal(2).user_id;
    kit.requests()
        .expect_request_for_viewer()
        .returning(move |_, viewer| Ok(Some((request.clone().into(), *viewer == active))));
    let (creator, reviewer, removed, stranger) = (
        kit.principal(1),
        kit.principal(2),
        kit.principal(3),
        kit.principal(9),
    );
    let svc = service(kit);
    assert!(svc.get(&creator, &id).await.is_ok());
    assert!(svc.get(&reviewer, &id).await.is_ok());
    for caller in [removed, stranger] {
        assert!(matches!(
            svc.get(&caller, &id).await.classed(),
            Err(ServiceError::NotFound(Missing::Request))
        ));
    }
}

#[tokio::test]
async fn reviewers_may_not_cancel_and_the_requester_cancels_with_an_event() {
    let mut kit = Kit::new();
    let request = a_request(&kit);
    let id = request.id;
    serve(&mut kit, request, None);
    kit.requests()
        .expect_update_request()
        .withf(|r, events| {
            r.status == RequestStatus::Cancelled
                && events[0].event_type == EventType::RequestCancelled
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let (creator, reviewer) = (kit.principal(1), kit.principal(2));
    let svc = service(kit);
    let err = svc.cancel(&reviewer, &id).await.unwrap_err();
    assert!(matches!(
        err,
        ChangeRequestError::Denied(crate::Denied::RequestAccess)
    ));
    assert!(
        matches!(ServiceError::from(err), ServiceError::Forbidden(m) if m == "Access denied to this request")
    );
    let cancelled = svc.cancel(&creator, &id).await.unwrap();
    assert!(cancelled.cancelled_at.is_some());
}

#[tokio::test]
async fn cancelling_a_final_request_is_refused_with_400() {
    let mut kit = Kit::new();
    let mut request = a_request(&kit);
    request
        .respond(kit.user_id(2), json!("yes"), None, kit.now)
        .unwrap();
    let id = request.id;
    serve(&mut kit, request, None);
    kit.requests().expect_update_request().never();
    let creator = kit.principal(1);
    let err = service(kit)
        .cancel(&creator, &id)
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::Refused(m) if m.contains("only pending or claimed")));
}

#[tokio::test]
async fn a_lost_claim_race_rereads_and_answers_409() {
    let mut kit = Kit::new();
    let pending = a_request(&kit);
    let mut taken = pending.clone();
    taken.claim(kit.user_id(3), kit.now).unwrap();
    taken.written();
    let id = pending.id;
    serve(&mut kit, pending, Some(taken));
    kit.requests()
        .expect_update_request()
        .times(1)
        .returning(|_, _| Err(StoreError::Conflict("version".into())));
    let reviewer = kit.principal(2);
    let err = service(kit).claim(&reviewer, &id).await.unwrap_err();
    assert!(matches!(
        err,
        ChangeRequestError::Refused(reviewloop_domain::ChangeError::Transition(
            reviewloop_domain::TransitionError::AlreadyClaimed
        ))
    ));
    assert!(
        matches!(ServiceError::from(err), ServiceError::Conflict(m) if m == "Request already claimed")
    );
}

#[tokio::test]
async fn claim_writes_a_claimed_event_naming_the_reviewer() {
    let mut kit = Kit::new();
    let request = a_request(&kit);
    let id = request.id;
    serve(&mut kit, request, None);
    kit.requests()
        .expect_update_request()
        .withf(|r, events| {
            r.status == RequestStatus::Claimed
                && events[0].event_type == EventType::RequestClaimed
                && events[0].data["reviewer"]["email"] == "u2@x.io"
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let reviewer = kit.principal(2);
    let claimed = service(kit).claim(&reviewer, &id).await.unwrap();
    assert_eq!(claimed.claimed_by, Some(reviewer.user_id));
}

#[tokio::test]
async fn respond_validates_the_answer_and_completes() {
    let mut kit = Kit::new();
    let request = a_request(&kit);
    let id = request.id;
    serve(&mut kit, request, None);
    kit.requests()
        .expect_update_request()
        .withf(|r, events| {
            r.status == RequestStatus::Completed
                && events[0].event_type == EventType::RequestCompleted
                // Written with the decision, and carried by its event.
                && r.receipt.is_some()
                && events[0].data["request"]["receipt"]["key_id"] == "rk_test"
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let (reviewer, stranger) = (kit.principal(2), kit.principal(9));
    let svc = service(kit);
    let err = svc
        .respond(&reviewer, &id, Some(json!("maybe")), None)
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::Invalid(_)));
    assert!(matches!(
        svc.respond(&reviewer, &id, None, None).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
    assert!(matches!(
        svc.respond(&stranger, &id, Some(json!("yes")), None)
            .await
            .classed(),
        Err(ServiceError::NotFound(_))
    ));
    let done = svc
        .respond(&reviewer, &id, Some(json!("yes")), None)
        .await
        .unwrap();
    assert_eq!(done.response_data, Some(json!("yes")));
    crate::receipts::tests::assert_verifies(&done);
}

#[tokio::test]
async fn due_requests_time_out_once_and_lost_races_are_skipped() {
    let mut kit = Kit::new();
    let first = a_request(&kit);
    let mut second = a_request(&kit).into_record();
    second.id = RequestId::new(kit.oid(61));
    let second = ReviewRequest::restore(second);
    kit.now += Duration::seconds(61);
    let lp = kit.a_loop(&[2, 3], &[]);
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    let second_id = second.id;
    kit.requests()
        .expect_due_requests()
        .returning(move |_, _| Ok(vec![first.clone(), second.clone()]));
    // Both in one batch; the second was answered meanwhile.
    kit.requests()
        .expect_update_requests()
        .times(1)
        .returning(move |changes| {
            assert_eq!(changes.len(), 2);
            Ok(changes
                .iter()
                .map(|(r, events)| {
                    assert_eq!(r.status, RequestStatus::Timeout);
                    assert_eq!(r.response_data, Some(json!("no")));
                    crate::receipts::tests::assert_verifies(r);
                    assert_eq!(events[0].event_type, EventType::RequestTimeout);
                    r.id != second_id
                })
                .collect())
        });
    assert_eq!(service(kit).time_out_due(100).await.unwrap(), 1);
}

#[tokio::test]
async fn list_parameters_are_validated() {
    let kit = Kit::new();
    let caller = kit.principal(1);
    let svc = service(kit);
    let bad = ListRequestsInput {
        status: Some("done".into()),
        limit: Some("500".into()),
        sort: Some("random".into()),
        loop_id: Some("x".into()),
        ..ListRequestsInput::default()
    };
    let err = svc.list(&caller, bad).await.classed().unwrap_err();
    let ServiceError::Invalid(err) = err else {
        panic!("expected 400")
    };
    let fields: Vec<_> = err.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["status", "loop_id", "limit", "sort"]);
}

#[tokio::test]
async fn list_passes_the_parsed_query_to_the_store() {
    let mut kit = Kit::new();
    let creator = kit.user_id(1);
    kit.requests()
        .expect_list_requests()
        .withf(move |q| {
            q.creator == creator
                && q.status == Some(RequestStatus::Pending)
                && q.limit == 50
                && q.offset == 10
                && q.sort == reviewloop_ports::RequestSort::PriorityDesc
        })
        .returning(|_| {
            Ok(RequestPage {
                requests: vec![],
                total: 0,
            })
        });
    let caller = kit.principal(1);
    let input = ListRequestsInput {
        status: Some("pending".into()),
        offset: Some("10".into()),
        sort: Some("priority_desc".into()),
        ..ListRequestsInput::default()
    };
    assert_eq!(service(kit).list(&caller, input).await.unwrap().0.total, 0);
}

#[tokio::test]
async fn a_retry_under_an_idempotency_id_answers_the_request_it_already_created() {
    let mut kit = Kit::new();
    let existing = a_request(&kit);
    let id = existing.id.object_id();
    let lp = kit.a_loop(&[2], &[]);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.requests()
        .expect_insert_request()
        .times(1)
        .returning(|_, _| Err(StoreError::Conflict("requests.id".into())));
    kit.requests()
        .expect_request_by_id()
        .returning(move |_| Ok(Some(existing.clone())));
    let caller = kit.principal(1);
    let created = service(kit)
        .create(&caller, &loop_id, input(), Some(id))
        .await
        .unwrap();
    assert_eq!(created.request.id.object_id(), id);
}

#[tokio::test]
async fn a_callback_to_an_internal_address_is_refused() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[], &[]);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.guard()
        .expect_check()
        .returning(|_| Err("127.0.0.1 is an internal address".into()));
    kit.requests().expect_insert_request().never();
    let caller = kit.principal(1);
    let input = RequestInput {
        callback_url: Some("http://127.0.0.1/cb".into()),
        ..input()
    };
    let err = service(kit)
        .create(&caller, &loop_id, input, None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "callback_url is not allowed: 127.0.0.1 is an internal address"
    );
}

#[tokio::test]
async fn waiting_creators_get_the_written_state_without_reading_again() {
    let mut kit = Kit::new();
    let request = a_request(&kit);
    let id = request.id;
    let pending = request.clone();
    // One read each when they start waiting, none when woken.
    kit.requests()
        .expect_request_for_viewer()
        .times(2)
        .returning(move |_, _| Ok(Some((pending.clone().into(), true))));
    kit.requests().expect_request_by_id().never();
    let creator = kit.principal(1);
    let reviewer = kit.user_id(2);
    let hub = kit.changes.clone();
    let svc = service(kit);
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let (svc, creator) = (svc.clone(), creator.clone());
            tokio::spawn(async move {
                svc.get_when_settled(&creator, &id, std::time::Duration::from_secs(10))
                    .await
            })
        })
        .collect();
    while hub.watched_requests() == 0 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let mut answered = request.clone();
    answered
        .respond(reviewer, json!("yes"), None, answered.created_at)
        .unwrap();
    answered.written();
    hub.request_written(&answered);
    for waiter in waiters {
        let got = tokio::time::timeout(std::time::Duration::from_secs(2), waiter)
            .await
            .expect("woken at once")
            .unwrap()
            .unwrap();
        assert_eq!(got.status, RequestStatus::Completed);
        assert_eq!(got.response_data, Some(json!("yes")));
    }
}

#[tokio::test]
async fn rating_keeps_the_feedback_the_api_gave() {
    let mut kit = Kit::new();
    let mut request = a_request(&kit);
    request
        .respond(kit.user_id(2), json!("yes"), None, kit.now)
        .unwrap();
    request
        .record_feedback(
            FeedbackInput {
                rating: Some(2.0),
                accuracy: Some(4.0),
                tags: Some(vec!["slow".into()]),
                ..FeedbackInput::default()
            },
            kit.now,
        )
        .unwrap();
    request.written();
    let id = request.id;
    serve(&mut kit, request, None);
    kit.requests()
        .expect_update_request()
        .withf(|r, _| {
            let f = r.feedback.as_ref().unwrap();
            f.rating == Some(5.0) && f.accuracy == Some(4.0) && f.tags == ["slow"]
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let creator = kit.principal(1);
    let rated = service(kit)
        .rate(&creator, &id, Some(5.0), Some("right".into()))
        .await
        .unwrap();
    let feedback = rated.feedback.as_ref().unwrap();
    assert_eq!(feedback.comment.as_deref(), Some("right"));
    assert_eq!(feedback.accuracy, Some(4.0));
}

/// `a_request`, but needing `quorum`.
fn quorum_request(kit: &Kit, quorum: serde_json::Value) -> ReviewRequest {
    let mut record = a_request(kit).into_record();
    record.quorum = Some(
        reviewloop_domain::Quorum::parse(Some(&quorum), None)
            .unwrap()
            .unwrap(),
    );
    ReviewRequest::restore(record)
}

fn kinds(events: &[Event]) -> Vec<EventType> {
    events.iter().map(|e| e.event_type).collect()
}

#[tokio::test]
async fn a_quorum_answer_is_recorded_and_only_the_deciding_one_completes() {
    let mut kit = Kit::new();
    let request = quorum_request(&kit, json!({"count": 2}));
    let id = request.id;
    let mut answered = request.clone();
    answered
        .respond(kit.user_id(2), json!("yes"), None, kit.now)
        .unwrap();
    answered.written();
    serve(&mut kit, request, Some(answered));
    kit.requests()
        .expect_update_request()
        .withf(|r, events| {
            r.status == RequestStatus::Pending
                && r.receipt.is_none()
                && kinds(events) == [EventType::RequestAnswered]
        })
        .times(1)
        .returning(|_, _| Ok(()));
    kit.requests()
        .expect_update_request()
        .withf(|r, events| {
            r.status == RequestStatus::Completed
                && r.receipt.is_some()
                && r.responses().len() == 2
                && kinds(events) == [EventType::RequestAnswered, EventType::RequestCompleted]
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let (requester, first, second) = (kit.principal(1), kit.principal(2), kit.principal(3));
    let svc = service(kit);
    let waiting = svc
        .respond(&first, &id, Some(json!("yes")), None)
        .await
        .unwrap();
    assert_eq!(waiting.status, RequestStatus::Pending);
    assert!(waiting.has_answered(&first.user_id));
    // From here on the store serves the state with the first answer.
    let err = svc
        .respond(&first, &id, Some(json!("no")), None)
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::Conflict(m) if m.contains("already answered")));
    assert!(matches!(
        svc.claim(&second, &id).await.classed(),
        Err(ServiceError::Conflict(m)) if m.contains("without claiming")
    ));
    let done = svc
        .respond(&second, &id, Some(json!("yes")), None)
        .await
        .unwrap();
    assert_eq!(done.response_data, Some(json!("yes")));
    assert_eq!(done.response_by, Some(second.user_id));
    crate::receipts::tests::assert_verifies(&done);
    // The requester is a member of its loop, but not one of its quorum.
    let err = svc
        .respond(&requester, &id, Some(json!("yes")), None)
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::Forbidden(m) if m.contains("requester may not")));
}

#[tokio::test]
async fn racing_quorum_answers_retry_and_the_loser_decides_on_fresh_state() {
    let mut kit = Kit::new();
    let request = quorum_request(&kit, json!({"count": 2, "rule": "majority"}));
    let id = request.id;
    let mut other = request.clone();
    other
        .respond(kit.user_id(2), json!("no"), None, kit.now)
        .unwrap();
    other.written();
    serve(&mut kit, request, Some(other));
    let writes = Arc::new(AtomicUsize::new(0));
    kit.requests()
        .expect_update_request()
        .returning(move |r, events| {
            // The first write lost to user 2's answer; the retry, made from
            // the state that holds it, is a 1-1 tie and decides nothing.
            match writes.fetch_add(1, Ordering::SeqCst) {
                0 => Err(StoreError::Conflict("changed".into())),
                _ => {
                    assert_eq!(r.responses().len(), 2);
                    assert_eq!(r.status, RequestStatus::Pending, "a tie stays open");
                    assert_eq!(kinds(events), [EventType::RequestAnswered]);
                    Ok(())
                }
            }
        });
    let answer = service(kit)
        .respond(&Kit::new().principal(3), &id, Some(json!("yes")), None)
        .await
        .unwrap();
    assert_eq!(answer.responses().len(), 2);
}

#[tokio::test]
async fn a_loop_default_quorum_applies_and_must_be_reachable() {
    let mut kit = Kit::new();
    let mut lp = kit.a_loop(&[2, 3], &[]);
    let q = |count: u32| {
        reviewloop_domain::Quorum::parse(Some(&json!({"count": count})), None)
            .unwrap()
            .unwrap()
    };
    lp.set_default_quorum(Some(q(2)), kit.now).unwrap();
    assert_eq!(
        lp.clone()
            .set_default_quorum(Some(q(3)), kit.now)
            .unwrap_err()
            .errors[0]
            .field,
        "quorum.count",
        "three members, one of them the requester"
    );
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.requests()
        .expect_insert_request()
        .withf(|r, _| {
            r.quorum
                .is_some_and(|q| q.count == 2 && q.exclude_requester)
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let svc = service(kit);
    svc.create(&caller, &loop_id, input(), None).await.unwrap();
    // Its own quorum beats the loop's, and is checked against its reviewers.
    let too_many = RequestInput {
        quorum: Some(json!({"count": 3, "rule": "majority"})),
        ..input()
    };
    let err = svc
        .create(&caller, &loop_id, too_many, None)
        .await
        .classed()
        .unwrap_err();
    match err {
        ServiceError::Invalid(e) => assert_eq!(e.errors[0].field, "quorum.count"),
        other => panic!("expected a 400, got {other:?}"),
    }
}

/// A loop of user 1 with id `n`, active members `active` and `rules`.
fn other_loop(kit: &Kit, n: u8, active: &[u8], rules: serde_json::Value) -> Loop {
    let mut record = kit.a_loop(active, &[]).into_record();
    record.id = LoopId::new(kit.oid(n));
    let mut lp = Loop::restore(record);
    let rules = reviewloop_domain::Rules::parse(Some(&rules)).unwrap();
    lp.set_rules(rules, kit.now).unwrap();
    lp
}

/// Serves each of `loops` by its id.
fn serve_loops(kit: &mut Kit, loops: Vec<Loop>) {
    kit.loops()
        .expect_loop_by_id()
        .returning(move |id| Ok(loops.iter().find(|lp| lp.id == *id).cloned()));
}

fn escalating_request(kit: &Kit, to: LoopId) -> ReviewRequest {
    let mut request = a_request(kit).into_record();
    request.escalation = Some(reviewloop_domain::Escalation {
        after_seconds: 30,
        to_loop_id: to,
        raise_priority: true,
    });
    ReviewRequest::restore(request)
}

#[tokio::test]
async fn a_due_request_escalates_to_the_other_loops_members_with_its_event() {
    let mut kit = Kit::new();
    let home = kit.a_loop(&[2, 3], &[]);
    let leads = other_loop(&kit, 51, &[4, 5], json!([]));
    let request = escalating_request(&kit, leads.id);
    kit.now += Duration::seconds(31);
    serve_loops(&mut kit, vec![home, leads]);
    kit.requests()
        .expect_due_escalations()
        .returning(move |_, _| Ok(vec![request.clone()]));
    let (u4, u5) = (kit.user_id(4), kit.user_id(5));
    kit.requests()
        .expect_escalate_requests()
        .times(1)
        .withf(move |changes| {
            let (r, events) = &changes[0];
            let added: Vec<_> = r
                .broadcasted_to
                .iter()
                .filter(|b| b.role == "escalation")
                .map(|b| b.user_id)
                .collect();
            added == [u4, u5]
                && r.broadcasted_to.len() == 5
                && r.priority == reviewloop_domain::Priority::Critical
                && r.escalated_at.is_some()
                && events.len() == 1
                && events[0].event_type == EventType::RequestEscalated
        })
        .returning(|changes| Ok(vec![true; changes.len()]));
    assert_eq!(service(kit).escalate_due(100).await.unwrap(), 1);
}

#[tokio::test]
async fn an_escalation_to_a_loop_nobody_may_use_any_more_is_dropped() {
    let mut kit = Kit::new();
    let home = kit.a_loop(&[2, 3], &[]);
    // Someone else's loop: neither the requester (user 1) nor the home
    // loop's owner is in it.
    let mut record = other_loop(&kit, 52, &[4], json!([])).into_record();
    record.creator_id = kit.user_id(9);
    record.members.retain(|m| m.user_id != kit.user_id(1));
    let foreign = Loop::restore(record);
    let request = escalating_request(&kit, foreign.id);
    kit.now += Duration::seconds(31);
    serve_loops(&mut kit, vec![home, foreign]);
    kit.requests()
        .expect_due_escalations()
        .returning(move |_, _| Ok(vec![request.clone()]));
    kit.requests()
        .expect_escalate_requests()
        .times(1)
        .withf(|changes| {
            let (r, events) = &changes[0];
            r.escalation.is_none() && r.broadcasted_to.len() == 3 && events.is_empty()
        })
        .returning(|changes| Ok(vec![true; changes.len()]));
    assert_eq!(service(kit).escalate_due(100).await.unwrap(), 0);
}

fn boolean_input(amount: u32) -> RequestInput {
    RequestInput {
        response_type: Some("boolean".into()),
        response_config: None,
        default_response: Some(json!(false)),
        context: Some(json!({"amount": amount})),
        ..input()
    }
}

#[tokio::test]
async fn a_rule_answers_a_routine_request_at_creation_and_nobody_is_asked() {
    let mut kit = Kit::new();
    let mut lp = kit.a_loop(&[2, 3], &[]);
    let rules = json!([{"id": "small", "when": {"context": {"pointer": "/amount", "lt": 50}},
                        "then": {"answer": true}}]);
    lp.set_rules(
        reviewloop_domain::Rules::parse(Some(&rules)).unwrap(),
        kit.now,
    )
    .unwrap();
    let loop_id = lp.id;
    serve_loops(&mut kit, vec![lp]);
    kit.requests()
        .expect_insert_request()
        .times(2)
        .returning(|r, events| {
            let kinds: Vec<_> = events.iter().map(|e| e.event_type).collect();
            if r.status == RequestStatus::Completed {
                assert_eq!(r.decided_by_rule(), Some("small"));
                assert_eq!(r.response_by, None);
                assert!(r.broadcasted_to.is_empty());
                crate::receipts::tests::assert_verifies(r);
                assert_eq!(
                    kinds,
                    [EventType::RequestCreated, EventType::RequestCompleted]
                );
            } else {
                assert_eq!(r.broadcasted_to.len(), 3);
                assert_eq!(kinds, [EventType::RequestCreated]);
            }
            Ok(())
        });
    let caller = kit.principal(1);
    let svc = service(kit);
    let small = svc
        .create(&caller, &loop_id, boolean_input(20), None)
        .await
        .unwrap();
    assert_eq!(small.request.response_data, Some(json!(true)));
    let large = svc
        .create(&caller, &loop_id, boolean_input(500), None)
        .await
        .unwrap();
    assert_eq!(large.request.status, RequestStatus::Pending);
}

#[tokio::test]
async fn routes_are_followed_and_a_route_back_is_passed_over() {
    let mut kit = Kit::new();
    let (a, b) = (LoopId::new(kit.oid(50)), LoopId::new(kit.oid(51)));
    // Two owners' edits raced into a cycle: a → b → a.
    let mut first = kit.a_loop(&[2], &[]);
    let to_b = json!([{"id": "to-b", "when": {}, "then": {"route_to_loop_id": b}}]);
    first
        .set_rules(
            reviewloop_domain::Rules::parse(Some(&to_b)).unwrap(),
            kit.now,
        )
        .unwrap();
    let second = other_loop(
        &kit,
        51,
        &[4],
        json!([{"id": "to-a", "when": {}, "then": {"route_to_loop_id": a}},
               {"id": "two", "when": {}, "then": {"quorum": {"count": 1}}}]),
    );
    serve_loops(&mut kit, vec![first.clone(), second]);
    let fields = boolean_input(1).validate().unwrap();
    let requester = kit.user_id(1);
    let loops: Arc<dyn reviewloop_ports::LoopStore> = kit.ports();
    let routing = routing::route::<ServiceError>(&*loops, first, None, &fields, &requester)
        .await
        .unwrap();
    assert_eq!(routing.lp.id, b);
    let fired: Vec<&str> = routing.applied.iter().map(|r| r.rule_id.as_str()).collect();
    assert_eq!(fired, ["to-b", "two"]);
    assert_eq!(routing.passed_over[0].rule_id, "to-a");
    assert!(matches!(routing.decision, Decision::Quorum(q) if q.count == 1));
}

#[tokio::test]
async fn a_test_key_makes_test_requests_answered_on_its_clock_by_nobody() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2, 3], &[]);
    let loop_id = lp.id;
    serve_loops(&mut kit, vec![lp]);
    // The account's test clock runs an hour ahead.
    kit.requests()
        .expect_test_clock_offset()
        .returning(|_| Ok(3600));
    let now = kit.now;
    kit.requests()
        .expect_insert_request()
        .times(2)
        .returning(move |r, events| {
            assert!(r.test && r.broadcasted_to.is_empty() && r.escalation.is_none());
            assert_eq!(r.created_at, now + Duration::seconds(3600), "test time");
            assert!(r.receipt.is_none());
            assert!(events.iter().all(|e| e.test));
            Ok(())
        });
    let mut tester = kit.principal(1);
    tester.test = true;
    let live = kit.principal(1);
    let svc = service(kit);
    let with_answer = |delay: Option<i64>| RequestInput {
        test_response: Some(json!("yes")),
        test_delay_seconds: delay.map(|d| json!(d)),
        ..input()
    };
    let at_once = svc
        .create(&tester, &loop_id, with_answer(None), None)
        .await
        .unwrap();
    assert_eq!(at_once.request.status, RequestStatus::Completed);
    assert_eq!(at_once.request.response_by, None);
    let later = svc
        .create(&tester, &loop_id, with_answer(Some(30)), None)
        .await
        .unwrap();
    assert_eq!(later.request.status, RequestStatus::Pending);
    assert_eq!(
        later.request.test_due_at(),
        Some(now + Duration::seconds(3630))
    );
    let refused = svc
        .create(&live, &loop_id, with_answer(None), None)
        .await
        .unwrap_err();
    assert!(refused
        .to_string()
        .starts_with("test_response and test_delay_seconds"));
    assert!(matches!(
        svc.advance_test_clock(&live, Some(json!(60)))
            .await
            .classed(),
        Err(ServiceError::Forbidden(_))
    ));
}

#[tokio::test]
async fn a_request_the_worker_ends_during_a_clock_move_counts_as_the_moves() {
    let mut kit = Kit::new();
    let mut record = a_request(&kit).into_record();
    record.test = true;
    record.test_answer = Some(reviewloop_domain::TestAnswer {
        response: json!("yes"),
        at: kit.now + Duration::seconds(60),
    });
    let pending = ReviewRequest::restore(record);
    let mut answered = pending.clone();
    answered
        .answer_as_test(kit.now + Duration::seconds(60))
        .unwrap();
    kit.requests()
        .expect_test_clock_offset()
        .returning(|_| Ok(0));
    kit.requests()
        .expect_advance_test_clock()
        .times(1)
        .returning(|_, seconds, _| Ok(seconds));
    // Read once before the move (the request will fall due), then by the
    // settling pass after it: the timeout worker got there in between.
    let reads = Arc::new(AtomicUsize::new(0));
    let seen = reads.clone();
    kit.requests()
        .expect_due_test_requests()
        .returning(move |_, _, _| {
            Ok(match seen.fetch_add(1, Ordering::SeqCst) {
                0 => vec![pending.clone()],
                _ => vec![],
            })
        });
    kit.requests()
        .expect_request_by_id()
        .returning(move |_| Ok(Some(answered.clone())));
    let mut tester = kit.principal(1);
    tester.test = true;
    let clock = service(kit)
        .advance_test_clock(&tester, Some(json!(60)))
        .await
        .unwrap();
    assert_eq!((clock.answered, clock.timed_out), (1, 0));
    assert_eq!(clock.offset_seconds, 60);
    assert_eq!(reads.load(Ordering::SeqCst), 2);
}
