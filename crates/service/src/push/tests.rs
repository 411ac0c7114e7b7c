use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use reviewloop_domain::PushSubscription;
use serde_json::json;

use super::*;
use crate::testkit::{Classed, Kit};

fn service(kit: Kit) -> PushService {
    PushService::new(kit.ports(), "http://localhost:8080/")
}

fn body(endpoint: &str) -> Value {
    let mut key = vec![4u8];
    key.extend([5u8; 64]);
    json!({
        "endpoint": endpoint,
        "expirationTime": null,
        "keys": {"p256dh": URL_SAFE_NO_PAD.encode(key), "auth": URL_SAFE_NO_PAD.encode([6u8; 16])},
    })
}

fn device(kit: &Kit, n: u8, user: u8) -> PushSubscription {
    PushSubscription {
        id: PushSubscriptionId::new(kit.oid(120 + n)),
        user_id: kit.user_id(user),
        endpoint: format!("https://push.example/{n}"),
        p256dh: vec![4; 65],
        auth: vec![6; 16],
        device: format!("Device {n}"),
        created_at: kit.now,
    }
}

fn a_key(kit: &Kit) -> VapidKey {
    VapidKey {
        public_key: vec![4; 65],
        secret_key: vec![1; 32],
        created_at: kit.now,
    }
}

