use std::sync::{Arc, Mutex};

use reviewloop_domain::{DeliveryRecord, EventFilter, EventId, Webhook, WebhookId, WebhookRecord};
use reviewloop_ports::SendOutcome;
use serde_json::json;

use super::*;
use crate::signing::body_signature;
use crate::testkit::Kit;

fn event(kit: &Kit, kind: EventType, owner: u8, callback: Option<&str>) -> Event {
    Event {
        id: EventId::new(kit.oid(80)),
        event_type: kind,
        account_id: kit.user_id(owner),
        request_id: None,
        loop_id: None,
        data: json!({"request": {"callback_url": callback}}),
        created_at: kit.now,
        test: false,
        facts: Default::default(),
    }
}

fn hook(kit: &Kit, n: u8, owner: u8, events: EventFilter) -> Webhook {
    Webhook::restore(WebhookRecord {
        id: WebhookId::new(kit.oid(n)),
        account_id: kit.user_id(owner),
        url: format!("https://hooks.example.com/{n}"),
        events,
        secret: format!("whsec_{n}"),
        description: None,
        active: true,
        disabled_reason: None,
        created_at: kit.now,
        updated_at: kit.now,
        test: false,
    })
}

#[tokio::test]
async fn dispatch_fans_out_to_matching_subscriptions_and_the_callback() {
    let mut kit = Kit::new();
    let completed = event(
        &kit,
        EventType::RequestCompleted,
        1,
        Some("https://cb.example.com/done"),
    );
    kit.deliveries()
        .expect_undispatched_events()
        .returning(move |_| Ok(vec![completed.clone()]));
    let hooks = vec![
        hook(&kit, 71, 1, EventFilter::All),
        hook(
            &kit,
            72,
            1,
            EventFilter::Only(vec![EventType::RequestCreated]),
        ),
        hook(&kit, 73, 2, EventFilter::All),
    ];
    kit.deliveries()
        .expect_active_webhooks_of()
        .returning(move |_| Ok(hooks.clone()));
    kit.deliveries()
        .expect_dispatch_all()
        .withf(|events, _| {
            let list = &events[0].deliveries;
            let urls: Vec<&str> = list.iter().map(|(d, _)| d.url.as_str()).collect();
            urls == [
                "https://hooks.example.com/71",
                "https://cb.example.com/done",
            ] && list[1].0.target == DeliveryTarget::Callback
                && list
                    .iter()
                    .all(|(_, body)| body.contains("\"event\":\"request.completed\""))
        })
        .times(1)
        .returning(|events, _| Ok(events.len()));
    assert_eq!(
        DeliveryService::new(kit.ports())
            .dispatch_pending(10)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn callbacks_are_only_for_completion_and_timeout() {
    let mut kit = Kit::new();
    let claimed = event(
        &kit,
        EventType::RequestClaimed,
        1,
        Some("https://cb.example.com/done"),
    );
    kit.deliveries()
        .expect_undispatched_events()
        .returning(move |_| Ok(vec![claimed.clone()]));
    kit.deliveries()
        .expect_active_webhooks_of()
        .returning(|_| Ok(vec![]));
    kit.deliveries()
        .expect_dispatch_all()
        .withf(|events, _| events.len() == 1 && events[0].deliveries.is_empty())
        .times(1)
        .returning(|events, _| Ok(events.len()));
    DeliveryService::new(kit.ports())
        .dispatch_pending(10)
        .await
        .unwrap();
}

fn leased(kit: &Kit, attempts: u32) -> LeasedDelivery {
    LeasedDelivery {
        delivery: Delivery::restore(DeliveryRecord {
            id: DeliveryId::new(kit.oid(90)),
            event_id: EventId::new(kit.oid(80)),
            event_type: EventType::RequestCompleted,
            account_id: kit.user_id(1),
            target: DeliveryTarget::Webhook,
            webhook_id: Some(WebhookId::new(kit.oid(71))),
            url: "https://hooks.example.com/71".into(),
            status: DeliveryStatus::Pending,
            attempts,
            schedule_start: 0,
            next_attempt_at: kit.now,
            last_attempt_at: None,
            last_status_code: None,
            last_error: None,
            created_at: kit.now,
        }),
        payload: "{\"id\":\"x\"}".into(),
        leased_until: kit.now + Duration::seconds(60),
    }
}

fn answering(kit: &mut Kit, status: Option<u16>) -> Arc<Mutex<Vec<reviewloop_ports::Outgoing>>> {
    let hook = hook(kit, 71, 1, EventFilter::All);
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(hook.clone())));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    kit.sender().expect_send().returning(move |outgoing| {
        log.lock().unwrap().push(outgoing.clone());
        SendOutcome {
            status,
            latency_ms: 7,
            error: status.filter(|s| *s >= 300).map(|s| format!("HTTP {s}")),
        }
    });
    sent
}

