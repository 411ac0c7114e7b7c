use std::sync::{Arc, Mutex};

use reviewloop_domain::{
    EventType, Loop, QuestionKey, RequestInput, RequestStatus, ReviewRequest, Window,
};
use reviewloop_ports::StoreError;
use serde_json::json;

use super::super::tests::a_request;
use super::super::RequestService;
use crate::testkit::Kit;

const URL: &str = "http://127.0.0.1:8080";

fn input(key: Option<&str>) -> RequestInput {
    RequestInput {
        coalesce_key: key.map(str::to_owned),
        ..super::super::tests::input()
    }
}

fn serve_loop(kit: &mut Kit, lp: Loop) {
    kit.loops()
        .expect_loop_by_id()
        .returning(move |_| Ok(Some(lp.clone())));
}

/// The open request of user 1 with key `k`, sent to users 1 to 3.
fn open_request(kit: &Kit) -> ReviewRequest {
    let mut open = a_request(kit);
    open.take_followers(QuestionKey::parse("k").unwrap());
    open
}

#[tokio::test]
async fn a_create_with_the_key_of_an_open_request_joins_it_and_asks_nobody() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2, 3], &[]);
    let loop_id = lp.id;
    serve_loop(&mut kit, lp);
    let open = open_request(&kit);
    let open_id = open.id;
    kit.requests()
        .expect_open_request_with_key()
        .withf(|_, _, test, key| !*test && key.as_str() == "k")
        .returning(move |_, _, _, _| Ok(Some(open.clone())));
    kit.requests()
        .expect_insert_request()
        .withf(move |r, events| {
            r.coalesced_into == Some(open_id)
                && r.broadcasted_to.is_empty()
                && events.len() == 1
                && events[0].event_type == EventType::RequestCreated
                && events[0].data["request"]["coalesced_into"] == json!(open_id)
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, input(Some("k")), None)
        .await
        .unwrap();
    assert_eq!(created.request.coalesced_into, Some(open_id));
}

#[tokio::test]
async fn a_create_that_loses_the_race_for_its_key_joins_the_winner() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2, 3], &[]);
    let loop_id = lp.id;
    serve_loop(&mut kit, lp);
    let winner = open_request(&kit);
    let winner_id = winner.id;
    // Nobody first; then the request that won the race.
    let lookups = Arc::new(Mutex::new(vec![Some(winner), None]));
    kit.requests()
        .expect_open_request_with_key()
        .times(2)
        .returning(move |_, _, _, _| Ok(lookups.lock().unwrap().pop().flatten()));
    let inserts = Arc::new(Mutex::new(Vec::new()));
    let seen = inserts.clone();
    kit.requests()
        .expect_insert_request()
        .times(2)
        .returning(move |r, _| {
            let mut seen = seen.lock().unwrap();
            seen.push(r.clone());
            if seen.len() == 1 {
                Err(StoreError::Conflict("requests_open_question".into()))
            } else {
                Ok(())
            }
        });
    kit.requests()
        .expect_request_by_id()
        .returning(|_| Ok(None));
    let caller = kit.principal(1);
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, input(Some("k")), None)
        .await
        .unwrap();
    let inserts = inserts.lock().unwrap();
    assert!(inserts[0].accepts_followers(), "it first asked people");
    assert_eq!(inserts[1].coalesced_into, Some(winner_id));
    assert_eq!(created.request.coalesced_into, Some(winner_id));
}

#[tokio::test]
async fn past_its_window_an_open_request_stops_taking_others_in() {
    let mut kit = Kit::new();
    let mut lp = kit.a_loop(&[2, 3], &[]);
    lp.set_repeats(Some(Some(Window { window_seconds: 30 })), None, kit.now);
    let loop_id = lp.id;
    serve_loop(&mut kit, lp);
    let mut old = a_request(&kit);
    let fields = input(None).validate().unwrap();
    old.take_followers(QuestionKey::of_question(&fields));
    let old = ReviewRequest::restore(reviewloop_domain::RequestRecord {
        created_at: kit.now - chrono::Duration::seconds(31),
        ..old.into_record()
    });
    let old_id = old.id;
    kit.requests()
        .expect_open_request_with_key()
        .returning(move |_, _, _, _| Ok(Some(old.clone())));
    kit.requests()
        .expect_update_request()
        .withf(move |r, _| r.id == old_id && !r.accepts_followers())
        .times(1)
        .returning(|_, _| Ok(()));
    kit.requests()
        .expect_insert_request()
        .withf(|r, _| r.accepts_followers() && r.broadcasted_to.len() == 3)
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, input(None), None)
        .await
        .unwrap();
    assert_eq!(created.request.coalesced_into, None);
}

