use chrono::{Duration, TimeZone};
use serde_json::json;

use super::*;

fn key65() -> String {
    let mut key = vec![0x04u8];
    key.extend([7u8; 64]);
    URL_SAFE_NO_PAD.encode(key)
}

fn auth16() -> String {
    URL_SAFE_NO_PAD.encode([9u8; 16])
}

#[test]
fn a_browsers_subscription_is_read_with_its_keys() {
    let parsed = NewPushSubscription::parse(&json!({
        "endpoint": "https://fcm.googleapis.com/fcm/send/abc",
        "expirationTime": null,
        "keys": {"p256dh": key65(), "auth": auth16()},
    }))
    .unwrap();
    assert_eq!(parsed.endpoint, "https://fcm.googleapis.com/fcm/send/abc");
    assert_eq!(parsed.p256dh.len(), 65);
    assert_eq!(parsed.auth, vec![9u8; 16]);
    assert_eq!(parsed.device, None);
}

#[test]
fn padded_base64url_is_read_too() {
    let padded = URL_SAFE.encode([9u8; 16]);
    assert!(padded.ends_with("=="));
    let parsed = NewPushSubscription::parse(&json!({
        "endpoint": "https://push.example/x",
        "keys": {"p256dh": key65(), "auth": padded},
        "device": " Work laptop ",
    }))
    .unwrap();
    assert_eq!(parsed.device.as_deref(), Some("Work laptop"));
}

#[test]
fn every_bad_field_is_named() {
    let fields = |body: Value| -> Vec<String> {
        NewPushSubscription::parse(&body)
            .unwrap_err()
            .errors
            .into_iter()
            .map(|e| e.field)
            .collect()
    };
    assert_eq!(fields(json!("x")), ["body"]);
    assert_eq!(
        fields(json!({"endpoint": "ftp://x", "keys": {"p256dh": "!!", "auth": 5}, "device": ""})),
        ["endpoint", "keys.p256dh", "keys.auth", "device"]
    );
    let compressed = URL_SAFE_NO_PAD.encode([2u8; 33]);
    assert_eq!(
        fields(json!({"endpoint": "https://u:p@push.example/x",
            "keys": {"p256dh": compressed, "auth": URL_SAFE_NO_PAD.encode([1u8; 15])}})),
        ["endpoint", "keys.p256dh", "keys.auth"]
    );
    let long = format!("https://push.example/{}", "a".repeat(MAX_ENDPOINT_CHARS));
    assert_eq!(
        fields(json!({"endpoint": long, "keys": {"p256dh": key65(), "auth": auth16()}})),
        ["endpoint"]
    );
}

#[test]
fn the_push_service_is_the_endpoints_origin() {
    let sub = |endpoint: &str| PushSubscription {
        id: PushSubscriptionId::parse("5f5e1000ab010203040506ff").unwrap(),
        user_id: UserId::parse("5f5e1000ab010203040506fe").unwrap(),
        endpoint: endpoint.into(),
        p256dh: vec![],
        auth: vec![],
        device: "A browser".into(),
        created_at: Utc::now(),
    };
    assert_eq!(
        sub("https://FCM.googleapis.com:443/fcm/send/x").push_service(),
        "https://fcm.googleapis.com"
    );
    assert_eq!(
        sub("http://127.0.0.1:8181/push/1?x").push_service(),
        "http://127.0.0.1:8181"
    );
}

#[test]
fn devices_are_named_after_browser_and_system() {
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
    assert_eq!(device_name(chrome), "Chrome on Linux");
    let firefox = "Mozilla/5.0 (Android 14; Mobile; rv:120.0) Gecko/120.0 Firefox/120.0";
    assert_eq!(device_name(firefox), "Firefox on Android");
    let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
    assert_eq!(device_name(safari), "Safari on iOS");
    let edge = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0";
    assert_eq!(device_name(edge), "Edge on Windows");
    assert_eq!(device_name("curl/8.0"), "A browser");
}

#[test]
fn urgency_follows_priority_and_ttl_the_deadline() {
    assert_eq!(push_urgency(Priority::Low), "low");
    assert_eq!(push_urgency(Priority::Medium), "normal");
    assert_eq!(push_urgency(Priority::High), "high");
    assert_eq!(push_urgency(Priority::Critical), "high");
    let now = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    assert_eq!(push_ttl(now, now + Duration::hours(1)), 3600);
    assert_eq!(
        push_ttl(now, now - Duration::hours(1)),
        60,
        "at least a minute"
    );
    assert_eq!(
        push_ttl(now, now + Duration::days(90)),
        u32::try_from(MAX_PUSH_TTL_SECONDS).unwrap()
    );
}

#[test]
fn a_vapid_keys_secret_stays_out_of_debug() {
    let key = VapidKey {
        public_key: vec![4u8; 65],
        secret_key: vec![0xAB; 32],
        // A fixed time: a clock reading's digits could hold "171" too.
        created_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
    };
    let shown = format!("{key:?}");
    assert!(shown.contains(&key.public_key_base64url()), "{shown}");
    assert!(
        !shown.contains("secret") && !shown.contains("171"),
        "{shown}"
    );
}

#[test]
fn a_devices_endpoint_and_secret_stay_out_of_debug() {
    let parsed = NewPushSubscription::parse(&json!({
        "endpoint": "https://push.example/secret-capability",
        "keys": {"p256dh": key65(), "auth": auth16()},
    }))
    .unwrap();
    let shown = format!("{parsed:?}");
    assert!(shown.contains("https://push.example"), "{shown}");
    assert!(
        !shown.contains("secret-capability") && !shown.contains("auth"),
        "{shown}"
    );
}
