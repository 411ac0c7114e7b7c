use chrono::Duration;
use reviewloop_domain::{EventType, QuestionKey, RequestStatus, UserId};
use reviewloop_ports::{RequestStore, StoreError};
use serde_json::json;

use crate::db::testdb::{fixtures, on_every_backend, TestDb};

fn key() -> QuestionKey {
    QuestionKey::parse("deploy-42").unwrap()
}

async fn one_open_request_takes_a_key_and_followers_join_only_while_it_is_open(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let mut open = fixtures::request(&lp, 20, "high", 0);
    open.take_followers(key());
    store.insert_request(&open, &[]).await.unwrap();

    // A second request asking people with the same key is refused by the
    // unique index: two racing creates cannot both ask.
    let mut twin = fixtures::request(&lp, 21, "high", 0);
    twin.take_followers(key());
    assert!(matches!(
        store.insert_request(&twin, &[]).await,
        Err(StoreError::Conflict(_))
    ));
    // A test request with the key is of another world; another key is free.
    let mut other = fixtures::request(&lp, 22, "high", 0);
    other.take_followers(QuestionKey::parse("other").unwrap());
    store.insert_request(&other, &[]).await.unwrap();

    let found = store
        .open_request_with_key(&lp.creator_id, &lp.id, false, &key())
        .await
        .unwrap()
        .expect("the open request");
    assert_eq!(found, open);
    assert_eq!(
        store
            .open_request_with_key(&lp.creator_id, &lp.id, true, &key())
            .await
            .unwrap(),
        None,
        "test requests never meet live ones"
    );

    let mut follower = fixtures::request(&lp, 23, "high", 1);
    follower.keep_key(key());
    follower.join(&found).unwrap();
    store.insert_request(&follower, &[]).await.unwrap();
    let stored = store.request_by_id(&follower.id).await.unwrap().unwrap();
    assert_eq!(stored, follower);
    assert_eq!(stored.coalesced_into, Some(open.id));
    assert!(stored.broadcasted_to.is_empty());
    let followers = store.open_followers(&open.id).await.unwrap();
    assert_eq!(followers, vec![follower.clone()]);
    assert_eq!(
        store
            .follower_count(&open.id, RequestStatus::Pending)
            .await
            .unwrap(),
        1
    );
    // Due with the one it joined, but never timed out on its own.
    let due = store
        .due_requests(fixtures::at(3600), 50)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect::<Vec<_>>();
    assert!(due.contains(&open.id) && !due.contains(&follower.id));

    // It ends: it takes no more in, and a follower made from the copy
    // read before is refused.
    let mut ended = open.clone();
    let reviewer = UserId::new(fixtures::oid(2));
    ended
        .respond(reviewer, json!(7), None, fixtures::at(5))
        .unwrap();
    store.update_request(&ended, &[]).await.unwrap();
    ended.written();
    assert_eq!(
        store
            .open_request_with_key(&lp.creator_id, &lp.id, false, &key())
            .await
            .unwrap(),
        None
    );
    let mut late = fixtures::request(&lp, 24, "high", 6);
    late.keep_key(key());
    late.join(&found).unwrap();
    assert!(matches!(
        store.insert_request(&late, &[]).await,
        Err(StoreError::Conflict(_))
    ));

    // The follower left open is found, settled once, with the answers.
    let stranded = store.stranded_followers(10).await.unwrap();
    assert_eq!(stranded, vec![follower.clone()]);
    let mut settled = follower.clone();
    settled.follow(&ended, fixtures::at(7)).unwrap();
    let event = fixtures::event_for(&settled, &lp, 91, EventType::RequestCompleted);
    let changes = vec![(settled.clone(), vec![event])];
    assert_eq!(store.settle_followers(&changes).await.unwrap(), vec![true]);
    assert_eq!(
        store.settle_followers(&changes).await.unwrap(),
        vec![false],
        "settled once"
    );
    settled.written();
    let stored = store.request_by_id(&follower.id).await.unwrap().unwrap();
    assert_eq!(stored, settled);
    assert_eq!(stored.status, RequestStatus::Completed);
    assert_eq!(stored.broadcasted_to.len(), ended.broadcasted_to.len());
    assert_eq!(stored.responses().len(), 1);
    assert!(store.stranded_followers(10).await.unwrap().is_empty());
    // The reviewer's answered list holds the answer it gave, once.
    let answered = store
        .inbox(&reviewer, reviewloop_ports::InboxView::Answered, 50, 0)
        .await
        .unwrap();
    assert_eq!(
        answered.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![open.id]
    );

    // A new request with the key now asks people again.
    store.insert_request(&twin, &[]).await.unwrap();
}

