use chrono::{DateTime, Duration, Utc};
use reviewloop_domain::{
    DeliveryRecord, DeliveryStatus, DeliveryTarget, EventFilter, EventId, EventType, LoopId,
    WebhookRecord,
};
use reviewloop_ports::{
    DeliveryQueue, Dispatch, EventFeed, LoopStore, RequestStore, TargetShares, WebhookHealth,
    WebhookStore,
};

use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

/// `hook` with its record edited: the store keeps whatever state it is given.
fn edited(hook: &Webhook, edit: impl FnOnce(&mut WebhookRecord)) -> Webhook {
    let mut record = hook.record().clone();
    edit(&mut record);
    Webhook::restore(record)
}

/// `delivery` moved to another state, as a worker would write it.
fn moved(delivery: &Delivery, edit: impl FnOnce(&mut DeliveryRecord)) -> Delivery {
    let mut record = delivery.record().clone();
    edit(&mut record);
    Delivery::restore(record)
}

fn webhook(n: u8, account: UserId) -> Webhook {
    Webhook::restore(WebhookRecord {
        id: WebhookId::new(fixtures::oid(n)),
        account_id: account,
        url: format!("https://hooks.example.com/{n}"),
        events: EventFilter::Only(vec![EventType::RequestCompleted, EventType::RequestCreated]),
        secret: format!("whsec_secret{n}"),
        description: Some("ci".into()),
        active: true,
        disabled_reason: None,
        created_at: fixtures::at(i64::from(n)),
        updated_at: fixtures::at(i64::from(n)),
        test: false,
    })
}

fn delivery(n: u8, event: &Event, webhook: &Webhook, due: i64) -> (Delivery, String) {
    let d = Delivery::restore(DeliveryRecord {
        id: DeliveryId::new(fixtures::oid(n)),
        event_id: event.id,
        event_type: event.event_type,
        account_id: event.account_id,
        target: DeliveryTarget::Webhook,
        webhook_id: Some(webhook.id),
        url: webhook.url.clone(),
        status: DeliveryStatus::Pending,
        attempts: 0,
        schedule_start: 0,
        next_attempt_at: fixtures::at(due),
        last_attempt_at: None,
        last_status_code: None,
        last_error: None,
        created_at: fixtures::at(0),
    });
    (d, format!("{{\"n\":{n}}}"))
}

/// Dispatches one event; whether this call did.
async fn dispatch_one(
    store: &SqlStore,
    event: &EventId,
    list: &[(Delivery, String)],
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let dispatch = Dispatch {
        event: *event,
        deliveries: list.to_vec(),
        notices: Vec::new(),
        answer_links: Vec::new(),
    };
    Ok(store.dispatch_all(&[dispatch], at).await? == 1)
}

/// A loop, a request, its `request.created` event in the outbox, and a subscription.
async fn setup(store: &SqlStore) -> (Event, Webhook) {
    let (request, event) = fixtures::created_request(store).await;
    let hook = webhook(30, request.creator_id);
    store.insert_webhook(&hook).await.unwrap();
    (event, hook)
}

/// A subscription and one delivery of the set-up event to it, dispatched
/// and due at second 0.
async fn one_dispatched(store: &SqlStore) -> (Webhook, Delivery) {
    let (event, hook) = setup(store).await;
    let (d, body) = delivery(40, &event, &hook, 0);
    dispatch_one(store, &event.id, &[(d.clone(), body)], fixtures::at(0))
        .await
        .unwrap();
    (hook, d)
}

