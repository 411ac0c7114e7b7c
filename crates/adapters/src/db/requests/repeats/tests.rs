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
    assert_eq!(store.follower_count(&open.id).await.unwrap(), 1);
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

on_every_backend!(
    one_open_request_takes_a_key_and_followers_join_only_while_it_is_open,
    a_persons_recent_answer_is_found_for_reuse,
);