#[tokio::test]
async fn a_successful_attempt_is_signed_and_recorded() {
    let mut kit = Kit::new();
    let sent = answering(&mut kit, Some(204));
    kit.deliveries()
        .expect_record_attempt()
        .withf(|d, a, health, _| {
            d.status == DeliveryStatus::Succeeded
                && d.attempts == 1
                && a.success
                && a.latency_ms == 7
                && health.as_ref().is_some_and(|h| h.success)
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let lease = leased(&kit, 0);
    let status = DeliveryService::new(kit.ports())
        .attempt(lease)
        .await
        .unwrap();
    assert_eq!(status, DeliveryStatus::Succeeded);
    let sent = sent.lock().unwrap();
    let header = |name: &str| {
        sent[0]
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(
        header("X-ReviewLoop-Signature-256"),
        body_signature("whsec_71", "{\"id\":\"x\"}")
    );
    assert_eq!(
        header("webhook-id"),
        EventId::new(Kit::new().oid(80)).to_string()
    );
    assert!(header("webhook-signature").starts_with("v1,"));
    assert_eq!(header("X-ReviewLoop-Event"), "request.completed");
}

#[tokio::test]
async fn a_failed_attempt_is_retried_on_schedule_and_the_last_one_fails_for_good() {
    let mut kit = Kit::new();
    answering(&mut kit, Some(500));
    let now = kit.now;
    kit.deliveries()
        .expect_record_attempt()
        .withf(move |d, a, health, _| {
            d.status == DeliveryStatus::Pending
                && d.next_attempt_at == now + Duration::seconds(5)
                && !a.success
                && a.status_code == Some(500)
                && health.as_ref().is_some_and(|h| {
                    !h.success && h.disable_if_failing_since == now - Duration::days(5)
                })
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let lease = leased(&kit, 0);
    assert_eq!(
        DeliveryService::new(kit.ports())
            .attempt(lease)
            .await
            .unwrap(),
        DeliveryStatus::Pending
    );

    let mut kit = Kit::new();
    answering(&mut kit, None);
    kit.deliveries()
        .expect_record_attempt()
        .withf(|d, _, _, _| d.status == DeliveryStatus::Failed && d.attempts == 12)
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let lease = leased(&kit, 11);
    assert_eq!(
        DeliveryService::new(kit.ports())
            .attempt(lease)
            .await
            .unwrap(),
        DeliveryStatus::Failed
    );
}

#[tokio::test]
async fn deliveries_follow_the_subscriptions_current_url() {
    let mut kit = Kit::new();
    let moved = Webhook::restore(WebhookRecord {
        url: "https://new.example.com/in".into(),
        ..hook(&kit, 71, 1, EventFilter::All).into_record()
    });
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(moved.clone())));
    kit.sender()
        .expect_send()
        .withf(|o| o.url == "https://new.example.com/in")
        .times(1)
        .returning(|_| SendOutcome {
            status: Some(200),
            latency_ms: 1,
            error: None,
        });
    kit.deliveries()
        .expect_record_attempt()
        .returning(|_, _, _, _| Ok(()));
    let lease = leased(&kit, 0);
    DeliveryService::new(kit.ports())
        .attempt(lease)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_callback_whose_account_is_gone_fails_at_once() {
    let mut kit = Kit::new();
    kit.accounts().expect_user_by_id().returning(|_| Ok(None));
    kit.sender().expect_send().never();
    kit.deliveries()
        .expect_record_attempt()
        .withf(|d, a, health, _| {
            d.status == DeliveryStatus::Failed && !a.success && health.is_none()
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let mut lease = leased(&kit, 0);
    lease.delivery = Delivery::restore(DeliveryRecord {
        target: DeliveryTarget::Callback,
        webhook_id: None,
        ..lease.delivery.into_record()
    });
    assert_eq!(
        DeliveryService::new(kit.ports())
            .attempt(lease)
            .await
            .unwrap(),
        DeliveryStatus::Failed
    );
}

#[tokio::test]
async fn a_redelivered_delivery_retries_from_the_start_of_the_schedule() {
    let mut kit = Kit::new();
    answering(&mut kit, Some(500));
    let now = kit.now;
    kit.deliveries()
        .expect_record_attempt()
        .withf(move |d, a, _, _| {
            a.attempt == 13
                && d.status == DeliveryStatus::Pending
                && d.next_attempt_at == now + Duration::seconds(5)
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let mut lease = leased(&kit, 12);
    lease.delivery = Delivery::restore(DeliveryRecord {
        schedule_start: 12,
        ..lease.delivery.into_record()
    });
    DeliveryService::new(kit.ports())
        .attempt(lease)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_overtaken_attempt_is_not_an_error() {
    let mut kit = Kit::new();
    answering(&mut kit, Some(200));
    kit.deliveries()
        .expect_record_attempt()
        .returning(|_, _, _, _| {
            Err(reviewloop_ports::StoreError::Conflict(
                "lease ran out".into(),
            ))
        });
    let lease = leased(&kit, 0);
    assert_eq!(
        DeliveryService::new(kit.ports())
            .attempt(lease)
            .await
            .unwrap(),
        DeliveryStatus::Pending
    );
}

/// A worker that waited so long that its lease is nearly over does not
/// send: another instance may lease the delivery the moment it runs out and
/// send it too. The delivery waits for the next lease, with no attempt.
#[tokio::test]
async fn a_lease_nearly_over_sends_nothing() {
    // With `left` seconds of the lease left: where the delivery stands, and
    // how many requests went out.
    async fn attempt_with(left: i64, records: usize) -> (DeliveryStatus, usize) {
        let mut kit = Kit::new();
        let sent = answering(&mut kit, Some(200));
        kit.deliveries()
            .expect_record_attempt()
            .times(records)
            .returning(|_, _, _, _| Ok(()));
        let mut lease = leased(&kit, 0);
        lease.leased_until = kit.now + Duration::seconds(left);
        let status = DeliveryService::new(kit.ports())
            .attempt(lease)
            .await
            .unwrap();
        let count = sent.lock().unwrap().len();
        (status, count)
    }
    assert_eq!(attempt_with(14, 0).await, (DeliveryStatus::Pending, 0));
    // The receiver's ten seconds and time to record are left: it sends.
    assert_eq!(attempt_with(15, 1).await, (DeliveryStatus::Succeeded, 1));
}

#[tokio::test]
async fn history_is_purged_in_batches_until_nothing_is_left() {
    let mut kit = Kit::new();
    let horizon = kit.now - chrono::Duration::days(30);
    let mut batches = vec![0u64, 3, 1000];
    kit.deliveries()
        .expect_purge_history()
        .withf(move |before, limit| *before == horizon && *limit == 1000)
        .times(3)
        .returning(move |_, _| Ok(batches.pop().unwrap_or(0)));
    let purged = DeliveryService::new(kit.ports())
        .purge_history(chrono::Duration::days(30))
        .await
        .unwrap();
    assert_eq!(purged, 1003);
}

/// A receiver that answered quickly may be sent more at once; one that
/// failed or answered slowly is back to the few every receiver gets.
#[tokio::test]
async fn a_quick_receiver_gets_a_larger_share_until_it_slows() {
    let mut kit = Kit::new();
    let hook = hook(&kit, 71, 1, EventFilter::All);
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(hook.clone())));
    // Quick, then slow, then quick but refused.
    let answers = Arc::new(Mutex::new(vec![
        (Some(500), 20),
        (Some(204), 2_000),
        (Some(204), 20),
    ]));
    kit.sender().expect_send().returning(move |_| {
        let (status, latency_ms) = answers.lock().unwrap().pop().unwrap();
        SendOutcome {
            status,
            latency_ms,
            error: status.filter(|s| *s >= 300).map(|s| format!("HTTP {s}")),
        }
    });
    kit.deliveries()
        .expect_record_attempt()
        .returning(|_, _, _, _| Ok(()));
    let shares = Arc::new(Mutex::new(Vec::new()));
    let seen = shares.clone();
    let lease = leased(&kit, 0);
    kit.deliveries()
        .expect_lease_due()
        .returning(move |_, _, _, shares| {
            seen.lock().unwrap().push(shares.clone());
            Ok(vec![lease.clone()])
        });
    let url = "https://hooks.example.com/71";
    let service = DeliveryService::new(kit.ports());
    let mut shares_of_url = Vec::new();
    for _ in 0..4 {
        let leased = service.lease(10).await.unwrap().remove(0);
        let asked = shares.lock().unwrap().last().unwrap().clone();
        shares_of_url.push(asked.share(url));
        if shares_of_url.len() < 4 {
            service.attempt(leased).await.unwrap();
        }
    }
    assert_eq!(
        shares_of_url,
        [PER_TARGET, PER_QUICK_TARGET, PER_TARGET, PER_TARGET],
        "first unknown, then quick, then slow, then failed"
    );
    service.lease(10).await.unwrap();
    let last = shares.lock().unwrap().last().unwrap().clone();
    assert_eq!(
        last.in_flight.get(url),
        Some(&1),
        "the one leased and not attempted is counted"
    );
}

/// Two quick receivers do not both get the larger share: if both hung,
/// they would hold every slot.
#[test]
fn one_quick_receiver_at_a_time_holds_the_larger_share() {
    let (a, b) = ("https://a.example.com/in", "https://b.example.com/in");
    let targets = Targets {
        in_flight: [(a.to_owned(), 3), (b.to_owned(), 9)].into(),
        quick: [a.to_owned(), b.to_owned()].into(),
    };
    let shares = targets.shares();
    assert_eq!(
        shares.share(b),
        PER_QUICK_TARGET,
        "the one with most in flight"
    );
    assert_eq!(shares.share(a), PER_TARGET);
    assert_eq!(shares.share("https://c.example.com/in"), PER_TARGET);
    assert_eq!(Targets::default().shares(), TargetShares::each(PER_TARGET));
    // The favoured one turned slow with 16 still out: the next quick one
    // gets only what is left of the larger share.
    let handed_on = Targets {
        in_flight: [(a.to_owned(), 2), (b.to_owned(), 16)].into(),
        quick: [a.to_owned()].into(),
    };
    assert_eq!(handed_on.shares().share(a), PER_TARGET);
    let drained = Targets {
        in_flight: [(a.to_owned(), 2), (b.to_owned(), 10)].into(),
        quick: [a.to_owned()].into(),
    };
    assert_eq!(drained.shares().share(a), PER_QUICK_TARGET - 6);
}