async fn subscriptions_round_trip_and_belong_to_their_account(db: TestDb) {
    let store = db.store();
    let (_, hook) = setup(&store).await;
    assert_eq!(
        store.webhook_by_id(&hook.id).await.unwrap(),
        Some(hook.clone())
    );
    assert_eq!(
        store.webhooks_of(&hook.account_id).await.unwrap(),
        vec![hook.clone()]
    );
    assert!(store
        .webhooks_of(&UserId::new(fixtures::oid(2)))
        .await
        .unwrap()
        .is_empty());

    let changed = edited(&hook, |w| {
        w.events = EventFilter::All;
        w.active = false;
        w.secret = "whsec_rotated".into();
    });
    store.update_webhook(&changed).await.unwrap();
    assert_eq!(store.webhook_by_id(&hook.id).await.unwrap(), Some(changed));
    assert!(store
        .active_webhooks_of(&[hook.account_id])
        .await
        .unwrap()
        .is_empty());

    store.delete_webhook(&hook.id).await.unwrap();
    assert!(store.webhook_by_id(&hook.id).await.unwrap().is_none());
    assert!(matches!(
        store.delete_webhook(&hook.id).await,
        Err(StoreError::NotFound)
    ));
}

/// [`setup`], then a newer request of the same loop with its event (the
/// newest in the outbox, whose position a purge keeps).
async fn setup_with_a_newer_event(
    store: &SqlStore,
) -> (Event, Webhook, reviewloop_domain::Loop, Event) {
    let (event, hook) = setup(store).await;
    let lp = store
        .loop_by_id(&LoopId::new(fixtures::oid(10)))
        .await
        .unwrap()
        .unwrap();
    let (_, newest) = fixtures::stored_request(store, &lp, 21, "high", 91).await;
    (event, hook, lp, newest)
}

async fn history_past_the_horizon_is_purged_and_open_work_is_kept(db: TestDb) {
    let store = db.store();
    let (event, hook, lp, newest) = setup_with_a_newer_event(&store).await;
    let (done, done_body) = delivery(40, &event, &hook, 0);
    let (open, open_body) = delivery(41, &event, &hook, 0);
    dispatch_one(
        &store,
        &event.id,
        &[(done.clone(), done_body), (open.clone(), open_body)],
        fixtures::at(0),
    )
    .await
    .unwrap();
    record(&store, &done, 1, 0, true, None).await.unwrap();
    assert_eq!(store.number_new_events(10).await.unwrap(), 2);

    // Nothing is older than this horizon yet.
    assert_eq!(
        store.purge_history(fixtures::at(-10), 100).await.unwrap(),
        0
    );
    let purged = store.purge_history(fixtures::at(10), 100).await.unwrap();
    assert!(
        purged >= 2,
        "the finished delivery and the dispatched event: {purged}"
    );
    let left: Vec<_> = store
        .deliveries_of(&hook.id, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|(d, _)| d.id)
        .collect();
    assert_eq!(left, [open.id], "a pending delivery is kept");
    let events = store.events_after(&lp.creator_id, 0, 10).await.unwrap();
    assert_eq!(
        events.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        [newest.id],
        "the newest (and undispatched) event stays"
    );
}