async fn a_persons_recent_answer_is_found_for_reuse(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let reviewer = UserId::new(fixtures::oid(2));
    let mut answered = fixtures::request(&lp, 20, "high", 0);
    answered.keep_key(key());
    store.insert_request(&answered, &[]).await.unwrap();
    let find = |since: i64| {
        let store = store.clone();
        let lp = lp.clone();
        async move {
            store
                .answer_to_reuse(&lp.creator_id, &lp.id, &key(), fixtures::at(since))
                .await
                .unwrap()
        }
    };
    assert_eq!(find(0).await, None, "not before it is answered");
    answered
        .respond(reviewer, json!(7), None, fixtures::at(10))
        .unwrap();
    store.update_request(&answered, &[]).await.unwrap();
    answered.written();
    assert_eq!(find(10).await, Some(answered.clone()));
    assert_eq!(find(11).await, None, "older than the window");

    // One that took the answer is not offered again.
    let mut reused = fixtures::request(&lp, 21, "high", 20);
    reused.keep_key(key());
    reused.reuse(&answered, fixtures::at(20)).unwrap();
    store.insert_request(&reused, &[]).await.unwrap();
    assert_eq!(find(0).await.map(|r| r.id), Some(answered.id));

    // A timed out one is never offered.
    let mut timed_out = fixtures::request(&lp, 22, "high", 0);
    timed_out.keep_key(QuestionKey::parse("late").unwrap());
    store.insert_request(&timed_out, &[]).await.unwrap();
    timed_out
        .time_out(fixtures::at(0) + Duration::seconds(60))
        .unwrap();
    store.update_request(&timed_out, &[]).await.unwrap();
    assert_eq!(
        store
            .answer_to_reuse(
                &lp.creator_id,
                &lp.id,
                &QuestionKey::parse("late").unwrap(),
                fixtures::at(0)
            )
            .await
            .unwrap(),
        None
    );
}

async fn turns_are_shared_and_loads_count_open_offers(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    use reviewloop_ports::LoopStore;
    assert_eq!(store.take_turns(&lp.id, 2).await.unwrap(), 0);
    assert_eq!(store.take_turns(&lp.id, 1).await.unwrap(), 2);
    // Many at once, as several instances would: each gets its own turn.
    let turns = futures_join(&store, &lp.id).await;
    let mut sorted = turns.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), turns.len(), "no turn taken twice: {turns:?}");
    assert_eq!(store.take_turns(&lp.id, 0).await.unwrap(), 3 + 8);

    // Loads: open requests offered (unanswered) or held.
    let (r1, _) = fixtures::stored_request(&store, &lp, 20, "high", 90).await;
    let (mut r2, _) = fixtures::stored_request(&store, &lp, 21, "high", 91).await;
    let reviewer = UserId::new(fixtures::oid(2));
    r2.claim(reviewer, fixtures::at(1)).unwrap();
    store.update_request(&r2, &[]).await.unwrap();
    let loads: std::collections::HashMap<UserId, u64> = store
        .open_loads(&lp.id)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(loads.get(&reviewer), Some(&2), "one offered, one held");
    let others: Vec<u64> = r1
        .broadcasted_to
        .iter()
        .filter(|b| b.user_id != reviewer)
        .map(|b| loads.get(&b.user_id).copied().unwrap_or(0))
        .collect();
    assert!(
        others.iter().all(|n| *n == 1),
        "held by someone else: {others:?}"
    );
}

async fn futures_join(
    store: &crate::db::SqlStore,
    loop_id: &reviewloop_domain::LoopId,
) -> Vec<u64> {
    use reviewloop_ports::LoopStore;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, id) = (store.clone(), *loop_id);
            tokio::spawn(async move { store.take_turns(&id, 1).await.unwrap() })
        })
        .collect();
    let mut turns = Vec::new();
    for task in tasks {
        turns.push(task.await.unwrap());
    }
    turns
}

