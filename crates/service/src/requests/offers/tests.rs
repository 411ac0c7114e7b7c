use std::sync::{Arc, Mutex};

use reviewloop_domain::{
    Assignment, EventType, RequestInput, RequestStatus, ReviewRequest, Strategy, UserId,
    REASSIGNED_ROLE,
};
use serde_json::json;

use super::super::RequestService;
use crate::testkit::Kit;

const URL: &str = "http://127.0.0.1:8080";

fn input() -> RequestInput {
    RequestInput {
        timeout_seconds: Some(json!(600)),
        ..super::super::tests::input()
    }
}

fn assigning(kit: &Kit, strategy: Strategy, k: usize) -> reviewloop_domain::Loop {
    let mut lp = kit.a_loop(&[2, 3, 4], &[]);
    lp.set_assignment(
        Some(Assignment {
            strategy,
            per_request: k,
            reassign_after_seconds: Some(60),
        }),
        kit.now,
    );
    lp
}

fn offered(r: &ReviewRequest) -> Vec<UserId> {
    r.broadcasted_to.iter().map(|b| b.user_id).collect()
}

#[tokio::test]
async fn round_robin_offers_each_request_to_the_next_members_in_the_shared_turn() {
    let mut kit = Kit::new();
    let lp = assigning(&kit, Strategy::RoundRobin, 2);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    // The shared turn says this offer starts at the third member.
    kit.loops()
        .expect_take_turns()
        .withf(|_, count| *count == 2)
        .times(1)
        .returning(|_, _| Ok(2));
    kit.requests()
        .expect_insert_request()
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    // Members in id order: 1, 2, 3, 4; the turn at 2 takes 3 and 4.
    let expected = vec![kit.user_id(3), kit.user_id(4)];
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, input(), None)
        .await
        .unwrap();
    assert_eq!(offered(&created.request), expected);
    assert_eq!(created.request.reassign_after_seconds, Some(60));
}

#[tokio::test]
async fn least_loaded_offers_to_those_with_the_fewest_open_requests() {
    let mut kit = Kit::new();
    let lp = assigning(&kit, Strategy::LeastLoaded, 1);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    let loads = vec![
        (kit.user_id(1), 4),
        (kit.user_id(2), 2),
        (kit.user_id(3), 1),
        (kit.user_id(4), 3),
    ];
    kit.requests()
        .expect_open_loads()
        .returning(move |_| Ok(loads.clone()));
    kit.loops().expect_take_turns().never();
    kit.requests()
        .expect_insert_request()
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let expected = vec![kit.user_id(3)];
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, input(), None)
        .await
        .unwrap();
    assert_eq!(offered(&created.request), expected);
}

#[tokio::test]
async fn a_quorum_is_offered_to_at_least_as_many_as_it_needs_never_the_requester() {
    let mut kit = Kit::new();
    let lp = assigning(&kit, Strategy::RoundRobin, 1);
    let loop_id = lp.id;
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    kit.loops()
        .expect_take_turns()
        .withf(|_, count| *count == 2)
        .returning(|_, _| Ok(0));
    kit.requests()
        .expect_insert_request()
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let mut body = input();
    body.quorum = Some(json!({"count": 2, "rule": "all_agree"}));
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, body, None)
        .await
        .unwrap();
    let to = offered(&created.request);
    assert_eq!(to.len(), 2);
    assert!(
        !to.contains(&caller.user_id),
        "the requester may not answer"
    );
}

#[tokio::test]
async fn unclaimed_in_time_a_request_is_offered_to_the_next_with_an_event() {
    let mut kit = Kit::new();
    let lp = assigning(&kit, Strategy::RoundRobin, 1);
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
    let mut request = super::super::tests::a_request(&kit);
    let first = request.broadcasted_to[1].clone();
    request = ReviewRequest::restore(reviewloop_domain::RequestRecord {
        broadcasted_to: vec![first.clone()],
        created_at: kit.now - chrono::Duration::seconds(61),
        broadcasted_at: Some(kit.now - chrono::Duration::seconds(61)),
        ..request.into_record()
    });
    request.reassign_after(60);
    assert_eq!(request.status, RequestStatus::Pending);
    kit.requests()
        .expect_due_reassignments()
        .returning(move |_, _| Ok(vec![request.clone()]));
    // An offer to more starts after the last one offered; the loop's
    // shared turn stays for new requests.
    kit.loops().expect_take_turns().never();
    let written = Arc::new(Mutex::new(Vec::new()));
    let seen = written.clone();
    kit.requests()
        .expect_reassign_requests()
        .times(1)
        .returning(move |changes| {
            seen.lock().unwrap().extend(changes.iter().cloned());
            Ok(vec![true])
        });
    let n = RequestService::new(kit.ports(), URL)
        .reassign_due(10)
        .await
        .unwrap();
    assert_eq!(n, 1);
    let written = written.lock().unwrap();
    let (r, events) = &written[0];
    assert_eq!(r.broadcasted_to.len(), 2);
    assert_eq!(r.broadcasted_to[0].user_id, first.user_id);
    assert_eq!(r.broadcasted_to[1].role, REASSIGNED_ROLE);
    assert_ne!(r.broadcasted_to[1].user_id, first.user_id);
    assert_eq!(events[0].event_type, EventType::RequestReassigned);
    assert_eq!(
        events[0].data["offered_to"],
        json!([r.broadcasted_to[1].user_id])
    );
}