async fn an_event_is_dispatched_once_with_its_deliveries(db: TestDb) {
    let store = db.store();
    let (event, hook) = setup(&store).await;
    let pending = store.undispatched_events(10).await.unwrap();
    assert_eq!(pending.iter().map(|e| e.id).collect::<Vec<_>>(), [event.id]);
    assert_eq!(pending[0].data, event.data);

    let list = [delivery(40, &event, &hook, 0)];
    assert!(dispatch_one(&store, &event.id, &list, fixtures::at(1))
        .await
        .unwrap());
    assert!(
        !dispatch_one(&store, &event.id, &list, fixtures::at(2))
            .await
            .unwrap(),
        "a second dispatcher writes nothing"
    );
    assert!(store.undispatched_events(10).await.unwrap().is_empty());
    let listed = store.deliveries_of(&hook.id, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
}

async fn due_deliveries_are_leased_once_until_the_lease_runs_out(db: TestDb) {
    let store = db.store();
    let (event, hook) = setup(&store).await;
    let list = [
        delivery(40, &event, &hook, 0),
        delivery(41, &event, &hook, 100),
    ];
    dispatch_one(&store, &event.id, &list, fixtures::at(0))
        .await
        .unwrap();

    let leased = store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    assert_eq!(leased.len(), 1, "the one due at 100 is not due yet");
    assert_eq!(leased[0].payload, "{\"n\":40}");
    assert!(
        store
            .lease_due(
                fixtures::at(6),
                fixtures::at(66),
                10,
                &TargetShares::each(10)
            )
            .await
            .unwrap()
            .is_empty(),
        "leased to the first worker"
    );
    let again = store
        .lease_due(
            fixtures::at(70),
            fixtures::at(130),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    assert_eq!(again.len(), 1, "the first worker died: its lease ran out");
}

async fn deliveries_of_a_disabled_subscription_wait(db: TestDb) {
    let store = db.store();
    let (event, mut hook) = setup(&store).await;
    dispatch_one(
        &store,
        &event.id,
        &[delivery(40, &event, &hook, 0)],
        fixtures::at(0),
    )
    .await
    .unwrap();
    hook = edited(&hook, |w| w.active = false);
    store.update_webhook(&hook).await.unwrap();
    assert!(store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            10,
            &TargetShares::each(10)
        )
        .await
        .unwrap()
        .is_empty());
    hook = edited(&hook, |w| w.active = true);
    store.update_webhook(&hook).await.unwrap();
    assert_eq!(
        store
            .lease_due(
                fixtures::at(5),
                fixtures::at(65),
                10,
                &TargetShares::each(10)
            )
            .await
            .unwrap()
            .len(),
        1
    );
}

fn health(hook: &Webhook, success: bool, at: i64) -> WebhookHealth {
    WebhookHealth {
        webhook_id: hook.id,
        success,
        at: fixtures::at(at),
        disable_if_failing_since: fixtures::at(at) - Duration::days(5),
        disable_reason: "failing for 5 days".into(),
    }
}

async fn attempts_are_recorded_and_five_failing_days_disable_the_subscription(db: TestDb) {
    let store = db.store();
    let (hook, d) = one_dispatched(&store).await;
    let day = 24 * 3600;
    for (n, at) in [(1u32, 0i64), (2, 4 * day), (3, 5 * day)] {
        record(&store, &d, n, at, false, Some(health(&hook, false, at)))
            .await
            .unwrap();
        let active = store.webhook_by_id(&hook.id).await.unwrap().unwrap().active;
        assert_eq!(
            active,
            n < 3,
            "disabled once every delivery failed for five days (attempt {n})"
        );
    }
    let disabled = store.webhook_by_id(&hook.id).await.unwrap().unwrap();
    assert_eq!(
        disabled.disabled_reason.as_deref(),
        Some("failing for 5 days")
    );
    let listed = store.deliveries_of(&hook.id, 10).await.unwrap();
    let attempts: Vec<_> = listed[0]
        .1
        .iter()
        .map(|a| (a.attempt, a.success, a.status_code))
        .collect();
    assert_eq!(
        attempts,
        [
            (1, false, Some(500)),
            (2, false, Some(500)),
            (3, false, Some(500))
        ]
    );
    assert_eq!(listed[0].0.attempts, 3);
}

/// Leases `d` (due at 0) at `at` and records attempt `n` of it.
async fn record(
    store: &SqlStore,
    d: &Delivery,
    n: u32,
    at: i64,
    ok: bool,
    health: Option<WebhookHealth>,
) -> Result<(), StoreError> {
    let leased = store
        .lease_due(
            fixtures::at(at),
            fixtures::at(at + 60),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    let lease = leased
        .iter()
        .find(|l| l.delivery.id == d.id)
        .expect("the delivery is due")
        .leased_until;
    let state = moved(d, |d| {
        d.attempts = n;
        d.last_attempt_at = Some(fixtures::at(at));
        d.last_status_code = Some(if ok { 200 } else { 500 });
        d.status = if ok {
            DeliveryStatus::Succeeded
        } else {
            DeliveryStatus::Pending
        };
    });
    let attempt = DeliveryAttempt {
        delivery_id: d.id,
        attempt: n,
        attempted_at: fixtures::at(at),
        status_code: state.last_status_code,
        latency_ms: 12,
        error: (!ok).then(|| "HTTP 500".into()),
        success: ok,
    };
    store.record_attempt(&state, &attempt, health, lease).await
}

async fn a_success_ends_the_failing_streak(db: TestDb) {
    let store = db.store();
    let (hook, d) = one_dispatched(&store).await;
    let day = 24 * 3600;
    record(&store, &d, 1, 0, false, Some(health(&hook, false, 0)))
        .await
        .unwrap();
    record(
        &store,
        &d,
        2,
        3 * day,
        true,
        Some(health(&hook, true, 3 * day)),
    )
    .await
    .unwrap();
    // Edits do not reset a streak; only a success or turning it back on does.
    let changed = edited(
        &store.webhook_by_id(&hook.id).await.unwrap().unwrap(),
        |w| {
            w.description = Some("edited".into());
        },
    );
    store.update_webhook(&changed).await.unwrap();
    let mut again = store.delivery_by_id(&d.id).await.unwrap().unwrap();
    again.redeliver(fixtures::at(3 * day)).unwrap();
    store.redeliver(&again).await.unwrap();
    record(
        &store,
        &again,
        3,
        6 * day,
        false,
        Some(health(&hook, false, 6 * day)),
    )
    .await
    .unwrap();
    assert!(
        store.webhook_by_id(&hook.id).await.unwrap().unwrap().active,
        "the streak began on day 6"
    );
}

async fn a_worker_whose_lease_ran_out_cannot_record(db: TestDb) {
    let store = db.store();
    let (_, d) = one_dispatched(&store).await;
    let first = store
        .lease_due(
            fixtures::at(0),
            fixtures::at(60),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    let second = store
        .lease_due(
            fixtures::at(61),
            fixtures::at(121),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    assert_eq!(
        (first.len(), second.len()),
        (1, 1),
        "the first lease ran out and the delivery was taken again"
    );
    let attempt = DeliveryAttempt {
        delivery_id: d.id,
        attempt: 1,
        attempted_at: fixtures::at(61),
        status_code: Some(200),
        latency_ms: 5,
        error: None,
        success: true,
    };
    let stale = store
        .record_attempt(&d, &attempt, None, first[0].leased_until)
        .await;
    assert!(matches!(stale, Err(StoreError::Conflict(_))));
    store
        .record_attempt(&d, &attempt, None, second[0].leased_until)
        .await
        .unwrap();
}

async fn one_receiver_gets_only_a_few_slots(db: TestDb) {
    let store = db.store();
    let (event, hook) = setup(&store).await;
    let other = edited(&webhook(31, hook.account_id), |w| {
        w.url = "https://elsewhere.example.com/in".into();
    });
    store.insert_webhook(&other).await.unwrap();
    let mut list: Vec<(Delivery, String)> =
        (40..46).map(|n| delivery(n, &event, &hook, 0)).collect();
    list.push(delivery(50, &event, &other, 1));
    dispatch_one(&store, &event.id, &list, fixtures::at(0))
        .await
        .unwrap();
    let leased = store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            10,
            &TargetShares::each(2),
        )
        .await
        .unwrap();
    let urls: Vec<&str> = leased.iter().map(|l| l.delivery.url.as_str()).collect();
    assert_eq!(
        urls.iter().filter(|u| u.ends_with("/30")).count(),
        2,
        "{urls:?}"
    );
    assert!(
        urls.contains(&"https://elsewhere.example.com/in"),
        "the other receiver is not starved"
    );
    let mine: HashMap<String, u32> = [(hook.url.clone(), 2)].into();
    let more = store
        .lease_due(
            fixtures::at(6),
            fixtures::at(66),
            10,
            &TargetShares {
                in_flight: mine,
                ..TargetShares::each(2)
            },
        )
        .await
        .unwrap();
    assert!(
        more.is_empty(),
        "this worker already has two in flight to the busy receiver"
    );
    let elsewhere = store
        .lease_due(
            fixtures::at(6),
            fixtures::at(66),
            10,
            &TargetShares::each(2),
        )
        .await
        .unwrap();
    assert_eq!(elsewhere.len(), 2, "another worker has its own share");
}

/// A slow receiver with a backlog of 300 older deliveries, all of its
/// slots in flight, and one fresh delivery to a fast receiver: the lease
/// must reach the fast one now, not after the backlog.
async fn a_backlog_at_one_receiver_does_not_starve_another(db: TestDb) {
    let store = db.store();
    let (event, slow) = setup(&store).await;
    let fast = edited(&webhook(31, slow.account_id), |w| {
        w.url = "https://fast.example.com/in".into();
    });
    store.insert_webhook(&fast).await.unwrap();
    let mut list: Vec<(Delivery, String)> = (0..300u32)
        .map(|n| {
            let (d, body) = delivery(40, &event, &slow, 0);
            let id = DeliveryId::new(
                reviewloop_domain::ObjectId::parse(&format!("{:024x}", 0x1000 + n)).unwrap(),
            );
            (moved(&d, |d| d.id = id), body)
        })
        .collect();
    list.push(delivery(50, &event, &fast, 1));
    dispatch_one(&store, &event.id, &list, fixtures::at(0))
        .await
        .unwrap();
    let busy: HashMap<String, u32> = [(slow.url.clone(), 4)].into();
    let leased = store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            28,
            &TargetShares {
                in_flight: busy.clone(),
                ..TargetShares::each(4)
            },
        )
        .await
        .unwrap();
    let urls: Vec<&str> = leased.iter().map(|l| l.delivery.url.as_str()).collect();
    assert_eq!(urls, ["https://fast.example.com/in"]);
    // Another worker, with nothing in flight, takes four of the backlog.
    let other = store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            28,
            &TargetShares::each(4),
        )
        .await
        .unwrap();
    assert_eq!(other.len(), 4);
    assert!(other.iter().all(|l| l.delivery.url == slow.url));
    // A worker whose receiver answers quickly has a larger share of it.
    let quick = store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            28,
            &TargetShares {
                per_url: [(slow.url.clone(), 16)].into(),
                in_flight: busy,
                ..TargetShares::each(4)
            },
        )
        .await
        .unwrap();
    assert_eq!(quick.len(), 12, "16 in flight with the 4 it had");
}

