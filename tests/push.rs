//! Black-box: Web Push. Members subscribe devices of a push service run by
//! the test (tests/common/push.rs), which decrypts every push with the
//! device's own keys and checks its VAPID signature; new requests reach
//! the devices their owners' notification preferences select, a device
//! the push service forgot is removed, and a push not yet sent survives a
//! SIGKILL and is sent once after the restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::push::PushService;
use common::{id_of, Server};
use serde_json::{json, Value};

const SUBSCRIPTIONS: &str = "/v1/api/push/subscriptions";

/// A server that may reach the local push service, retrying quickly.
fn server() -> Server {
    Server::start_with(&[
        ("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true"),
        ("REVIEWLOOP_NOTIFY_RETRY_SCHEDULE", "1,1,1"),
    ])
}

fn subscribe(server: &Server, key: &str, body: Value) -> Value {
    server.post(key, SUBSCRIPTIONS, body).data(201)["subscription"].clone()
}

fn devices(server: &Server, key: &str) -> Vec<Value> {
    server.get(key, SUBSCRIPTIONS).data(200)["subscriptions"]
        .as_array()
        .unwrap()
        .clone()
}

fn create(server: &Server, loop_id: &str, text: &str, priority: &str) -> String {
    server.create_request_with(
        &server.admin_key,
        loop_id,
        json!({"request_text": text, "priority": priority, "timeout_seconds": 3600}),
    )
}

/// The push as `tests/signatures/webpush.py` reads it: the VAPID JWT
/// checked with `cryptography`, the body decrypted with Mozilla's
/// `http_ece`.
fn read_with_python(
    service: &PushService,
    push: &common::push::Push,
    device: &common::push::Device,
) -> Value {
    use std::io::Write;
    let (secret_key, auth) = device.secrets();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/signatures/webpush.py"
    );
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 is needed for this test: {e}"));
    let input = json!({
        "body": URL_SAFE_NO_PAD.encode(&push.raw),
        "secret_key": secret_key,
        "auth": auth,
        "authorization": push.authorization,
        "origin": service.origin,
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !said.contains("ModuleNotFoundError"),
        "http_ece and cryptography come from PyPI (scripts/test installs them): {said}"
    );
    assert!(out.status.success(), "{said}");
    serde_json::from_slice(&out.stdout).expect("the payload as JSON")
}