#[tokio::test]
async fn a_device_is_subscribed_for_its_person_and_named_after_its_browser() {
    let mut kit = Kit::new();
    kit.push_gateway()
        .expect_is_device_key()
        .returning(|_| true);
    kit.guard()
        .expect_check()
        .withf(|url| url == "https://push.example/new")
        .returning(|_| Ok(()));
    kit.push()
        .expect_push_subscriptions_of()
        .returning(|_| Ok(vec![]));
    let saved: Arc<Mutex<Vec<PushSubscription>>> = Arc::default();
    let seen = saved.clone();
    kit.push()
        .expect_save_push_subscription()
        .returning(move |s| {
            seen.lock().unwrap().push(s.clone());
            Ok(s.clone())
        });
    let me = kit.principal(1);
    let sub = service(kit)
        .subscribe(
            &me,
            &body("https://push.example/new"),
            Some("Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36"),
        )
        .await
        .unwrap();
    assert_eq!(sub.user_id, me.user_id);
    assert_eq!(sub.device, "Chrome on Linux");
    assert_eq!(sub.auth, vec![6u8; 16]);
    assert_eq!(saved.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_endpoint_the_guard_refuses_or_a_key_off_the_curve_is_a_validation_error() {
    let mut kit = Kit::new();
    let mut answers = vec![true, false];
    kit.push_gateway()
        .expect_is_device_key()
        .returning(move |_| answers.pop().unwrap());
    kit.guard()
        .expect_check()
        .returning(|_| Err("169.254.169.254 is an internal address".into()));
    kit.push().expect_save_push_subscription().never();
    let me = kit.principal(1);
    let service = service(kit);
    let off_curve = service
        .subscribe(&me, &body("https://push.example/a"), None)
        .await
        .unwrap_err();
    assert!(off_curve.to_string().contains("keys.p256dh"), "{off_curve}");
    let internal = service
        .subscribe(&me, &body("http://169.254.169.254/latest"), None)
        .await
        .unwrap_err();
    assert!(matches!(internal, SubscribeError::Invalid(_)));
    assert!(
        internal.to_string().contains("internal address"),
        "{internal}"
    );
}

#[tokio::test]
async fn a_person_keeps_at_most_twenty_devices_but_may_renew_one() {
    let mut kit = Kit::new();
    kit.push_gateway()
        .expect_is_device_key()
        .returning(|_| true);
    kit.guard().expect_check().returning(|_| Ok(()));
    let full: Vec<PushSubscription> = (0..20).map(|n| device(&kit, n, 1)).collect();
    kit.push()
        .expect_push_subscriptions_of()
        .returning(move |_| Ok(full.clone()));
    kit.push()
        .expect_save_push_subscription()
        .times(1)
        .returning(|s| Ok(s.clone()));
    let me = kit.principal(1);
    let service = service(kit);
    let refused = service
        .subscribe(&me, &body("https://push.example/new"), None)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("at most 20"), "{refused}");
    service
        .subscribe(&me, &body("https://push.example/3"), None)
        .await
        .expect("an endpoint already kept is renewed");
}

#[tokio::test]
async fn someone_elses_device_is_not_found_and_stays() {
    let mut kit = Kit::new();
    let theirs = device(&kit, 1, 2);
    let id = theirs.id;
    kit.push()
        .expect_push_subscription()
        .returning(move |_| Ok(Some(theirs.clone())));
    kit.push().expect_delete_push_subscription().never();
    kit.push_gateway().expect_push().never();
    let me = kit.principal(1);
    let service = service(kit);
    for error in [
        service.unsubscribe(&me, &id).await.unwrap_err(),
        service.test(&me, &id).await.unwrap_err(),
    ] {
        assert!(matches!(
            error,
            DeviceError::NotFound(Missing::PushSubscription)
        ));
    }
}

#[tokio::test]
async fn a_test_push_links_to_the_account_page_and_removes_a_forgotten_device() {
    let mut kit = Kit::new();
    let mine = device(&kit, 1, 1);
    let id = mine.id;
    kit.push()
        .expect_push_subscription()
        .returning(move |_| Ok(Some(mine.clone())));
    let key = a_key(&kit);
    kit.push()
        .expect_vapid_key()
        .times(1)
        .returning(move || Ok(Some(key.clone())));
    let mut answers = vec![Err(PushFailure::Gone("HTTP 410".into())), Ok(())];
    kit.push_gateway()
        .expect_push()
        .withf(|_, push| {
            let payload: Value = serde_json::from_slice(&push.payload).unwrap();
            payload["url"] == "http://localhost:8080/app/account" && payload["request_id"].is_null()
        })
        .times(2)
        .returning(move |_, _| answers.pop().unwrap());
    kit.push()
        .expect_delete_push_subscription()
        .withf(move |gone| *gone == id)
        .times(1)
        .returning(|_| Ok(true));
    let me = kit.principal(1);
    let service = service(kit);
    assert_eq!(service.test(&me, &id).await.unwrap(), TestPush::Sent);
    assert_eq!(service.test(&me, &id).await.unwrap(), TestPush::Removed);
}

#[tokio::test]
async fn the_key_pair_is_made_once_and_browsers_are_given_it_afresh() {
    let mut kit = Kit::new();
    let key = a_key(&kit);
    let made = key.clone();
    let mut stored = vec![Some(key.clone()), Some(key.clone()), None];
    kit.push()
        .expect_vapid_key()
        .times(3)
        .returning(move || Ok(stored.pop().unwrap()));
    kit.push_gateway()
        .expect_new_vapid_key()
        .times(1)
        .returning(move || Ok(made.clone()));
    kit.push()
        .expect_insert_first_vapid_key()
        .times(1)
        .returning(|_| Ok(()));
    let service = service(kit);
    service.ensure_key().await.unwrap();
    assert_eq!(
        service.public_key().await.unwrap(),
        key.public_key_base64url(),
        "read from the store again: a rotated key is never handed out"
    );
}

#[tokio::test]
async fn rotating_the_key_drops_every_subscription_and_a_test_key_subscribes_nothing() {
    let mut kit = Kit::new();
    let key = a_key(&kit);
    kit.push_gateway()
        .expect_new_vapid_key()
        .returning(move || Ok(key.clone()));
    kit.push()
        .expect_replace_vapid_key()
        .times(1)
        .returning(|_| Ok(3));
    let mut tester = kit.principal(1);
    tester.test = true;
    let service = service(kit);
    assert_eq!(service.rotate_key().await.unwrap(), 3);
    let refused = service
        .subscribe(&tester, &body("https://push.example/x"), None)
        .await
        .classed();
    assert!(matches!(refused, Err(crate::ServiceError::Forbidden(_))));
}

#[tokio::test]
async fn a_key_that_may_not_read_requests_gets_no_device() {
    let mut kit = Kit::new();
    kit.push().expect_save_push_subscription().never();
    kit.push().expect_push_subscriptions_of().never();
    let mut loops_only = kit.principal(1);
    loops_only.permissions = vec![reviewloop_domain::Permission::LoopsRead];
    let service = service(kit);
    let refused = service
        .subscribe(&loops_only, &body("https://push.example/x"), None)
        .await
        .unwrap_err();
    assert!(matches!(refused, SubscribeError::Denied(_)), "{refused:?}");
    assert!(service.devices(&loops_only).await.is_err());
}