async fn a_request_nobody_claimed_in_time_is_found_and_offered_once(db: TestDb) {
    use reviewloop_domain::{BroadcastEntry, REASSIGNED_ROLE};
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let mut request = fixtures::request(&lp, 20, "high", 0);
    let everyone = request.broadcasted_to.clone();
    let first: Vec<BroadcastEntry> = everyone[..1].to_vec();
    request = reviewloop_domain::ReviewRequest::restore(reviewloop_domain::RequestRecord {
        broadcasted_to: first,
        ..request.into_record()
    });
    request.reassign_after(30);
    store.insert_request(&request, &[]).await.unwrap();
    assert!(store
        .due_reassignments(fixtures::at(29), 10)
        .await
        .unwrap()
        .is_empty());
    let due = store.due_reassignments(fixtures::at(30), 10).await.unwrap();
    assert_eq!(due, vec![request.clone()]);
    let mut next = due[0].clone();
    assert_eq!(
        next.reassign(everyone[1..2].to_vec(), fixtures::at(31)),
        Ok(1)
    );
    let event = fixtures::event_for(&next, &lp, 92, EventType::RequestReassigned);
    let changes = vec![(next.clone(), vec![event])];
    assert_eq!(store.reassign_requests(&changes).await.unwrap(), vec![true]);
    assert_eq!(
        store.reassign_requests(&changes).await.unwrap(),
        vec![false]
    );
    next.written();
    let stored = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(stored, next);
    assert_eq!(stored.broadcasted_to[1].role, REASSIGNED_ROLE);
    assert!(store
        .due_reassignments(fixtures::at(60), 10)
        .await
        .unwrap()
        .is_empty());
    let mut again = store.due_reassignments(fixtures::at(61), 10).await.unwrap();
    assert_eq!(again.len(), 1);
    // A second offer writes only the entry it adds, beside those before.
    let mut third = again.remove(0);
    assert_eq!(
        third.reassign(everyone[2..3].to_vec(), fixtures::at(62)),
        Ok(1)
    );
    let event = fixtures::event_for(&third, &lp, 93, EventType::RequestReassigned);
    assert_eq!(
        store
            .reassign_requests(&[(third.clone(), vec![event])])
            .await
            .unwrap(),
        vec![true]
    );
    third.written();
    let stored = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(stored, third);
    assert_eq!(stored.broadcasted_to.len(), 3);
}

on_every_backend!(
    one_open_request_takes_a_key_and_followers_join_only_while_it_is_open,
    a_persons_recent_answer_is_found_for_reuse,
    turns_are_shared_and_loads_count_open_offers,
    a_request_nobody_claimed_in_time_is_found_and_offered_once,
);

#[tokio::test]
async fn the_sweep_reads_only_open_followers_through_their_index() {
    let db = TestDb::sqlite();
    let plan = db.plan_of(super::stranded_query(10)).await;
    // A scan of the partial index reads the open followers only.
    assert!(
        plan.iter()
            .any(|d| d.contains("USING INDEX requests_open_followers")),
        "{plan:?}"
    );
    assert!(
        !plan
            .iter()
            .any(|d| d.starts_with("SCAN") && !d.contains("USING INDEX")),
        "no full scan: {plan:?}"
    );
}

/// Each lookup of a create, an answer and the pages reads its own index,
/// never a range of all a loop's or account's requests.
#[tokio::test]
async fn each_lookup_reads_its_own_index() {
    let db = TestDb::sqlite();
    let since = chrono::DateTime::from_timestamp(0, 0).unwrap().naive_utc();
    for (plan, index) in [
        (
            db.plan_of(super::open_with_key_query("c", "l", false, "k"))
                .await,
            "requests_open_question",
        ),
        (
            db.plan_of(super::answer_query("c", "l", "k", since)).await,
            "requests_answers_by_question",
        ),
        (
            db.plan_of(super::open_followers_query("r")).await,
            "requests_followers",
        ),
    ] {
        assert!(
            plan.iter().any(|d| d.contains(&format!("INDEX {index}"))),
            "{index}: {plan:?}"
        );
    }
}