async fn redelivery_puts_a_delivery_back_in_the_queue(db: TestDb) {
    let store = db.store();
    let (hook, d) = one_dispatched(&store).await;
    assert!(
        matches!(store.redeliver(&d).await, Err(StoreError::Conflict(_))),
        "still pending"
    );

    let leased = store
        .lease_due(
            fixtures::at(1),
            fixtures::at(61),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    let attempt = DeliveryAttempt {
        delivery_id: d.id,
        attempt: 1,
        attempted_at: fixtures::at(1),
        status_code: None,
        latency_ms: 10_000,
        error: Some("timed out".into()),
        success: false,
    };
    let failed = moved(&d, |d| {
        d.status = DeliveryStatus::Failed;
        d.attempts = 1;
    });
    store
        .record_attempt(&failed, &attempt, None, leased[0].leased_until)
        .await
        .unwrap();
    assert!(store
        .lease_due(
            fixtures::at(5),
            fixtures::at(65),
            10,
            &TargetShares::each(10)
        )
        .await
        .unwrap()
        .is_empty());

    let mut again = failed.clone();
    again.redeliver(fixtures::at(10)).unwrap();
    store.redeliver(&again).await.unwrap();
    let back = store.delivery_by_id(&d.id).await.unwrap().unwrap();
    assert_eq!(
        (back.status, back.attempts, back.schedule_start),
        (DeliveryStatus::Pending, 1, 1)
    );
    // The next attempt is number 2: attempt numbers never repeat.
    let next = moved(&back, |d| {
        d.attempts = 2;
        d.status = DeliveryStatus::Succeeded;
    });
    let lease = store
        .lease_due(
            fixtures::at(10),
            fixtures::at(70),
            10,
            &TargetShares::each(10),
        )
        .await
        .unwrap();
    let second = DeliveryAttempt {
        attempt: 2,
        success: true,
        status_code: Some(200),
        error: None,
        ..attempt
    };
    store
        .record_attempt(&next, &second, None, lease[0].leased_until)
        .await
        .unwrap();
    let listed = store.deliveries_of(&hook.id, 10).await.unwrap();
    assert_eq!(listed[0].1.len(), 2);
    assert_eq!(listed[0].0.status, DeliveryStatus::Succeeded);
    // A second redelivery made from the same read, after that attempt,
    // does not restart the schedule again.
    assert!(matches!(
        store.redeliver(&again).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store.delivery_by_id(&d.id).await.unwrap().unwrap().status,
        DeliveryStatus::Succeeded
    );
    let unknown = moved(&again, |d| d.id = DeliveryId::new(fixtures::oid(99)));
    assert!(matches!(
        store.redeliver(&unknown).await,
        Err(StoreError::NotFound)
    ));
}

async fn the_feed_gives_an_accounts_events_in_commit_order_from_a_position(db: TestDb) {
    let store = db.store();
    assert_eq!(store.last_position().await.unwrap(), 0);
    let (first, _) = setup(&store).await;
    let lp = fixtures::loop_with_members(&store, 11, "WXYZ23").await;
    let (_, second) = fixtures::stored_request(&store, &lp, 21, "low", 91).await;
    assert!(
        store
            .events_after(&first.account_id, 0, 10)
            .await
            .unwrap()
            .is_empty(),
        "events are visible only once numbered"
    );
    assert_eq!(store.number_new_events(100).await.unwrap(), 2);
    assert_eq!(store.number_new_events(100).await.unwrap(), 0);

    let all = store.events_after(&first.account_id, 0, 10).await.unwrap();
    assert_eq!(
        all.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        [first.id, second.id]
    );
    assert!(all[0].0 < all[1].0);
    let rest = store
        .events_after(&first.account_id, all[0].0, 10)
        .await
        .unwrap();
    assert_eq!(
        rest.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        [second.id]
    );
    assert_eq!(store.last_position().await.unwrap(), all[1].0);
    assert!(
        store
            .events_after(&UserId::new(fixtures::oid(2)), 0, 10)
            .await
            .unwrap()
            .is_empty(),
        "another account's feed is empty"
    );
}

/// Two transactions write events; the one that wrote first commits last.
/// A reader that has read the early commit must still get the late one.
#[tokio::test]
async fn an_event_that_commits_late_is_not_skipped_on_postgres() {
    use diesel::Connection;
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    setup(&store).await;
    store.number_new_events(100).await.unwrap();
    let start = store.last_position().await.unwrap();
    let lp = fixtures::loop_with_members(&store, 11, "WXYZ23").await;
    let early_request = fixtures::request(&lp, 21, "low", 0);
    let late_request = fixtures::request(&lp, 22, "low", 0);
    let early = fixtures::event_for(&early_request, &lp, 91, EventType::RequestCreated);
    let late = fixtures::event_for(&late_request, &lp, 92, EventType::RequestCreated);
    let account = early.account_id;

    // The slow writer takes the lower seq and holds its transaction open.
    let pool = db.db.pool.clone();
    let (written, wait_written) = std::sync::mpsc::channel();
    let (commit, wait_commit) = std::sync::mpsc::channel::<()>();
    let slow_event = early.clone();
    let slow = std::thread::spawn(move || {
        let mut conn = pool.get().unwrap();
        conn.transaction::<_, DbError, _>(|conn| {
            super::super::outbox::append(
                conn,
                &super::super::outbox::NewEvents::of(std::slice::from_ref(&slow_event)),
            )?;
            written.send(()).unwrap();
            wait_commit.recv().unwrap();
            Ok(())
        })
        .unwrap();
    });
    wait_written.recv().unwrap();
    store
        .insert_request(&late_request, std::slice::from_ref(&late))
        .await
        .unwrap();
    store.number_new_events(100).await.unwrap();
    let seen = store.events_after(&account, start, 10).await.unwrap();
    assert_eq!(
        seen.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        [late.id]
    );

    commit.send(()).unwrap();
    slow.join().unwrap();
    store.number_new_events(100).await.unwrap();
    let rest = store.events_after(&account, seen[0].0, 10).await.unwrap();
    assert_eq!(
        rest.iter().map(|(_, e)| e.id).collect::<Vec<_>>(),
        [early.id],
        "the event that committed late comes after what the reader has seen"
    );
}

/// Deleting a subscription locks its row and then its deliveries'; an
/// attempt recorded meanwhile must not hold a delivery while it waits for
/// the subscription (the two deadlocked). A successful attempt on a
/// healthy subscription does not touch the subscription's row at all.
#[tokio::test]
async fn a_healthy_subscription_is_not_locked_by_its_deliveries_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let (hook, d) = one_dispatched(&store).await;

    // Another transaction holds the subscription's row.
    let held = db.hold_row("webhooks", hook.id.to_string());
    let recorded = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        record(&store, &d, 1, 0, true, Some(health(&hook, true, 0))),
    )
    .await;
    held.release(None);
    recorded
        .expect("the attempt was recorded without waiting for the subscription's row")
        .unwrap();
    assert_eq!(
        store.delivery_by_id(&d.id).await.unwrap().unwrap().status,
        DeliveryStatus::Succeeded
    );
}

