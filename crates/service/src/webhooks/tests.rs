use reviewloop_domain::{DeliveryRecord, DeliveryStatus, EventType, ObjectId, WebhookRecord};

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

fn hook(kit: &Kit, owner: u8) -> Webhook {
    Webhook::restore(WebhookRecord {
        id: WebhookId::new(kit.oid(70)),
        account_id: kit.user_id(owner),
        url: "https://hooks.example.com/in".into(),
        events: EventFilter::All,
        secret: "whsec_old".into(),
        description: None,
        active: false,
        disabled_reason: Some("failing".into()),
        created_at: kit.now,
        updated_at: kit.now,
        test: false,
    })
}

/// A delivery of subscription `webhook`, as the store would return it.
fn a_delivery(
    id: DeliveryId,
    webhook: WebhookId,
    status: reviewloop_domain::DeliveryStatus,
    now: chrono::DateTime<chrono::Utc>,
) -> Delivery {
    let one = ObjectId::from_parts(1, [1; 8]);
    Delivery::restore(DeliveryRecord {
        id,
        event_id: reviewloop_domain::EventId::new(one),
        event_type: EventType::RequestCreated,
        account_id: reviewloop_domain::UserId::new(one),
        target: reviewloop_domain::DeliveryTarget::Webhook,
        webhook_id: Some(webhook),
        url: "https://x.example".into(),
        status,
        attempts: 1,
        schedule_start: 0,
        next_attempt_at: now,
        last_attempt_at: None,
        last_status_code: None,
        last_error: None,
        created_at: now,
    })
}

#[tokio::test]
async fn create_checks_the_target_and_shows_a_generated_secret_once() {
    let mut kit = Kit::new();
    kit.guard().expect_check().returning(|url| {
        if url.contains("internal") {
            Err("resolves to 10.0.0.1".into())
        } else {
            Ok(())
        }
    });
    kit.webhooks()
        .expect_insert_webhook()
        .withf(|w| w.events == EventFilter::All && w.secret.starts_with("whsec_") && w.active)
        .times(1)
        .returning(|_| Ok(()));
    let caller = kit.principal(1);
    let service = WebhookService::new(kit.ports());
    let input = WebhookInput {
        url: Some("https://hooks.example.com/in".into()),
        ..WebhookInput::default()
    };
    let view = service.create(&caller, input).await.unwrap();
    assert_eq!(view.secret.as_deref(), Some(view.webhook.secret.as_str()));

    let refused = WebhookInput {
        url: Some("https://internal.example/in".into()),
        ..WebhookInput::default()
    };
    let err = service.create(&caller, refused).await.unwrap_err();
    assert_eq!(err.to_string(), "url is not allowed: resolves to 10.0.0.1");
    let bad = WebhookInput {
        url: Some("https://hooks.example.com".into()),
        events: Some(vec!["request.nope".into()]),
        ..WebhookInput::default()
    };
    assert!(matches!(
        service.create(&caller, bad).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
    assert!(matches!(
        service
            .create(&caller, WebhookInput::default())
            .await
            .classed(),
        Err(ServiceError::Invalid(_))
    ));
}

#[tokio::test]
async fn another_accounts_subscription_is_not_found() {
    let mut kit = Kit::new();
    let theirs = hook(&kit, 2);
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(theirs.clone())));
    kit.webhooks().expect_update_webhook().never();
    kit.webhooks().expect_delete_webhook().never();
    let caller = kit.principal(1);
    let id = WebhookId::new(kit.oid(70));
    let service = WebhookService::new(kit.ports());
    assert!(matches!(
        service.get(&caller, &id).await.classed(),
        Err(ServiceError::NotFound(Missing::Webhook))
    ));
    assert!(matches!(
        service.delete(&caller, &id).await.classed(),
        Err(ServiceError::NotFound(_))
    ));
    let patch = WebhookPatch {
        active: Some(true),
        ..WebhookPatch::default()
    };
    assert!(matches!(
        service.update(&caller, &id, patch).await.classed(),
        Err(ServiceError::NotFound(_))
    ));
}

