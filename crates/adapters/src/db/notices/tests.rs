use chrono::Duration;
use reviewloop_domain::{NewNotice, NoticeId, ReviewRequest};
use reviewloop_ports::{DeliveryQueue, Dispatch, LoopStore, RequestStore};

use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

fn email_to(request: &ReviewRequest, n: u8, entry: usize) -> Notice {
    let member = &request.broadcasted_to[entry];
    Notice::create(
        NoticeId::new(fixtures::oid(n)),
        NewNotice {
            kind: NoticeKind::NewRequest,
            channel: Channel::Email,
            account_id: request.creator_id,
            loop_id: Some(request.loop_id),
            request_id: Some(request.id),
            recipient_id: Some(member.user_id),
            to: Some(member.email.as_str().to_owned()),
            message: Message {
                subject: "New request".into(),
                text: "Look".into(),
                html: Some("<p>Look</p>".into()),
            },
        },
        fixtures::at(0),
    )
}

async fn notices_dispatched_with_their_event_are_leased_once(db: TestDb) {
    let store = db.store();
    let (request, event) = fixtures::created_request(&store).await;
    let list = vec![email_to(&request, 40, 0), email_to(&request, 41, 1)];
    let link = reviewloop_domain::AnswerLink {
        token_hash: "ab".repeat(32),
        request_id: request.id,
        user_id: request.broadcasted_to[0].user_id,
        answer: serde_json::json!("approve"),
        label: "Approve <now>".into(),
        created_at: fixtures::at(0),
        used_at: None,
    };
    let dispatch = Dispatch {
        event: event.id,
        deliveries: Vec::new(),
        notices: list.clone(),
        answer_links: vec![link.clone()],
    };
    assert_eq!(
        store
            .dispatch_all(std::slice::from_ref(&dispatch), fixtures::at(0))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .dispatch_all(&[dispatch], fixtures::at(0))
            .await
            .unwrap(),
        0,
        "a dispatched event writes its notices once"
    );
    use reviewloop_ports::AnswerLinkStore;
    assert_eq!(
        store.answer_link(&link.token_hash).await.unwrap(),
        Some(link.clone()),
        "its answer links are written with it"
    );
    assert!(store.answer_link(&"cd".repeat(32)).await.unwrap().is_none());
    assert!(store
        .use_answer_link(&link.token_hash, fixtures::at(5))
        .await
        .unwrap());
    assert!(
        !store
            .use_answer_link(&link.token_hash, fixtures::at(6))
            .await
            .unwrap(),
        "a link is spent once"
    );
    assert_eq!(
        store
            .answer_link(&link.token_hash)
            .await
            .unwrap()
            .unwrap()
            .used_at,
        Some(fixtures::at(5))
    );
    let first = store
        .lease_due_notices(fixtures::at(1), fixtures::at(61), 10)
        .await
        .unwrap();
    let leased: Vec<Notice> = first.iter().map(|l| l.notice.clone()).collect();
    assert_eq!(leased, list, "read back as written");
    assert!(store
        .lease_due_notices(fixtures::at(2), fixtures::at(62), 10)
        .await
        .unwrap()
        .is_empty());
    let again = store
        .lease_due_notices(fixtures::at(62), fixtures::at(122), 10)
        .await
        .unwrap();
    assert_eq!(again.len(), 2, "the first worker died: its leases ran out");
    assert_eq!(
        store
            .notices_of_loop(&request.loop_id, 10)
            .await
            .unwrap()
            .len(),
        2
    );
}

async fn recording_a_notice_tells_the_broadcast_entry(db: TestDb) {
    let store = db.store();
    let (request, _) = fixtures::created_request(&store).await;
    store.enqueue(&[email_to(&request, 40, 0)]).await.unwrap();
    let leased = store
        .lease_due_notices(fixtures::at(1), fixtures::at(61), 10)
        .await
        .unwrap()
        .remove(0);
    let mut notice = leased.notice.clone();
    notice.record_attempt(fixtures::at(1), Some("connection refused"), &[10], 0.0);
    store
        .record_notice(&notice, leased.leased_until)
        .await
        .unwrap();
    let entry = |r: Option<ReviewRequest>| {
        let b = r.unwrap().broadcasted_to[0].clone();
        (b.notification_sent, b.notification_error)
    };
    assert_eq!(
        entry(store.request_by_id(&request.id).await.unwrap()),
        (false, Some("connection refused".into()))
    );
    assert!(
        store
            .lease_due_notices(fixtures::at(5), fixtures::at(65), 10)
            .await
            .unwrap()
            .is_empty(),
        "not due before its pause"
    );
    let retry = store
        .lease_due_notices(fixtures::at(11), fixtures::at(71), 10)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(retry.notice, notice);
    let mut sent = retry.notice.clone();
    sent.record_attempt(fixtures::at(11), None, &[10], 0.0);
    assert!(
        matches!(
            store.record_notice(&sent, leased.leased_until).await,
            Err(StoreError::Conflict(_))
        ),
        "an old lease cannot record"
    );
    store
        .record_notice(&sent, retry.leased_until)
        .await
        .unwrap();
    assert_eq!(
        entry(store.request_by_id(&request.id).await.unwrap()),
        (true, None)
    );
    assert!(
        store
            .lease_due_notices(fixtures::at(100) + Duration::days(1), fixtures::at(200), 10)
            .await
            .unwrap()
            .is_empty(),
        "a sent notice is never sent again"
    );
}