/// An instance reads the due deliveries, then leases them. If meanwhile
/// another instance leased one, sent it and recorded the answer, the lease
/// is free again but the delivery is done: leasing it would send it a
/// second time (seen in the cluster test as an event delivered twice with
/// no failed attempt). While the other instance still holds the row, the
/// lease passes it over rather than wait; once the answer is recorded,
/// `attempts` has moved and the lease leaves it too.
#[tokio::test]
async fn a_delivery_answered_since_it_was_read_is_not_leased_again_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let (_, d) = one_dispatched(&store).await;
    let lease = || {
        let store = store.clone();
        async move {
            tokio::time::timeout(
                std::time::Duration::from_secs(10),
                store.lease_due(
                    fixtures::at(5),
                    fixtures::at(65),
                    10,
                    &TargetShares::each(10),
                ),
            )
            .await
            .expect("the lease does not wait for a held row")
            .unwrap()
        }
    };

    let held = db.hold_row("deliveries", d.id.to_string());
    let while_held = lease().await;
    // Sent, answered and recorded: the lease is given back.
    held.release(Some(
        "status = 'succeeded', attempts = 1, leased_until = NULL",
    ));
    assert!(while_held.is_empty(), "a held delivery is passed over");
    assert!(lease().await.is_empty(), "an answered delivery is left");
    assert_eq!(
        store.delivery_by_id(&d.id).await.unwrap().unwrap().status,
        DeliveryStatus::Succeeded
    );

    // Answered between the read and the lease, then due again (a retry):
    // a lease with the attempts it read is refused, a fresh one taken.
    db.hold_row("deliveries", d.id.to_string()).release(Some(
        "status = 'pending', attempts = 1, leased_until = NULL",
    ));
    let mut conn = db.db.pool.get().unwrap();
    let crate::db::DbConnection::Postgres(pg) = &mut *conn else {
        panic!("a PostgreSQL connection");
    };
    let (now, until) = (fixtures::at(5).naive_utc(), fixtures::at(65).naive_utc());
    let id = d.id.to_string();
    let stale = crate::db::set_based::lease_deliveries(pg, &[(&id, 0)], now, until).unwrap();
    assert!(stale.is_empty(), "read before the answer: not leased");
    let fresh = crate::db::set_based::lease_deliveries(pg, &[(&id, 1)], now, until).unwrap();
    assert_eq!(fresh, [id.clone()].into());
}