#[tokio::test]
async fn rotating_shows_the_new_secret_and_turning_on_clears_the_reason() {
    let mut kit = Kit::new();
    let mine = hook(&kit, 1);
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(mine.clone())));
    kit.webhooks()
        .expect_update_webhook()
        .withf(|w| w.active && w.disabled_reason.is_none() && w.secret != "whsec_old")
        .times(1)
        .returning(|_| Ok(()));
    let caller = kit.principal(1);
    let id = WebhookId::new(kit.oid(70));
    let service = WebhookService::new(kit.ports());
    let patch = WebhookPatch {
        active: Some(true),
        rotate_secret: true,
        ..WebhookPatch::default()
    };
    let view = service.update(&caller, &id, patch).await.unwrap();
    assert_eq!(view.secret.as_deref(), Some(view.webhook.secret.as_str()));
    let both = WebhookPatch {
        secret: Some("x".repeat(20)),
        rotate_secret: true,
        ..WebhookPatch::default()
    };
    assert!(matches!(
        service.update(&caller, &id, both).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
}

#[tokio::test]
async fn redelivery_needs_a_delivery_of_that_subscription() {
    let mut kit = Kit::new();
    let mine = hook(&kit, 1);
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(mine.clone())));
    let other_hook = WebhookId::new(kit.oid(71));
    let now = kit.now;
    kit.webhooks().expect_delivery_by_id().returning(move |id| {
        Ok(Some(a_delivery(
            *id,
            other_hook,
            reviewloop_domain::DeliveryStatus::Failed,
            now,
        )))
    });
    kit.webhooks().expect_redeliver().never();
    let caller = kit.principal(1);
    let service = WebhookService::new(kit.ports());
    let err = service
        .redeliver(
            &caller,
            &WebhookId::new(ObjectId::from_parts(1, [70; 8])),
            &DeliveryId::new(ObjectId::from_parts(1, [9; 8])),
        )
        .await
        .classed()
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(Missing::Delivery)));
}

#[tokio::test]
async fn redelivery_needs_an_active_subscription_and_a_finished_delivery() {
    let mut kit = Kit::new();
    let active = Webhook::restore(WebhookRecord {
        active: true,
        ..hook(&kit, 1).into_record()
    });
    let mut hooks = vec![active.clone(), active.clone(), hook(&kit, 1), active];
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(hooks.pop()));
    let now = kit.now;
    let hook_id = WebhookId::new(kit.oid(70));
    let mut states = vec![
        DeliveryStatus::Failed,
        DeliveryStatus::Failed,
        DeliveryStatus::Failed,
        DeliveryStatus::Pending,
    ];
    kit.webhooks()
        .expect_delivery_by_id()
        .returning(move |id| Ok(states.pop().map(|s| a_delivery(*id, hook_id, s, now))));
    // The second failed delivery is taken up by a worker between the read
    // and the write; the third is written.
    let mut store_answers = vec![Ok(()), Err(StoreError::Conflict("pending".into()))];
    kit.webhooks()
        .expect_redeliver()
        .withf(|d| d.status == DeliveryStatus::Pending && d.schedule_start == d.attempts)
        .times(2)
        .returning(move |_| store_answers.pop().unwrap());
    let caller = kit.principal(1);
    let service = WebhookService::new(kit.ports());
    let delivery = DeliveryId::new(ObjectId::from_parts(1, [9; 8]));
    for refusal in [
        "Delivery is still being attempted",
        "Webhook is disabled",
        "Delivery is still being attempted",
    ] {
        let err = service
            .redeliver(&caller, &hook_id, &delivery)
            .await
            .classed()
            .unwrap_err();
        assert!(
            matches!(&err, ServiceError::Conflict(m) if m.starts_with(refusal)),
            "{refusal}: {err:?}"
        );
    }
    let again = service
        .redeliver(&caller, &hook_id, &delivery)
        .await
        .unwrap();
    assert_eq!(
        (again.status, again.next_attempt_at),
        (DeliveryStatus::Pending, now)
    );
}

#[tokio::test]
async fn a_test_send_posts_a_signed_test_event_and_reports_the_answer() {
    let mut kit = Kit::new();
    let owned = Webhook::restore(WebhookRecord {
        active: true,
        ..hook(&kit, 1).into_record()
    });
    let found = owned.clone();
    kit.webhooks()
        .expect_webhook_by_id()
        .returning(move |_| Ok(Some(found.clone())));
    kit.sender()
        .expect_send()
        .withf(|out| {
            let signature = out
                .headers
                .iter()
                .find(|(k, _)| k == "X-ReviewLoop-Signature-256")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            out.url == "https://hooks.example.com/in"
                && out.body.contains("\"event\":\"webhook.test\"")
                && signature == crate::signing::body_signature("whsec_old", &out.body)
        })
        .times(1)
        .returning(|_| reviewloop_ports::SendOutcome {
            status: Some(204),
            latency_ms: 3,
            error: None,
        });
    let service = WebhookService::new(kit.ports());
    let caller = Kit::new().principal(1);
    let outcome = service.send_test(&caller, &owned.id).await.unwrap();
    assert_eq!(outcome.status, Some(204));

    let stranger = Kit::new().principal(2);
    assert!(matches!(
        service.send_test(&stranger, &owned.id).await.classed(),
        Err(ServiceError::NotFound(_))
    ));
}