fn new_requests_reach_the_devices_the_preferences_select() {
    let push = PushService::start();
    let server = server();
    let vapid = server
        .get(&server.admin_key, "/v1/api/push/vapid-key")
        .data(200)["public_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let point = URL_SAFE_NO_PAD.decode(&vapid).unwrap();
    assert_eq!(
        (point.len(), point[0]),
        (65, 4),
        "an uncompressed P-256 point"
    );

    let created = server.create_loop(&server.admin_key, "Refunds");
    let loop_id = id_of(&created["loop"]);
    let reviewer = server.key("rev@example.com");
    server.join(&reviewer, &created);

    let phone = push.device("phone");
    let laptop = push.device("laptop");
    let desk = push.device("desk");
    let mut named = phone.subscription();
    named["device"] = json!("My phone");
    let shown = subscribe(&server, &reviewer, named);
    assert_eq!(shown["device"], "My phone");
    assert_eq!(shown["push_service"], push.origin.as_str());
    assert!(
        shown.get("endpoint").is_none() && !shown.to_string().contains("/push/phone"),
        "the endpoint is a capability: never shown back: {shown}"
    );
    let phone_id = id_of(&shown);
    subscribe(&server, &reviewer, laptop.subscription());
    let desk_id = id_of(&subscribe(&server, &server.admin_key, desk.subscription()));
    assert_eq!(devices(&server, &reviewer).len(), 2);
    assert_eq!(
        devices(&server, &server.admin_key).len(),
        1,
        "each sees their own"
    );

    // Someone else's device: not found, and it stays.
    server
        .delete(&reviewer, &format!("{SUBSCRIPTIONS}/{desk_id}"))
        .error(404);
    server
        .post(
            &reviewer,
            &format!("{SUBSCRIPTIONS}/{desk_id}/test"),
            json!({}),
        )
        .error(404);
    assert_eq!(devices(&server, &server.admin_key).len(), 1);

    // The reviewer wants urgent requests only: a medium one reaches the
    // owner's desk alone.
    server
        .put(
            &reviewer,
            &format!("/v1/api/loops/{loop_id}/notifications"),
            json!({"notify": "urgent"}),
        )
        .data(200);
    let medium = create(&server, &loop_id, "Refund order #1042?", "medium");
    let first = push.wait_for(1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(push.pushes().len(), 1, "{:?}", push.pushes());
    let p = &first[0];
    assert_eq!(p.device, "desk");
    assert_eq!(p.payload["request_id"], medium.as_str());
    assert_eq!(p.payload["priority"], "medium");
    assert_eq!(p.payload["title"], "New medium request in Refunds");
    assert_eq!(p.payload["body"], "Refund order #1042?");
    assert!(p.payload["url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/app/requests/{medium}")));
    assert_eq!(p.urgency, "normal");
    assert!(
        (3500..=3600).contains(&p.ttl),
        "TTL up to the deadline: {}",
        p.ttl
    );
    assert_eq!(
        p.vapid_key, vapid,
        "signed with the key browsers subscribe with"
    );
    assert_eq!(p.claims["aud"], push.origin.as_str());
    assert!(push.refused().is_empty(), "{:?}", push.refused());
    // Libraries other than the server's read it the same.
    assert_eq!(read_with_python(&push, p, &desk), p.payload);

    // A critical one reaches all three, urgently.
    let critical = create(&server, &loop_id, "Stop the payout!", "critical");
    let all = push.wait_for(4);
    let mut reached: Vec<&str> = all[1..].iter().map(|p| p.device.as_str()).collect();
    reached.sort_unstable();
    assert_eq!(reached, ["desk", "laptop", "phone"]);
    assert!(all[1..]
        .iter()
        .all(|p| p.urgency == "high" && p.payload["request_id"] == critical.as_str()));

    // The test push goes at once, to the device asked for.
    let tested = server
        .post(
            &reviewer,
            &format!("{SUBSCRIPTIONS}/{phone_id}/test"),
            json!({}),
        )
        .data(200)
        .clone();
    assert_eq!(tested["result"], "sent");
    let test_push = push.wait_for(5)[4].clone();
    assert_eq!(test_push.device, "phone");
    assert!(test_push.payload["request_id"].is_null());

    // The phone's subscription expired: the push service says 410, and
    // the device is removed.
    push.answer("phone", 410);
    create(&server, &loop_id, "Another urgent one", "high");
    push.wait_for(7);
    let started = std::time::Instant::now();
    while devices(&server, &reviewer).len() == 2 {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the phone stays"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = devices(&server, &reviewer);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["device"], "A browser", "the unnamed laptop stays");

    // Removing a device stops its pushes.
    let laptop_id = id_of(&devices(&server, &reviewer)[0]);
    let removed = server
        .delete(&reviewer, &format!("{SUBSCRIPTIONS}/{laptop_id}"))
        .data(200)
        .clone();
    assert_eq!(removed["subscription_id"], laptop_id.as_str());
    assert!(devices(&server, &reviewer).is_empty());
}

fn bad_subscriptions_are_refused_with_what_is_wrong() {
    let push = PushService::start();
    // Without REVIEWLOOP_ALLOW_PRIVATE_TARGETS: the guard refuses loopback.
    let server = Server::start();
    let key = &server.admin_key;
    let good = push.device("d").subscription();
    let internal = server.post(key, SUBSCRIPTIONS, good.clone());
    assert!(
        internal.error(400).contains("internal address"),
        "{}",
        internal.error(400)
    );
    let mut wrong = good.clone();
    wrong["keys"]["p256dh"] = json!(URL_SAFE_NO_PAD.encode([4u8; 65]));
    wrong["keys"]["auth"] = json!("short");
    wrong["endpoint"] = json!("ftp://push.example/x");
    let refused = server.post(key, SUBSCRIPTIONS, wrong);
    let message = refused.error(400).to_owned();
    assert!(
        message.contains("endpoint") && message.contains("keys.auth"),
        "every field is named: {message}"
    );
    let mut off_curve = good.clone();
    off_curve["endpoint"] = json!("https://push.example/x");
    off_curve["keys"]["p256dh"] = json!(URL_SAFE_NO_PAD.encode([4u8; 65]));
    assert!(server
        .post(key, SUBSCRIPTIONS, off_curve)
        .error(400)
        .contains("P-256"));
    server.post(key, SUBSCRIPTIONS, json!([1, 2])).error(400);
    let raw = server
        .http()
        .post(format!("{}{SUBSCRIPTIONS}", server.base))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    assert_eq!(raw.status().as_u16(), 400);
    server
        .delete(key, &format!("{SUBSCRIPTIONS}/nope"))
        .error(400);
    server
        .delete(key, &format!("{SUBSCRIPTIONS}/5f5e1000ab010203040506ff"))
        .error(404);
    let anonymous = server
        .http()
        .get(format!("{}{SUBSCRIPTIONS}", server.base))
        .send()
        .unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    // A test-mode key has no devices: they are people's. Nor has a key
    // that may not read requests: a device is pushed their text.
    let tester = server.key_with("qa@example.com", &["--test"]);
    server.get(&tester, SUBSCRIPTIONS).error(403);
    let loops_only = server.key_with("ops@example.com", &["--permissions", "loops:read"]);
    let mut ok = push.device("d2").subscription();
    ok["endpoint"] = json!("https://push.invalid/x");
    assert!(server
        .post(&loops_only, SUBSCRIPTIONS, ok)
        .error(403)
        .contains("requests:read"));
    assert!(devices(&server, key).is_empty(), "nothing was kept");
}

fn one_endpoint_subscribed_at_once_from_many_tabs_is_one_device() {
    let push = PushService::start();
    let server = server();
    let body = push.device("busy").subscription();
    let ids: Vec<String> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let (server, body) = (&server, body.clone());
                scope.spawn(move || id_of(&subscribe(server, &server.admin_key, body)))
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    assert_eq!(devices(&server, &server.admin_key).len(), 1);
}

fn the_account_page_calls_the_api_with_its_session_and_token() {
    let push = PushService::start();
    let server = server();
    server.set_password("admin@localhost", "correct horse battery");
    let person = common::people::Person::new(&server);
    person.sign_in("admin@localhost", "correct horse battery");
    let page = person.get("/app/account");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("manifest-src 'self'"), "{csp}");
    let html = page.text().unwrap();
    assert!(html.contains("Notify me on this device"), "{html}");
    assert!(html.contains(r#"<link rel="manifest" href="/app/manifest.webmanifest">"#));
    let manifest = person.get("/app/manifest.webmanifest");
    assert_eq!(
        manifest.headers()["content-type"],
        "application/manifest+json"
    );
    let manifest: Value = manifest.json().unwrap();
    assert_eq!(
        (manifest["display"].as_str(), manifest["start_url"].as_str()),
        (Some("standalone"), Some("/app"))
    );
    let worker = person.get("/app/sw.js");
    assert!(worker.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert!(worker.text().unwrap().contains("showNotification"));
    let token = common::people::csrf_of(&html);
    let url = format!("{}{SUBSCRIPTIONS}", server.base);
    let body = push.device("browser").subscription();
    // A page of another site sends the cookie but cannot know the token.
    let forged = person.client.post(&url).json(&body).send().unwrap();
    assert_eq!(forged.status().as_u16(), 401);
    let wrong = person
        .client
        .post(&url)
        .header("x-csrf-token", "0".repeat(64))
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let made = person
        .client
        .post(&url)
        .header("x-csrf-token", &token)
        .header(
            "user-agent",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36",
        )
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(made.status().as_u16(), 201);
    let made: Value = made.json().unwrap();
    assert_eq!(made["data"]["subscription"]["device"], "Chrome on Linux");
    // The account page lists it, and its button pushes a test.
    let (_, html) = person.page("/app/account");
    assert!(html.contains("Chrome on Linux"), "{html}");
    let id = id_of(&made["data"]["subscription"]);
    let tested = person.submit(
        "/app/account",
        &format!("/app/account/devices/{id}/test"),
        &[],
    );
    assert!(
        tested.url().as_str().contains("done=push"),
        "{}",
        tested.url()
    );
    assert_eq!(push.wait_for(1)[0].device, "browser");
    let removed = person.submit(
        "/app/account",
        &format!("/app/account/devices/{id}/remove"),
        &[],
    );
    assert!(
        removed.url().as_str().contains("done=device"),
        "{}",
        removed.url()
    );
    assert!(devices(&server, &server.admin_key).is_empty());
}

fn a_push_is_neither_lost_to_a_sigkill_nor_planned_twice() {
    // The push service is down when the request is made, and the server
    // is killed before it could push.
    let push = PushService::down_at_a_free_address();
    let device = push.device("tablet");
    let mut server = server();
    let created = server.create_loop(&server.admin_key, "Refunds");
    let loop_id = id_of(&created["loop"]);
    subscribe(&server, &server.admin_key, device.subscription());
    create(&server, &loop_id, "Approve the invoice?", "high");
    server.kill();
    push.listen();
    server.relaunch();
    // A kill in the middle of an attempt leaves that notice leased for its
    // 60 s; the new process pushes once the lease runs out.
    push.wait_for_within(1, Duration::from_secs(90));
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(push.pushes().len(), 1, "once: {:?}", push.pushes());
    assert!(push.refused().is_empty(), "{:?}", push.refused());
}

fn rotating_the_vapid_key_says_subscriptions_must_be_renewed() {
    let push = PushService::start();
    let server = server();
    let before = server
        .get(&server.admin_key, "/v1/api/push/vapid-key")
        .data(200)["public_key"]
        .clone();
    subscribe(
        &server,
        &server.admin_key,
        push.device("old").subscription(),
    );
    let output = server.cli_raw(&["vapid-key", "rotate"]);
    assert!(output.status.success());
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("1 subscribed devices were removed") && said.contains("renewed"),
        "{said}"
    );
    let shown = server.cli(&["vapid-key", "show", "--json"]);
    assert_ne!(shown["public_key"], before);
    assert!(devices(&server, &server.admin_key).is_empty());
}

on_every_backend!(
    new_requests_reach_the_devices_the_preferences_select,
    bad_subscriptions_are_refused_with_what_is_wrong,
    the_account_page_calls_the_api_with_its_session_and_token,
    a_push_is_neither_lost_to_a_sigkill_nor_planned_twice,
    rotating_the_vapid_key_says_subscriptions_must_be_renewed,
    one_endpoint_subscribed_at_once_from_many_tabs_is_one_device,
);