on_every_backend!(
    history_past_the_horizon_is_purged_and_open_work_is_kept,
    subscriptions_round_trip_and_belong_to_their_account,
    an_event_is_dispatched_once_with_its_deliveries,
    due_deliveries_are_leased_once_until_the_lease_runs_out,
    deliveries_of_a_disabled_subscription_wait,
    attempts_are_recorded_and_five_failing_days_disable_the_subscription,
    a_success_ends_the_failing_streak,
    a_worker_whose_lease_ran_out_cannot_record,
    one_receiver_gets_only_a_few_slots,
    a_backlog_at_one_receiver_does_not_starve_another,
    redelivery_puts_a_delivery_back_in_the_queue,
    the_feed_gives_an_accounts_events_in_commit_order_from_a_position,
);

/// Two instances purging at once deleted the same rows in whatever order
/// each read them, and could deadlock. A purge takes rows in `seq` order,
/// and leaves one another transaction holds for a later purge instead of
/// waiting for it.
#[tokio::test]
async fn a_purge_passes_over_an_outbox_row_another_instance_holds_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let (event, hook, lp, newest) = setup_with_a_newer_event(&store).await;
    let (done, done_body) = delivery(40, &event, &hook, 0);
    dispatch_one(&store, &event.id, &[(done, done_body)], fixtures::at(0))
        .await
        .unwrap();
    assert_eq!(store.number_new_events(10).await.unwrap(), 2);
    let creator = lp.creator_id;
    let kept = || async {
        store
            .events_after(&creator, 0, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|(_, e)| e.id)
            .collect::<Vec<_>>()
    };

    let held = db.hold_row("outbox_events", event.id.to_string());
    let purged = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        store.purge_history(fixtures::at(10), 100),
    )
    .await;
    let still = kept().await;
    held.release(None);
    purged
        .expect("the purge did not wait for the held row")
        .unwrap();
    assert_eq!(still, [event.id, newest.id], "the held event is left");

    store.purge_history(fixtures::at(10), 100).await.unwrap();
    assert_eq!(kept().await, [newest.id], "and purged later");
}

