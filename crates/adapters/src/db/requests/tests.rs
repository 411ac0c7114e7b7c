use diesel::prelude::*;
use reviewloop_domain::{EventType, Loop, Member, Priority, RequestInput, RequestStatus};
use reviewloop_ports::LoopStore;
use serde_json::json;

use super::super::schema::outbox_events;
use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

fn query(creator: &UserId) -> RequestQuery {
    RequestQuery {
        creator: *creator,
        api_key: None,
        status: None,
        priority: None,
        loop_id: None,
        limit: 50,
        offset: 0,
        sort: RequestSort::CreatedAtDesc,
        test: false,
    }
}

async fn outbox_count(db: &TestDb) -> i64 {
    db.db
        .run(|c| Ok(outbox_events::table.count().get_result(c)?))
        .await
        .unwrap()
}

async fn audit_count(db: &TestDb) -> i64 {
    db.db
        .run(|c| {
            Ok(crate::db::schema::audit_entries::table
                .count()
                .get_result(c)?)
        })
        .await
        .unwrap()
}

async fn a_request_round_trips_with_every_field(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let mut request = fixtures::request(&lp, 20, "high", 0);
    let event = fixtures::event_for(&request, &lp, 90, EventType::RequestCreated);
    store.insert_request(&request, &[event]).await.unwrap();
    let loaded = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(loaded, request);
    assert_eq!(loaded.timeout_seconds, 60);
    assert_eq!(
        loaded.broadcasted_to.len(),
        3,
        "creator and two active members, not the pending one"
    );
    assert_eq!(outbox_count(&db).await, 1);

    request
        .respond(
            UserId::new(fixtures::oid(2)),
            json!(7),
            None,
            fixtures::at(3),
        )
        .unwrap();
    request
        .seal(reviewloop_domain::Receipt {
            key_id: "rk_0011223344556677".into(),
            signed: "eyJzdGF0dXMiOiJjb21wbGV0ZWQifQ".into(),
            signature: "c2lnbmF0dXJl".into(),
        })
        .unwrap();
    request
        .give_feedback(Some(4.5), Some("quick".into()), fixtures::at(4))
        .unwrap();
    store.update_request(&request, &[]).await.unwrap();
    let loaded = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(loaded.version, 1);
    request.written();
    assert_eq!(loaded, request);
    // Read for a viewer (one statement on PostgreSQL), it is the same.
    let (viewed, _) = store
        .request_for_viewer(&request.id, &UserId::new(fixtures::oid(2)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(*viewed, request);
}

async fn a_request_is_read_with_whether_the_viewer_is_an_active_member(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let request = fixtures::request(&lp, 20, "high", 0);
    store.insert_request(&request, &[]).await.unwrap();
    let active = |u: u8| {
        let store = store.clone();
        let id = request.id;
        async move {
            let (loaded, active) = store
                .request_for_viewer(&id, &UserId::new(fixtures::oid(u)))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(loaded.broadcasted_to.len(), 3);
            active
        }
    };
    // 1 created the loop, 2 and 3 joined, 4 is only invited, 9 is a stranger.
    assert_eq!(
        [
            active(1).await,
            active(2).await,
            active(3).await,
            active(4).await,
            active(9).await
        ],
        [true, true, true, false, false]
    );
    let missing = RequestId::new(fixtures::oid(99));
    assert!(store
        .request_for_viewer(&missing, &UserId::new(fixtures::oid(1)))
        .await
        .unwrap()
        .is_none());
}

async fn a_batch_of_changes_lands_except_where_someone_else_got_there_first(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let (first, second, third, twin) = (
        fixtures::request(&lp, 20, "high", 0),
        fixtures::request(&lp, 21, "high", 0),
        fixtures::request(&lp, 22, "high", 0),
        fixtures::request(&lp, 23, "high", 0),
    );
    for r in [&first, &second, &third, &twin] {
        store.insert_request(r, &[]).await.unwrap();
    }
    // On PostgreSQL (a sweep's pass is written set-based there), each
    // landed change is announced to the other instances.
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = heard.clone();
    let listener = db
        .db
        .listen_for_changes(move |change| sink.lock().unwrap().push(change));
    if listener.is_some() {
        // Listening once it says it (re)connected.
        for _ in 0..1000 {
            if !heard.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(!heard.lock().unwrap().is_empty(), "the listener connected");
    }
    // The second is claimed by a reviewer before the batch writes.
    let mut claimed = second.clone();
    claimed
        .claim(UserId::new(fixtures::oid(2)), fixtures::at(1))
        .unwrap();
    store.update_request(&claimed, &[]).await.unwrap();
    // A time finer than the database keeps: a batch stores it as a single
    // change would.
    let fine = fixtures::at(100) + chrono::Duration::nanoseconds(123_456_789);
    let mut batch: Vec<(ReviewRequest, Vec<Event>)> = [first.clone(), second.clone()]
        .into_iter()
        .zip(90u8..)
        .map(|(mut r, n)| {
            r.time_out(fine).unwrap();
            let event = fixtures::event_for(&r, &lp, n, EventType::RequestTimeout);
            (r, vec![event])
        })
        .collect();
    // A change without an event is logged in the audit trail all the same.
    let mut silently = third.clone();
    silently
        .claim(UserId::new(fixtures::oid(3)), fixtures::at(2))
        .unwrap();
    batch.push((silently.clone(), Vec::new()));
    let (events_before, audit_before) = (outbox_count(&db).await, audit_count(&db).await);
    assert_eq!(
        store.update_requests(&batch).await.unwrap(),
        [true, false, true]
    );
    assert_eq!(
        outbox_count(&db).await,
        events_before + 1,
        "only the landed change's event"
    );
    assert_eq!(
        audit_count(&db).await,
        audit_before + 2,
        "the landed event's entry and the silent change's"
    );
    let stored = store.request_by_id(&first.id).await.unwrap().unwrap();
    assert_eq!((stored.status, stored.version), (RequestStatus::Timeout, 1));
    let kept = store.request_by_id(&second.id).await.unwrap().unwrap();
    assert_eq!(kept.status, RequestStatus::Claimed);
    silently.written();
    assert_eq!(
        store.request_by_id(&third.id).await.unwrap().unwrap(),
        silently
    );
    let mut single = twin.clone();
    single.time_out(fine).unwrap();
    store.update_request(&single, &[]).await.unwrap();
    let single = store.request_by_id(&twin.id).await.unwrap().unwrap();
    assert_eq!(stored.response_at, single.response_at);
    assert_eq!(stored.updated_at, single.updated_at);
    if db.db.is_postgres() {
        for _ in 0..200 {
            if heard.lock().unwrap().len() >= 5 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let heard = heard.lock().unwrap().clone();
        for id in [first.id, third.id] {
            assert!(
                heard.contains(&crate::db::changes::Change::Request(id)),
                "{id} announced: {heard:?}"
            );
        }
    }
}

async fn a_stale_write_is_a_conflict_and_changes_nothing(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let request = fixtures::request(&lp, 20, "high", 0);
    store.insert_request(&request, &[]).await.unwrap();

    let mut first = request.clone();
    first
        .claim(UserId::new(fixtures::oid(2)), fixtures::at(1))
        .unwrap();
    let mut second = request.clone();
    second
        .claim(UserId::new(fixtures::oid(3)), fixtures::at(1))
        .unwrap();
    let claimed = fixtures::event_for(&second, &lp, 91, EventType::RequestClaimed);

    store.update_request(&first, &[]).await.unwrap();
    let lost = store.update_request(&second, &[claimed]).await;
    assert!(matches!(lost, Err(StoreError::Conflict(_))));
    let stored = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(stored.claimed_by, Some(UserId::new(fixtures::oid(2))));
    assert_eq!(
        outbox_count(&db).await,
        0,
        "the loser's event was not written"
    );
}

async fn a_change_and_its_events_commit_together_or_not_at_all(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let (request, created) = fixtures::stored_request(&store, &lp, 20, "high", 90).await;

    // Reusing the event id makes the outbox insert fail inside the transaction.
    let mut cancelled = request.clone();
    cancelled.cancel(fixtures::at(2)).unwrap();
    let result = store.update_request(&cancelled, &[created]).await;
    assert!(matches!(result, Err(StoreError::Conflict(_))));
    let stored = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(
        stored.status,
        RequestStatus::Pending,
        "the change rolled back with its event"
    );
}

async fn updating_a_missing_request_is_not_found(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let request = fixtures::request(&lp, 20, "high", 0);
    assert!(matches!(
        store.update_request(&request, &[]).await,
        Err(StoreError::NotFound)
    ));
}

async fn lists_filter_sort_page_and_count(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "AAAAAA").await;
    let other = fixtures::loop_with_members(&store, 11, "BBBBBB").await;
    let priorities = ["low", "critical", "medium", "high", "low"];
    for (i, priority) in priorities.iter().enumerate() {
        let n = 20 + i as u8;
        let target = if i == 4 { &other } else { &lp };
        store
            .insert_request(&fixtures::request(target, n, priority, i as i64), &[])
            .await
            .unwrap();
    }
    let mut cancelled = store
        .request_by_id(&RequestId::new(fixtures::oid(21)))
        .await
        .unwrap()
        .unwrap();
    cancelled.cancel(fixtures::at(9)).unwrap();
    store.update_request(&cancelled, &[]).await.unwrap();

    let creator = lp.creator_id;
    let ids = |page: RequestPage| {
        page.requests
            .iter()
            .map(|r| r.id.object_id())
            .collect::<Vec<_>>()
    };
    let all = store.list_requests(&query(&creator)).await.unwrap();
    assert_eq!(all.total, 5);
    assert_eq!(ids(all), [24, 23, 22, 21, 20].map(fixtures::oid));

    let asc = RequestQuery {
        sort: RequestSort::CreatedAtAsc,
        limit: 2,
        offset: 1,
        ..query(&creator)
    };
    let page = store.list_requests(&asc).await.unwrap();
    assert_eq!(page.total, 5, "total counts every match, not the page");
    assert_eq!(ids(page), [21, 22].map(fixtures::oid));

    let by_priority = RequestQuery {
        sort: RequestSort::PriorityDesc,
        ..query(&creator)
    };
    assert_eq!(
        ids(store.list_requests(&by_priority).await.unwrap()),
        [21, 23, 22, 24, 20].map(fixtures::oid)
    );

    let by_status = RequestQuery {
        sort: RequestSort::StatusAsc,
        ..query(&creator)
    };
    assert_eq!(
        ids(store.list_requests(&by_status).await.unwrap())[0],
        fixtures::oid(21),
        "cancelled sorts first"
    );

    let filtered = RequestQuery {
        status: Some(RequestStatus::Pending),
        priority: Some(Priority::Low),
        loop_id: Some(lp.id),
        ..query(&creator)
    };
    assert_eq!(
        ids(store.list_requests(&filtered).await.unwrap()),
        [fixtures::oid(20)]
    );

    let stranger = UserId::new(fixtures::oid(2));
    assert_eq!(
        store.list_requests(&query(&stranger)).await.unwrap().total,
        0
    );
}

async fn the_inbox_holds_what_a_reviewer_can_still_act_on(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let (u2, u3) = (UserId::new(fixtures::oid(2)), UserId::new(fixtures::oid(3)));
    let old_low = fixtures::request(&lp, 20, "low", 0);
    let new_high = fixtures::request(&lp, 21, "high", 5);
    let old_high = fixtures::request(&lp, 22, "high", 1);
    let mut claimed_by_3 = fixtures::request(&lp, 23, "critical", 2);
    let mut answered = fixtures::request(&lp, 24, "critical", 3);
    for r in [&old_low, &new_high, &old_high, &claimed_by_3, &answered] {
        store.insert_request(r, &[]).await.unwrap();
    }
    claimed_by_3.claim(u3, fixtures::at(6)).unwrap();
    store.update_request(&claimed_by_3, &[]).await.unwrap();
    answered
        .respond(u3, json!(2), None, fixtures::at(6))
        .unwrap();
    store.update_request(&answered, &[]).await.unwrap();

    let ids = |list: Vec<ReviewRequest>| list.iter().map(|r| r.id.object_id()).collect::<Vec<_>>();
    assert_eq!(
        ids(store
            .inbox(&u2, InboxView::Actionable, 50, 0)
            .await
            .unwrap()),
        [22, 21, 20].map(fixtures::oid)
    );
    assert_eq!(
        ids(store
            .inbox(&u3, InboxView::Actionable, 50, 0)
            .await
            .unwrap()),
        [23, 22, 21, 20].map(fixtures::oid)
    );
    assert_eq!(
        ids(store.inbox(&u2, InboxView::Actionable, 1, 1).await.unwrap()),
        [fixtures::oid(21)]
    );
    // The web inbox's tabs: what is free, what I hold, what I answered.
    assert_eq!(
        ids(store.inbox(&u3, InboxView::Available, 50, 0).await.unwrap()),
        [22, 21, 20].map(fixtures::oid)
    );
    assert_eq!(
        ids(store.inbox(&u3, InboxView::Claimed, 50, 0).await.unwrap()),
        [fixtures::oid(23)]
    );
    assert!(store
        .inbox(&u2, InboxView::Claimed, 50, 0)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        ids(store.inbox(&u3, InboxView::Answered, 50, 0).await.unwrap()),
        [fixtures::oid(24)]
    );
    assert!(store
        .inbox(&u2, InboxView::Answered, 50, 0)
        .await
        .unwrap()
        .is_empty());

    // A member added after the requests were created received none of them.
    let late_user = fixtures::user(8, "late@x.io");
    reviewloop_ports::AccountStore::insert_user(&store, &late_user)
        .await
        .unwrap();
    store
        .save_member(
            &Member::joined(
                lp.id,
                late_user.id,
                late_user.email.clone(),
                fixtures::at(9),
            ),
            None,
            &[],
            &[],
        )
        .await
        .unwrap();
    assert!(store
        .inbox(&late_user.id, InboxView::Actionable, 50, 0)
        .await
        .unwrap()
        .is_empty());

    // A removed member's inbox empties.
    remove_member(
        &store,
        store.member(&lp.id, &u2).await.unwrap().unwrap(),
        10,
    )
    .await;
    assert!(store
        .inbox(&u2, InboxView::Actionable, 50, 0)
        .await
        .unwrap()
        .is_empty());
}

async fn due_requests_are_the_open_ones_past_their_timeout_soonest_first(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    for (n, created) in [(20u8, 10i64), (21, 0), (22, 100)] {
        store
            .insert_request(&fixtures::request(&lp, n, "low", created), &[])
            .await
            .unwrap();
    }
    let mut cancelled = fixtures::request(&lp, 23, "low", 0);
    store.insert_request(&cancelled, &[]).await.unwrap();
    cancelled.cancel(fixtures::at(1)).unwrap();
    store.update_request(&cancelled, &[]).await.unwrap();

    let due: Vec<_> = store
        .due_requests(fixtures::at(75), 10)
        .await
        .unwrap()
        .iter()
        .map(|r| r.id.object_id())
        .collect();
    assert_eq!(
        due,
        [21, 20].map(fixtures::oid),
        "timeouts at 60 and 70; the one at 160 is not due"
    );
    // Once their sweep leases have run out, they are due again, one at a time if asked.
    assert_eq!(
        store.due_requests(fixtures::at(90), 1).await.unwrap().len(),
        1
    );
    let open: Vec<_> = store
        .open_requests_in_loop(&lp.id)
        .await
        .unwrap()
        .iter()
        .map(|r| r.id.object_id())
        .collect();
    assert_eq!(open, [21, 20, 22].map(fixtures::oid));
}

/// Instances share a PostgreSQL database, and their sweepers share its due
/// requests (an SQLite file has one instance, and one sweeper).
#[tokio::test]
async fn sweepers_share_the_due_requests_and_take_over_a_dead_ones() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    for n in 20..26u8 {
        store
            .insert_request(&fixtures::request(&lp, n, "low", 0), &[])
            .await
            .unwrap();
    }
    let ids = |list: Vec<ReviewRequest>| list.iter().map(|r| r.id).collect::<Vec<_>>();
    let first = ids(store.due_requests(fixtures::at(70), 3).await.unwrap());
    let second = ids(store.due_requests(fixtures::at(70), 10).await.unwrap());
    assert_eq!((first.len(), second.len()), (3, 3));
    assert!(
        first.iter().all(|id| !second.contains(id)),
        "each instance gets its own"
    );
    assert!(
        store
            .due_requests(fixtures::at(71), 10)
            .await
            .unwrap()
            .is_empty(),
        "all are held"
    );
    let later = ids(store.due_requests(fixtures::at(90), 10).await.unwrap());
    assert_eq!(
        later.len(),
        6,
        "the sweepers died: their requests are taken again"
    );
}

/// The viewer's read is kept prepared on each connection; a column added
/// to `requests` while instances run (a migration of the next version)
/// must not break it, as a kept `SELECT r.*` would ("cached plan must
/// not change result type").
#[tokio::test]
async fn a_kept_read_survives_a_column_added_while_running() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let request = fixtures::request(&lp, 20, "high", 0);
    store.insert_request(&request, &[]).await.unwrap();
    let viewer = UserId::new(fixtures::oid(2));
    // Every pooled connection that will serve the second read prepares
    // the statement first: one connection, used throughout.
    let (id, reader) = (request.id.to_string(), viewer.to_string());
    let (first, second) = db
        .db
        .run(move |conn| {
            let DbConnection::Postgres(pg) = conn else {
                unreachable!("a PostgreSQL test database")
            };
            let first = rows::one_request_for_viewer(pg, &id, &reader)?;
            diesel::sql_query("ALTER TABLE requests ADD COLUMN added_later TEXT").execute(pg)?;
            let second = rows::one_request_for_viewer(pg, &id, &reader)?;
            Ok((
                first.map(|(r, a)| (r.id, a)),
                second.map(|(r, a)| (r.id, a)),
            ))
        })
        .await
        .unwrap();
    assert_eq!(first, Some((request.id, true)));
    assert_eq!(second, first);
}

#[tokio::test]
async fn the_timeout_sweep_reads_only_due_rows_through_its_index() {
    let db = TestDb::sqlite();
    let plan = db.plan_of(due_query(fixtures::at(0), 10)).await;
    assert!(
        plan.iter().any(|d| d.contains("USING INDEX requests_due")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|d| d.starts_with("SCAN")),
        "no full scan: {plan:?}"
    );
}

#[tokio::test]
async fn the_inbox_starts_from_memberships_and_reads_open_requests_only() {
    let db = TestDb::sqlite();
    let plan = db
        .plan_of(inbox_query(
            fixtures::oid(2).to_string(),
            InboxView::Actionable,
            50,
            0,
        ))
        .await;
    assert!(
        plan.iter()
            .any(|d| d.contains("loop_members") && d.contains("loop_members_by_user")),
        "{plan:?}"
    );
    assert!(
        plan.iter()
            .any(|d| d.contains("requests USING INDEX requests_by_loop (loop_id=? AND status=?)")),
        "open requests by loop and status: {plan:?}"
    );
    assert!(
        plan.iter()
            .any(|d| d.contains("request_broadcasts") && d.contains("request_id=? AND user_id=?")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|d| d.starts_with("SCAN")),
        "no full scan: {plan:?}"
    );
}

async fn request_facts_are_the_creators_since_a_time_in_a_loop_or_all(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let other = fixtures::loop_with_members(&store, 11, "GHJKMN").await;
    let mut answered = fixtures::request(&lp, 20, "high", 5);
    let old = fixtures::request(&lp, 21, "low", -100);
    let elsewhere = fixtures::request(&other, 22, "low", 6);
    for r in [&answered, &old, &elsewhere] {
        store.insert_request(r, &[]).await.unwrap();
    }
    let u2 = reviewloop_domain::UserId::new(fixtures::oid(2));
    answered
        .respond(u2, json!(7), None, fixtures::at(35))
        .unwrap();
    store.update_request(&answered, &[]).await.unwrap();

    let creator = lp.creator_id;
    let all = store
        .request_facts(&creator, None, fixtures::at(0))
        .await
        .unwrap();
    let mut ids: Vec<_> = all.iter().map(|f| (f.loop_id, f.status)).collect();
    ids.sort_by_key(|(l, _)| l.to_string());
    assert_eq!(
        ids,
        vec![
            (lp.id, RequestStatus::Completed),
            (other.id, RequestStatus::Pending)
        ],
        "the old one is outside the window"
    );
    let one = store
        .request_facts(&creator, Some(lp.id), fixtures::at(0))
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].response_by, Some(u2));
    assert_eq!(one[0].response_time_seconds, Some(30.0));
    let stranger = reviewloop_domain::UserId::new(fixtures::oid(3));
    assert!(store
        .request_facts(&stranger, None, fixtures::at(-1000))
        .await
        .unwrap()
        .is_empty());
}

