//! Black-box: webhook subscriptions in both dialects, signed deliveries and
//! callbacks reaching a real receiver, retries, redelivery, the SSRF guard,
//! and no event lost to a SIGKILL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use base64::Engine;
use common::receiver::{Received, Receiver};
use common::{id_of, request_body, Server};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

const LOCAL: [(&str, &str); 2] = [
    ("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true"),
    ("REVIEWLOOP_WEBHOOK_RETRY_SCHEDULE", "1,1,1"),
];

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

/// Verifies a delivery exactly as a receiver would, from the raw body.
fn assert_signed(got: &Received, secret: &str) {
    let expected = format!(
        "sha256={}",
        hex::encode(hmac_sha256(secret.as_bytes(), got.body.as_bytes()))
    );
    assert_eq!(
        got.header("x-reviewloop-signature-256"),
        expected,
        "body signature"
    );
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    let signed = format!(
        "{}.{}.{}",
        got.header("webhook-id"),
        got.header("webhook-timestamp"),
        got.body
    );
    let standard = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(hmac_sha256(&key, signed.as_bytes()))
    );
    assert_eq!(
        got.header("webhook-signature"),
        standard,
        "Standard Webhooks signature"
    );
    let timestamp: i64 = got.header("webhook-timestamp").parse().unwrap();
    assert!((chrono::Utc::now().timestamp() - timestamp).abs() < 60);
}

/// The owner's loop with one reviewer who joined; returns (loop id, reviewer key).
fn loop_with_reviewer(server: &Server) -> (String, String) {
    let created = server.create_loop(&server.admin_key, "Hooks");
    let reviewer = server.key("rev@example.com");
    server.join(&reviewer, &created);
    (id_of(&created["loop"]), reviewer)
}

fn subscribe(server: &Server, url: &str, events: Value) -> Value {
    let reply = server.post(
        &server.admin_key,
        "/v1/api/webhooks",
        json!({"url": url, "events": events}),
    );
    reply.data(201)["webhook"].clone()
}

/// Creates `body` in `loop_id` with a callback to `receiver`'s
/// `/callback`, has `reviewer` answer "approve", and waits for the two
/// deliveries that follow (the callback and one subscription's).
fn answered_with_callback(
    server: &Server,
    receiver: &Receiver,
    loop_id: &str,
    reviewer: &str,
    mut body: Value,
) -> (String, Vec<Received>) {
    body["callback_url"] = json!(receiver.url("/callback"));
    let created = server.post(
        &server.admin_key,
        &format!("/v1/loops/{loop_id}/requests"),
        body,
    );
    let request_id = id_of(&created.data(201)["request"]);
    server
        .post(
            reviewer,
            &format!("/v1/requests/{request_id}/respond"),
            json!({"response_data": "approve", "comment": "Checked the numbers"}),
        )
        .data(200);
    let got = receiver.wait_until(Duration::from_secs(10), |r| r.len() >= 2);
    (request_id, got)
}