async fn each_request_is_reminded_of_once_when_its_reminder_falls_due(db: TestDb) {
    let store = db.store();
    let (request, _) = fixtures::created_request(&store).await;
    let lp = store.loop_by_id(&request.loop_id).await.unwrap().unwrap();
    // Already past its timeout: the sweeper's, not the reminder's.
    let late = fixtures::request(&lp, 22, "low", -100);
    store.insert_request(&late, &[]).await.unwrap();
    // Given more time: its reminder moves with the timeout.
    let mut longer = fixtures::request(&lp, 23, "low", 0);
    store.insert_request(&longer, &[]).await.unwrap();
    let patch = reviewloop_domain::RequestPatch {
        timeout_seconds: Some(serde_json::json!(400)),
        ..Default::default()
    };
    longer.update(patch, fixtures::at(10)).unwrap();
    store.update_request(&longer, &[]).await.unwrap();

    let ids = |list: Vec<ReviewRequest>| -> Vec<RequestId> { list.iter().map(|r| r.id).collect() };
    assert!(store
        .requests_to_remind(fixtures::at(44), 10)
        .await
        .unwrap()
        .is_empty());
    let due = store
        .requests_to_remind(fixtures::at(45), 10)
        .await
        .unwrap();
    assert_eq!(
        due,
        vec![request.clone()],
        "read with its broadcast entries"
    );
    let reminder = email_to(&request, 40, 0);
    assert!(store
        .record_reminder(
            &request.id,
            fixtures::at(45),
            std::slice::from_ref(&reminder)
        )
        .await
        .unwrap());
    assert!(
        !store
            .record_reminder(&request.id, fixtures::at(46), &[email_to(&request, 41, 1)])
            .await
            .unwrap(),
        "a second worker writes nothing"
    );
    assert!(store
        .requests_to_remind(fixtures::at(46), 10)
        .await
        .unwrap()
        .is_empty());
    let queued = store
        .lease_due_notices(fixtures::at(46), fixtures::at(100), 10)
        .await
        .unwrap();
    assert_eq!(
        queued.into_iter().map(|l| l.notice).collect::<Vec<_>>(),
        vec![reminder.clone()]
    );
    assert_eq!(
        ids(store
            .requests_to_remind(fixtures::at(300), 10)
            .await
            .unwrap()),
        [longer.id]
    );
    // Answered after the reminder worker read it: no reminder goes out.
    let mut answered = store.request_by_id(&longer.id).await.unwrap().unwrap();
    answered
        .respond(lp.creator_id, serde_json::json!(7), None, fixtures::at(200))
        .unwrap();
    store.update_request(&answered, &[]).await.unwrap();
    assert!(
        !store
            .record_reminder(&longer.id, fixtures::at(300), &[email_to(&longer, 42, 0)])
            .await
            .unwrap(),
        "a request answered since it was read is not reminded of"
    );
    let queued = store
        .lease_due_notices(fixtures::at(300), fixtures::at(360), 10)
        .await
        .unwrap();
    assert_eq!(
        queued.iter().map(|l| l.notice.id).collect::<Vec<_>>(),
        [reminder.id],
        "only the first reminder, whose lease ran out, is queued"
    );
    assert!(
        store
            .requests_to_remind(fixtures::at(300), 10)
            .await
            .unwrap()
            .is_empty(),
        "an answered request needs no reminder"
    );
}

async fn finished_notices_are_purged_after_the_horizon(db: TestDb) {
    let store = db.store();
    let (request, _) = fixtures::created_request(&store).await;
    let (sent, waiting) = (email_to(&request, 40, 0), email_to(&request, 41, 1));
    store.enqueue(std::slice::from_ref(&sent)).await.unwrap();
    let leased = store
        .lease_due_notices(fixtures::at(1), fixtures::at(61), 10)
        .await
        .unwrap();
    let mut done = leased[0].notice.clone();
    done.record_attempt(fixtures::at(2), None, &[10], 0.0);
    store
        .record_notice(&done, leased[0].leased_until)
        .await
        .unwrap();
    store.enqueue(std::slice::from_ref(&waiting)).await.unwrap();
    store.purge_history(fixtures::at(100), 1000).await.unwrap();
    let left: Vec<NoticeId> = store
        .notices_of_loop(&request.loop_id, 10)
        .await
        .unwrap()
        .iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(
        left,
        [waiting.id],
        "the sent one went; the pending one stays"
    );
}

/// A notice another instance tried, failed and gave back while this one
/// was leasing waits out its pause: it is not sent again at once.
#[tokio::test]
async fn a_notice_tried_since_it_was_read_waits_for_its_retry_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let store = db.store();
    let (request, _) = fixtures::created_request(&store).await;
    let notice = email_to(&request, 40, 0);
    store.enqueue(std::slice::from_ref(&notice)).await.unwrap();

    let leasing = store.clone();
    let leased = db
        .changed_under(
            "notices",
            notice.id.to_string(),
            // One failed attempt recorded: retried in ten minutes.
            "attempts = 1, next_attempt_at = next_attempt_at + INTERVAL '10 minutes', \
             leased_until = NULL, last_error = 'connection refused'",
            async move {
                leasing
                    .lease_due_notices(fixtures::at(1), fixtures::at(61), 10)
                    .await
            },
        )
        .await
        .unwrap();
    assert!(leased.is_empty(), "sent again before its pause");
    let later = store
        .lease_due_notices(fixtures::at(601), fixtures::at(661), 10)
        .await
        .unwrap();
    assert_eq!(later.len(), 1);
    assert_eq!(
        later[0].notice.attempts, 1,
        "leased as the other recorded it"
    );
}

on_every_backend!(
    finished_notices_are_purged_after_the_horizon,
    notices_dispatched_with_their_event_are_leased_once,
    recording_a_notice_tells_the_broadcast_entry,
    each_request_is_reminded_of_once_when_its_reminder_falls_due,
);