async fn quorum_answers_are_kept_per_reviewer_and_leave_their_inbox(db: TestDb) {
    let store = db.store();
    let mut lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let quorum = reviewloop_domain::Quorum::parse(Some(&json!({"count": 2})), None)
        .unwrap()
        .unwrap();
    // A loop keeps its default quorum.
    lp.set_default_quorum(Some(quorum), fixtures::at(2))
        .unwrap();
    store.update_loop(&lp).await.unwrap();
    let loaded = store.loop_by_id(&lp.id).await.unwrap().unwrap();
    assert_eq!(loaded.quorum, Some(quorum));

    let mut record = fixtures::request(&lp, 20, "high", 0).into_record();
    record.quorum = Some(quorum);
    let mut request = ReviewRequest::restore(record);
    store.insert_request(&request, &[]).await.unwrap();
    assert_eq!(
        store.request_by_id(&request.id).await.unwrap().unwrap(),
        request
    );

    let (u2, u3) = (UserId::new(fixtures::oid(2)), UserId::new(fixtures::oid(3)));
    let stale = request.clone();
    assert!(!request
        .respond(u2, json!(7), Some("seven, surely".into()), fixtures::at(3))
        .unwrap());
    store.update_request(&request, &[]).await.unwrap();
    request.written();
    let loaded = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(loaded, request, "the answer is kept on u2's entry");
    let (viewed, active) = store
        .request_for_viewer(&request.id, &u3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (&*viewed, active),
        (&request, true),
        "answers, times and comments read back for a viewer too"
    );
    assert_eq!(loaded.responses()[0].comment, Some("seven, surely"));
    assert!(loaded.has_answered(&u2) && !loaded.has_answered(&u3));

    let inbox = |user: UserId| {
        let store = store.clone();
        async move {
            store
                .inbox(&user, InboxView::Available, 50, 0)
                .await
                .unwrap()
                .len()
        }
    };
    assert_eq!(inbox(u2).await, 0, "answered: nothing left to act on");
    assert_eq!(inbox(u3).await, 1);

    // An answer made from the state before u2's loses, and writes nothing.
    let mut late = stale;
    late.respond(u3, json!(7), None, fixtures::at(4)).unwrap();
    assert!(matches!(
        store.update_request(&late, &[]).await,
        Err(StoreError::Conflict(_))
    ));
    let loaded = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert!(!loaded.has_answered(&u3));

    assert!(request
        .respond(u3, json!(7), Some("agreed".into()), fixtures::at(5))
        .unwrap());
    store.update_request(&request, &[]).await.unwrap();
    let decided = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(
        decided.response_comment.as_deref(),
        Some("agreed"),
        "the deciding answer's comment is the request's"
    );
    request.written();
    let loaded = store.request_by_id(&request.id).await.unwrap().unwrap();
    assert_eq!(loaded, request);
    assert_eq!(loaded.status, RequestStatus::Completed);
    assert_eq!(loaded.responses().len(), 2);
}