fn subscriptions_are_one_resource_in_two_dialects() {
    let server = Server::start_with(&LOCAL);
    let key = server.admin_key.clone();
    let receiver = Receiver::start();

    // Envelope A under /v1/api.
    let created = server.post(
        &key,
        "/v1/api/webhooks",
        json!({"url": receiver.url("/a"), "events": ["request.completed"], "description": "n8n"}),
    );
    let hook = created.data(201)["webhook"].clone();
    assert!(
        hook["secret"].as_str().unwrap().starts_with("whsec_"),
        "the secret is shown at creation"
    );
    assert_eq!(hook["events"], json!(["request.completed"]));
    assert_eq!(
        (hook["active"].as_bool(), hook["description"].as_str()),
        (Some(true), Some("n8n"))
    );
    let id = id_of(&hook);

    // The alternate envelope under /v1: data is the object itself.
    let http = server.http();
    let alt: Value = http
        .get(format!("{}/v1/webhooks/{id}", server.base))
        .bearer_auth(&key)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(alt["success"], true);
    assert_eq!(alt["data"]["id"], id.as_str());
    assert!(
        alt["data"].get("secret").is_none(),
        "the secret is not shown again"
    );
    assert!(alt["meta"]["request_id"].is_string() && alt["meta"]["timestamp"].is_string());
    let created_b: Value = http
        .post(format!("{}/v1/webhooks", server.base))
        .bearer_auth(&key)
        .json(&json!({"url": receiver.url("/b"), "events": ["*"], "secret": "my-own-secret-of-20-chars"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        (
            created_b["success"].as_bool(),
            created_b["data"]["secret"].as_str()
        ),
        (Some(true), Some("my-own-secret-of-20-chars"))
    );
    let listed: Value = http
        .get(format!("{}/v1/webhooks", server.base))
        .bearer_auth(&key)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 2);
    assert_eq!(server.get(&key, "/v1/api/webhooks").data(200)["count"], 2);

    let rotated = server.patch(
        &key,
        &format!("/v1/api/webhooks/{id}"),
        json!({"rotate_secret": true, "active": false, "events": ["*"]}),
    );
    let rotated = &rotated.data(200)["webhook"];
    assert_ne!(rotated["secret"], hook["secret"]);
    assert_eq!(
        (rotated["active"].as_bool(), rotated["events"].clone()),
        (Some(false), json!(["*"]))
    );

    let bad = server.post(
        &key,
        "/v1/api/webhooks",
        json!({"url": receiver.url("/c"), "events": ["request.nope"]}),
    );
    assert!(bad.error(400).starts_with("unknown event 'request.nope'"));
    let bad_alt: Value = http
        .post(format!("{}/v1/webhooks", server.base))
        .bearer_auth(&key)
        .json(&json!({"events": ["*"]}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        (
            bad_alt["success"].as_bool(),
            bad_alt["error"]["code"].as_str()
        ),
        (Some(false), Some("validation_error"))
    );
    assert_eq!(bad_alt["error"]["message"], "url is required");

    let stranger = server.key("stranger@example.com");
    assert_eq!(
        server
            .get(&stranger, &format!("/v1/api/webhooks/{id}"))
            .error(404),
        "Webhook not found"
    );
    assert_eq!(
        server
            .delete(&stranger, &format!("/v1/api/webhooks/{id}"))
            .error(404),
        "Webhook not found"
    );
    assert_eq!(
        server.get(&stranger, "/v1/api/webhooks").data(200)["count"],
        0
    );

    server
        .delete(&key, &format!("/v1/api/webhooks/{id}"))
        .data(200);
    assert_eq!(
        server
            .get(&key, &format!("/v1/api/webhooks/{id}"))
            .error(404),
        "Webhook not found"
    );
}

fn internal_targets_are_refused_unless_the_operator_allows_them() {
    let server = Server::start();
    let key = &server.admin_key;
    let mut urls: Vec<String> = [
        "http://127.0.0.1:9000/hook",
        "http://localhost:9000/hook",
        "http://10.0.0.7/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data",
        // Documentation, discard-only, Teredo and IPv4-translated forms.
        "http://192.0.2.2/hook",
        "http://198.51.100.1/hook",
        "http://203.0.113.5/hook",
        "http://[2001:db8::1]/hook",
        "http://[100::1]/hook",
        "http://[::ffff:0:7f00:1]/hook",
        "http://[2001::1]/hook",
    ]
    .map(str::to_owned)
    .to_vec();
    // Every address of this machine's own interfaces.
    for interface in if_addrs::get_if_addrs().unwrap() {
        urls.push(match interface.ip() {
            std::net::IpAddr::V4(v4) => format!("http://{v4}:9000/hook"),
            std::net::IpAddr::V6(v6) => format!("http://[{v6}]:9000/hook"),
        });
    }
    for url in urls {
        let reply = server.post(
            key,
            "/v1/api/webhooks",
            json!({"url": url, "events": ["*"]}),
        );
        assert!(
            reply.error(400).starts_with("url is not allowed:"),
            "{url}: {}",
            reply.body
        );
    }
    assert_eq!(
        server
            .post(
                key,
                "/v1/api/webhooks",
                json!({"url": "ftp://x.example/", "events": ["*"]})
            )
            .error(400),
        "url must be an http or https URL"
    );
    let loop_id = id_of(&server.create_loop(key, "Guarded")["loop"]);
    let mut body = request_body();
    body["callback_url"] = json!("http://127.0.0.1:9000/cb");
    let reply = server.post(key, &format!("/v1/loops/{loop_id}/requests"), body);
    let said = reply.error(400);
    assert!(said.starts_with("callback_url is not allowed:"), "{said}");
    assert!(
        said.contains("REVIEWLOOP_ALLOW_PRIVATE_TARGETS"),
        "names the setting that allows it: {said}"
    );
}

fn completed_requests_reach_subscribers_and_callbacks_signed() {
    let server = Server::start_with(&LOCAL);
    let receiver = Receiver::start();
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    let hook = subscribe(
        &server,
        &receiver.url("/hook"),
        json!(["request.completed"]),
    );
    let secret = hook["secret"].as_str().unwrap().to_owned();
    // Another account's subscription must never see this account's events.
    let other = server.key("other@example.com");
    let other_receiver = Receiver::start();
    server
        .post(
            &other,
            "/v1/api/webhooks",
            json!({"url": other_receiver.url("/x"), "events": ["*"]}),
        )
        .data(201);

    let (request_id, got) =
        answered_with_callback(&server, &receiver, &loop_id, &reviewer, request_body());
    let hook_call = got
        .iter()
        .find(|r| r.path == "/hook")
        .expect("webhook delivery");
    assert_signed(hook_call, &secret);
    let event = hook_call.json();
    assert_eq!(event["event"], "request.completed");
    assert_eq!(
        hook_call.header("webhook-id"),
        event["id"].as_str().unwrap()
    );
    assert_eq!(event["data"]["request"]["id"], request_id.as_str());
    assert_eq!(event["data"]["request"]["response_data"], "approve");
    assert_eq!(
        event["data"]["request"]["response_comment"],
        "Checked the numbers"
    );
    assert_eq!(event["data"]["loop"]["id"], loop_id.as_str());
    assert_eq!(event["data"]["reviewer"]["email"], "rev@example.com");
    assert!(event["timestamp"].is_string());

    let signing = server.get(&server.admin_key, "/v1/api/account/signing-secret");
    let account_secret = signing.data(200)["signing_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let callback = got
        .iter()
        .find(|r| r.path == "/callback")
        .expect("callback delivery");
    assert_signed(callback, &account_secret);
    assert_eq!(
        callback.json()["id"],
        event["id"],
        "the callback carries the same event"
    );

    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        receiver.received().len(),
        2,
        "request.created was not subscribed to"
    );
    assert!(
        other_receiver.received().is_empty(),
        "no event crossed accounts"
    );

    let deliveries = server.get(
        &server.admin_key,
        &format!("/v1/api/webhooks/{}/deliveries", id_of(&hook)),
    );
    let deliveries = deliveries.data(200)["deliveries"].clone();
    assert_eq!(deliveries[0]["status"], "succeeded");
    assert_eq!(deliveries[0]["attempts"][0]["status_code"], 200);
    assert!(deliveries[0]["attempts"][0]["latency_ms"].is_u64());

    let rotated = server.post(
        &server.admin_key,
        "/v1/api/account/signing-secret/rotate",
        json!({}),
    );
    assert_ne!(
        rotated.data(200)["signing_secret"].as_str().unwrap(),
        account_secret
    );
    let cli = server.cli(&[
        "account",
        "signing-secret",
        "--email",
        "admin@localhost",
        "--json",
    ]);
    assert_eq!(
        cli["signing_secret"],
        rotated.body["data"]["signing_secret"]
    );
}

fn failed_deliveries_are_retried_recorded_and_can_be_redelivered() {
    let server = Server::start_with(&LOCAL);
    let receiver = Receiver::start();
    receiver.answer(&[500, 500]);
    let hook = subscribe(&server, &receiver.url("/flaky"), json!(["request.created"]));
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Flaky")["loop"]);
    server
        .post(
            &server.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            request_body(),
        )
        .data(201);

    let got = receiver.wait_until(Duration::from_secs(15), |r| r.len() >= 3);
    let ids: Vec<&str> = got.iter().map(|r| r.header("webhook-id")).collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "every retry carries the same id: {ids:?}"
    );
    assert!(
        got.iter().all(|r| r.body == got[0].body),
        "and the same body"
    );

    let path = format!("/v1/api/webhooks/{}/deliveries", id_of(&hook));
    let listed = server.get(&server.admin_key, &path);
    let delivery = listed.data(200)["deliveries"][0].clone();
    assert_eq!(delivery["status"], "succeeded");
    let codes: Vec<u64> = delivery["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status_code"].as_u64().unwrap())
        .collect();
    assert_eq!(codes, [500, 500, 200]);
    assert_eq!(
        delivery["attempts"][0]["error"],
        "receiver answered HTTP 500"
    );

    let redeliver = format!(
        "/v1/webhooks/{}/deliveries/{}/redeliver",
        id_of(&hook),
        id_of(&delivery)
    );
    let queued: Value = server
        .http()
        .post(format!("{}{redeliver}", server.base))
        .bearer_auth(&server.admin_key)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(queued["success"], true);
    let again = receiver.wait_until(Duration::from_secs(10), |r| r.len() >= 4);
    assert_eq!(again[3].header("webhook-id"), ids[0]);
    // The redelivery is recorded as attempt 4 and the delivery is done.
    let started = std::time::Instant::now();
    loop {
        let listed = server.get(&server.admin_key, &path);
        let delivery = listed.data(200)["deliveries"][0].clone();
        let attempts = delivery["attempts"].as_array().unwrap().len();
        if delivery["status"] == "succeeded" && attempts == 4 {
            assert_eq!(delivery["attempts"][3]["attempt"], 4);
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{delivery}");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        receiver.received().len(),
        4,
        "nothing is sent again after success"
    );
}

fn a_receiver_that_keeps_failing_ends_with_a_failed_delivery() {
    let server = Server::start_with(&LOCAL);
    let receiver = Receiver::start();
    receiver.answer(&[503, 503, 503, 503]);
    let hook = subscribe(&server, &receiver.url("/down"), json!(["request.created"]));
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Down")["loop"]);
    server
        .post(
            &server.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            request_body(),
        )
        .data(201);
    receiver.wait_until(Duration::from_secs(15), |r| r.len() >= 4);
    let path = format!("/v1/api/webhooks/{}/deliveries", id_of(&hook));
    let started = std::time::Instant::now();
    loop {
        let listed = server.get(&server.admin_key, &path);
        let delivery = listed.data(200)["deliveries"][0].clone();
        if delivery["status"] == "failed" {
            assert_eq!(
                delivery["attempts"].as_array().unwrap().len(),
                4,
                "first try and three retries"
            );
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{delivery}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn every_event_arrives_at_least_once_despite_a_sigkill() {
    let mut server = Server::start_with(&LOCAL);
    let receiver = Receiver::start();
    // The receiver takes 2 s to answer, so when the server is killed it has
    // heard back about none of the deliveries in flight.
    receiver.delay(Duration::from_secs(2));
    subscribe(&server, &receiver.url("/all"), json!(["request.created"]));
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Crash")["loop"]);
    let mut expected = Vec::new();
    for _ in 0..20 {
        let reply = server.post(
            &server.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            request_body(),
        );
        expected.push(id_of(&reply.data(201)["request"]));
    }
    // Kill it while deliveries are in flight.
    receiver.wait_until(Duration::from_secs(10), |r| !r.is_empty());
    server.kill();
    let at_kill = receiver.received().len();
    receiver.delay(Duration::ZERO);
    server.relaunch();

    // Everything arrives, and what was in flight at the kill arrives again:
    // the lease of the dead worker ran out and another attempt was made.
    let got = receiver.wait_until(Duration::from_secs(90), |r| {
        let ids: Vec<String> = r
            .iter()
            .map(|g| {
                g.json()["data"]["request"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        expected
            .iter()
            .all(|e| ids.iter().filter(|i| *i == e).count() >= 1)
            && r.len() >= at_kill + expected.len()
    });
    let counted = |id: &String| {
        got.iter()
            .filter(|g| g.json()["data"]["request"]["id"] == id.as_str())
            .count()
    };
    assert!(
        expected.iter().all(|id| counted(id) >= 1),
        "every event at least once"
    );
}

fn a_slow_receiver_does_not_hold_up_the_others() {
    let server = Server::start_with(&LOCAL);
    let slow = Receiver::start();
    slow.delay(Duration::from_secs(8));
    let fast = Receiver::start();
    subscribe(&server, &slow.url("/slow"), json!(["request.created"]));
    subscribe(&server, &fast.url("/fast"), json!(["request.created"]));
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Mixed")["loop"]);
    for _ in 0..5 {
        server
            .post(
                &server.admin_key,
                &format!("/v1/loops/{loop_id}/requests"),
                request_body(),
            )
            .data(201);
    }
    let started = std::time::Instant::now();
    fast.wait_until(Duration::from_secs(5), |r| r.len() >= 5);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the fast receiver waited {:?}",
        started.elapsed()
    );
    assert!(
        !slow.received().is_empty(),
        "the slow one is being served at the same time"
    );
}

/// Runs an official Standard Webhooks verifier (`python3 verify.py` or
/// `node verify.cjs`) on one delivery; true when the library accepts it.
fn official_verdict(program: &str, script: &str, secret: &str, got: &Received, body: &str) -> bool {
    use std::io::Write;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/signatures");
    let node_modules = std::env::var("REVIEWLOOP_NODE_MODULES").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/ci-node/node_modules"
        )
        .to_owned()
    });
    let headers = json!({
        "webhook-id": got.header("webhook-id"),
        "webhook-timestamp": got.header("webhook-timestamp"),
        "webhook-signature": got.header("webhook-signature"),
    });
    let mut child = std::process::Command::new(program)
        .arg(format!("{dir}/{script}"))
        .env("WEBHOOK_SECRET", secret)
        .env("WEBHOOK_HEADERS", headers.to_string())
        .env("NODE_PATH", &node_modules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} is needed for this test: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !said.contains("ModuleNotFoundError") && !said.contains("Cannot find module"),
        "the official library is not installed: {said}\n\
         install it with: pip install standardwebhooks==1.1.0 && \
         npm install --prefix target/ci-node standardwebhooks@1.1.1"
    );
    out.status.success()
}

/// Our deliveries and callbacks verify with the Standard Webhooks
/// libraries from PyPI and npm, and a changed byte does not.
#[test]
fn signatures_verify_with_the_official_standard_webhooks_libraries() {
    let server = Server::start_with(&LOCAL);
    let receiver = Receiver::start();
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    let hook = subscribe(
        &server,
        &receiver.url("/hook"),
        json!(["request.completed"]),
    );
    let secret = hook["secret"].as_str().unwrap().to_owned();
    let account_secret = server
        .get(&server.admin_key, "/v1/api/account/signing-secret")
        .data(200)["signing_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut body = request_body();
    body["request_text"] = json!("Ünïcode and \"quotes\" survive: ✓");
    let (_, got) = answered_with_callback(&server, &receiver, &loop_id, &reviewer, body);
    for (path, secret) in [("/hook", &secret), ("/callback", &account_secret)] {
        let call = got.iter().find(|r| r.path == path).unwrap();
        for (program, script) in [("python3", "verify.py"), ("node", "verify.cjs")] {
            assert!(
                official_verdict(program, script, secret, call, &call.body),
                "{program} refused the {path} delivery"
            );
            let tampered = call.body.replacen("approve", "reject!", 1);
            assert!(
                !official_verdict(program, script, secret, call, &tampered),
                "{program} accepted a changed body"
            );
        }
    }
}

on_every_backend!(
    subscriptions_are_one_resource_in_two_dialects,
    internal_targets_are_refused_unless_the_operator_allows_them,
    completed_requests_reach_subscribers_and_callbacks_signed,
    failed_deliveries_are_retried_recorded_and_can_be_redelivered,
    a_receiver_that_keeps_failing_ends_with_a_failed_delivery,
    every_event_arrives_at_least_once_despite_a_sigkill,
    a_slow_receiver_does_not_hold_up_the_others,
);