#[tokio::test]
async fn a_loop_that_reuses_answers_completes_a_repeat_at_once_with_a_receipt() {
    let mut kit = Kit::new();
    let mut lp = kit.a_loop(&[2, 3], &[]);
    lp.set_repeats(
        None,
        Some(Some(Window {
            window_seconds: 600,
        })),
        kit.now,
    );
    let loop_id = lp.id;
    serve_loop(&mut kit, lp);
    let mut earlier = a_request(&kit);
    earlier
        .respond(kit.user_id(2), json!("yes"), None, kit.now)
        .unwrap();
    let earlier_id = earlier.id;
    let since = kit.now - chrono::Duration::seconds(600);
    kit.requests()
        .expect_answer_to_reuse()
        .withf(move |_, _, key, at| key.as_str().starts_with("sha256:") && *at == since)
        .returning(move |_, _, _, _| Ok(Some(earlier.clone())));
    kit.requests().expect_open_request_with_key().never();
    kit.requests()
        .expect_insert_request()
        .withf(|r, events| {
            r.status == RequestStatus::Completed
                && r.receipt.is_some()
                && events.len() == 2
                && events[1].event_type == EventType::RequestCompleted
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let caller = kit.principal(1);
    let created = RequestService::new(kit.ports(), URL)
        .create(&caller, &loop_id, input(None), None)
        .await
        .unwrap();
    let request = created.request;
    assert_eq!(request.reused_from, Some(earlier_id));
    assert_eq!(request.response_data, Some(json!("yes")));
    assert_eq!(request.response_by, Some(kit_user(2)));
    crate::receipts::tests::assert_verifies(&request);
}

fn kit_user(n: u8) -> reviewloop_domain::UserId {
    Kit::new().user_id(n)
}

#[tokio::test]
async fn an_answer_ends_every_request_that_joined_with_its_own_event_and_receipt() {
    let mut kit = Kit::new();
    let lp = kit.a_loop(&[2, 3], &[]);
    serve_loop(&mut kit, lp);
    let open = open_request(&kit);
    let id = open.id;
    kit.requests()
        .expect_request_by_id()
        .returning(move |_| Ok(Some(open.clone())));
    kit.requests()
        .expect_update_request()
        .times(1)
        .returning(|_, _| Ok(()));
    let mut follower = ReviewRequest::create(
        reviewloop_domain::RequestId::new(kit.oid(61)),
        reviewloop_domain::LoopId::new(kit.oid(50)),
        kit.user_id(1),
        None,
        input(Some("k")).validate().unwrap(),
        Vec::new(),
        kit.now,
    );
    follower.keep_key(QuestionKey::parse("k").unwrap());
    follower.join(&open_request(&kit)).unwrap();
    let follower_id = follower.id;
    kit.requests()
        .expect_open_followers()
        .withf(move |of| *of == id)
        .returning(move |_| Ok(vec![follower.clone()]));
    kit.requests()
        .expect_settle_followers()
        .withf(move |changes| {
            let (r, events) = &changes[0];
            changes.len() == 1
                && r.id == follower_id
                && r.status == RequestStatus::Completed
                && r.response_data == Some(json!("yes"))
                && r.receipt.is_some()
                && events[0].event_type == EventType::RequestCompleted
                && events[0].data["request"]["id"] == json!(follower_id)
        })
        .times(1)
        .returning(|_| Ok(vec![true]));
    let reviewer = kit.principal(2);
    RequestService::new(kit.ports(), URL)
        .respond(&reviewer, &id, Some(json!("yes")), None)
        .await
        .unwrap();
}