/// An escalated request: found due by index, written once with the entries
/// it added, then readable by and in the inbox of the other loop's member,
/// listed once for someone in both loops.
async fn an_escalated_request_reaches_the_other_loops_members(db: TestDb) {
    let store = db.store();
    let home = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    // The other loop: user 4 (pending at home) and user 2 are active there.
    let other_id = LoopId::new(fixtures::oid(11));
    let email = |u: u8| reviewloop_domain::Email::parse(&format!("u{u}@x.io")).unwrap();
    let mut other = Loop::create(
        other_id,
        reviewloop_domain::NewLoop::parse(Some("Leads"), None, None).unwrap(),
        Member::creator(
            other_id,
            UserId::new(fixtures::oid(1)),
            email(1),
            fixtures::at(0),
        ),
        reviewloop_domain::InviteCode::parse("ABCDEH").unwrap(),
        fixtures::at(0),
    );
    for u in [2u8, 4] {
        other
            .put_member(Member::joined(
                other_id,
                UserId::new(fixtures::oid(u)),
                email(u),
                fixtures::at(1),
            ))
            .unwrap();
    }
    store.insert_loop(&other, &[]).await.unwrap();

    let mut fields = RequestInput {
        request_text: Some("Refund?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("low".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(600)),
        escalation: Some(
            json!({"after_seconds": 30, "to_loop_id": other_id, "raise_priority": true}),
        ),
        ..RequestInput::default()
    }
    .validate()
    .unwrap();
    fields.priority = Priority::Low;
    // Two alike, escalated in one pass (set-based on PostgreSQL).
    let [mut request, mut second] = [20, 21].map(|n| {
        ReviewRequest::create(
            RequestId::new(fixtures::oid(n)),
            home.id,
            home.creator_id,
            None,
            fields.clone(),
            home.broadcast_entries(Priority::Low, true),
            fixtures::at(0),
        )
    });
    store.insert_request(&request, &[]).await.unwrap();
    store.insert_request(&second, &[]).await.unwrap();
    let u4 = UserId::new(fixtures::oid(4));
    assert!(store
        .due_escalations(fixtures::at(29), 10)
        .await
        .unwrap()
        .is_empty());
    assert!(
        !store
            .request_for_viewer(&request.id, &u4)
            .await
            .unwrap()
            .unwrap()
            .1
    );

    let due = store.due_escalations(fixtures::at(30), 10).await.unwrap();
    assert_eq!(due, [request.clone(), second.clone()]);
    let stale = [request.clone(), second.clone()];
    for r in [&mut request, &mut second] {
        assert_eq!(
            r.escalate(
                other.broadcast_entries(Priority::Medium, true),
                fixtures::at(30)
            ),
            Ok(1),
            "user 2 had it already; user 4 is added"
        );
    }
    let event = fixtures::event_for(&request, &home, 90, EventType::RequestEscalated);
    let event2 = fixtures::event_for(&second, &home, 91, EventType::RequestEscalated);
    assert_eq!(
        store
            .escalate_requests(&[
                (request.clone(), vec![event.clone()]),
                (second.clone(), vec![event2.clone()])
            ])
            .await
            .unwrap(),
        [true, true]
    );
    let [stale, stale2] = stale;
    assert_eq!(
        store
            .escalate_requests(&[(stale, vec![event]), (stale2, vec![event2])])
            .await
            .unwrap(),
        [false, false],
        "a second escalation from the same state does not land"
    );
    for r in [&mut request, &mut second] {
        r.written();
        let loaded = store.request_by_id(&r.id).await.unwrap().unwrap();
        assert_eq!(&loaded, &*r, "with user 4's entry, once");
        assert_eq!(loaded.priority, Priority::Medium);
    }
    // The second is cancelled, so the inboxes below hold the first alone.
    second.cancel(fixtures::at(31)).unwrap();
    store.update_request(&second, &[]).await.unwrap();
    assert!(store
        .due_escalations(fixtures::at(99), 10)
        .await
        .unwrap()
        .is_empty());

    assert!(
        store
            .request_for_viewer(&request.id, &u4)
            .await
            .unwrap()
            .unwrap()
            .1
    );
    let inbox = |u: u8| {
        let store = store.clone();
        async move {
            store
                .inbox(&UserId::new(fixtures::oid(u)), InboxView::Actionable, 50, 0)
                .await
                .unwrap()
                .iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(inbox(4).await, [request.id]);
    assert_eq!(inbox(2).await, [request.id], "once, though in both loops");
    request
        .respond(u4, json!(true), None, fixtures::at(40))
        .unwrap();
    store.update_request(&request, &[]).await.unwrap();
    let done = store.inbox(&u4, InboxView::Answered, 50, 0).await.unwrap();
    assert_eq!(done.len(), 1);
}

/// The test clock adds up its moves; the test sweep finds an account's
/// open test requests by what falls due on that clock.
async fn test_clocks_add_up_and_due_test_requests_are_found(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let account = lp.creator_id;
    assert_eq!(store.test_clock_offset(&account).await.unwrap(), 0);
    assert_eq!(
        store
            .advance_test_clock(&account, 60, fixtures::at(0))
            .await
            .unwrap(),
        60
    );
    assert_eq!(
        store
            .advance_test_clock(&account, 40, fixtures::at(1))
            .await
            .unwrap(),
        100
    );
    assert_eq!(store.test_clock_offset(&account).await.unwrap(), 100);

    let mut fields = RequestInput {
        request_text: Some("Ship?".into()),
        content_type: Some("markdown".into()),
        response_type: Some("boolean".into()),
        priority: Some("low".into()),
        processing_type: Some("time-sensitive".into()),
        timeout_seconds: Some(json!(600)),
        test_response: Some(json!(true)),
        test_delay_seconds: Some(json!(30)),
        ..RequestInput::default()
    }
    .validate()
    .unwrap();
    fields.test = true;
    let test = ReviewRequest::create(
        RequestId::new(fixtures::oid(30)),
        lp.id,
        account,
        None,
        fields,
        Vec::new(),
        fixtures::at(0),
    );
    store.insert_request(&test, &[]).await.unwrap();
    let live = fixtures::request(&lp, 31, "low", 0);
    store.insert_request(&live, &[]).await.unwrap();
    assert_eq!(store.request_by_id(&test.id).await.unwrap().unwrap(), test);

    assert_eq!(store.accounts_with_open_tests().await.unwrap(), [account]);
    assert!(store
        .due_test_requests(&account, fixtures::at(29), 10)
        .await
        .unwrap()
        .is_empty());
    let due = store
        .due_test_requests(&account, fixtures::at(30), 10)
        .await
        .unwrap();
    assert_eq!(due.iter().map(|r| r.id).collect::<Vec<_>>(), [test.id]);
    // The live sweep leaves test requests to the test sweep.
    let swept = store.due_requests(fixtures::at(10_000), 10).await.unwrap();
    assert_eq!(swept.iter().map(|r| r.id).collect::<Vec<_>>(), [live.id]);
    // Lists keep the modes apart.
    let mut q = query(&account);
    assert_eq!(store.list_requests(&q).await.unwrap().total, 1);
    q.test = true;
    let page = store.list_requests(&q).await.unwrap();
    assert_eq!(page.requests[0].id, test.id);

    let mut answered = test.clone();
    answered.answer_as_test(fixtures::at(30)).unwrap();
    store.update_request(&answered, &[]).await.unwrap();
    assert!(store.accounts_with_open_tests().await.unwrap().is_empty());
}

/// Removes an active `member` from its loop at second `at`.
async fn remove_member(store: &SqlStore, mut member: Member, at: i64) {
    member.remove(fixtures::at(at)).unwrap();
    store
        .save_member(
            &member,
            Some(reviewloop_domain::MemberStatus::Active),
            &[],
            &[],
        )
        .await
        .unwrap();
}

on_every_backend!(
    quorum_answers_are_kept_per_reviewer_and_leave_their_inbox,
    request_facts_are_the_creators_since_a_time_in_a_loop_or_all,
    a_request_round_trips_with_every_field,
    a_request_is_read_with_whether_the_viewer_is_an_active_member,
    a_stale_write_is_a_conflict_and_changes_nothing,
    a_batch_of_changes_lands_except_where_someone_else_got_there_first,
    a_change_and_its_events_commit_together_or_not_at_all,
    updating_a_missing_request_is_not_found,
    lists_filter_sort_page_and_count,
    the_inbox_holds_what_a_reviewer_can_still_act_on,
    due_requests_are_the_open_ones_past_their_timeout_soonest_first,
    an_escalated_request_reaches_the_other_loops_members,
    test_clocks_add_up_and_due_test_requests_are_found,
);

#[tokio::test]
async fn the_done_tab_reads_what_the_reviewer_answered_through_its_index() {
    let db = TestDb::sqlite();
    let plan = db
        .plan_of(answered_query(fixtures::oid(2).to_string(), 50, 0))
        .await;
    assert!(
        plan.iter().any(|d| d.contains("requests_by_responder")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|d| d.starts_with("SCAN")),
        "no full scan: {plan:?}"
    );
}

#[tokio::test]
async fn the_escalation_sweep_reads_only_due_rows_through_its_index() {
    let db = TestDb::sqlite();
    let plan = db.plan_of(escalation_query(fixtures::at(0), 10)).await;
    assert!(
        plan.iter()
            .any(|d| d.contains("USING INDEX requests_to_escalate")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|d| d.starts_with("SCAN")),
        "no full scan: {plan:?}"
    );
}

/// Every write that changes a request says so, and its copy is dropped:
/// the next read sees the change, with no trip when nothing changed.
#[tokio::test]
async fn a_read_after_a_write_sees_the_write_through_the_copies() {
    let db = TestDb::sqlite();
    let store = db.store();
    let (request, _) = fixtures::created_request(&store).await;
    let viewer = UserId::new(fixtures::oid(2));
    let (first, active) = store
        .request_for_viewer(&request.id, &viewer)
        .await
        .unwrap()
        .unwrap();
    assert!(active, "user 2 is an active member");
    let (again, _) = store
        .request_for_viewer(&request.id, &viewer)
        .await
        .unwrap()
        .unwrap();
    assert!(Arc::ptr_eq(&first, &again), "the second read is the copy");
    let mut claimed = (*first).clone();
    claimed.claim(viewer, fixtures::at(5)).unwrap();
    store.update_request(&claimed, &[]).await.unwrap();
    let (after, _) = store
        .request_for_viewer(&request.id, &viewer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status, RequestStatus::Claimed);
    // Removing the member changes what the copy of its loop says.
    let lp = store.loop_by_id(&request.loop_id).await.unwrap().unwrap();
    remove_member(&store, lp.member(&viewer).unwrap().clone(), 6).await;
    let (_, active) = store
        .request_for_viewer(&request.id, &viewer)
        .await
        .unwrap()
        .unwrap();
    assert!(!active, "the removal reached the copy");
}

/// A write that changes a request without saying so would leave its copy
/// stale; every test build checks the copies it serves and says so.
#[tokio::test]
#[should_panic(expected = "is stale")]
async fn a_copy_left_stale_by_a_write_is_caught() {
    let db = TestDb::sqlite();
    let store = db.store();
    let (request, _) = fixtures::created_request(&store).await;
    store.request_by_id(&request.id).await.unwrap();
    db.db
        .write(|conn| {
            diesel::sql_query("UPDATE requests SET request_text = 'edited behind its back'")
                .execute(conn)?;
            Ok(())
        })
        .await
        .unwrap();
    store.request_by_id(&request.id).await.unwrap();
}