/// A delivery another instance holds is passed over, and the one behind
/// it in the turns is leased in its place, in the same pass.
#[tokio::test]
async fn a_lease_passes_over_a_held_delivery_to_the_next_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let (event, hook) = setup(&store).await;
    let (first, first_body) = delivery(40, &event, &hook, 0);
    let (second, second_body) = delivery(41, &event, &hook, 1);
    dispatch_one(
        &store,
        &event.id,
        &[(first.clone(), first_body), (second.clone(), second_body)],
        fixtures::at(0),
    )
    .await
    .unwrap();
    let held = db.hold_row("deliveries", first.id.to_string());
    let leased = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        store.lease_due(fixtures::at(5), fixtures::at(65), 1, &TargetShares::each(4)),
    )
    .await;
    held.release(None);
    let leased = leased.expect("no wait for the held row").unwrap();
    assert_eq!(
        leased.iter().map(|l| l.delivery.id).collect::<Vec<_>>(),
        [second.id]
    );
}

/// The numbering pass's look for new events (every pass, on every
/// instance) seeks them through an index rather than reading the outbox.
#[tokio::test]
async fn new_events_are_found_without_reading_the_outbox() {
    let db = TestDb::sqlite();
    let plan = db.plan_of(feed::unnumbered_seqs(100)).await;
    assert!(
        plan.iter()
            .any(|d| d.starts_with("SEARCH") && d.contains("outbox_events_position")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|d| d.contains("TEMP B-TREE")),
        "no sort: {plan:?}"
    );
}
