//! Black-box: a test-mode key's requests are answered by their
//! `test_response` on the account's own clock, which a workflow moves ahead
//! to try its timeout branch at once; test data and live data never meet
//! (reads, lists, inboxes, webhooks, the audit log).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::{id_of, request_body, Server};
use serde_json::{json, Value};

const LOCAL: [(&str, &str); 1] = [("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true")];

fn with_test(mut body: Value, response: Value, delay: Option<i64>) -> Value {
    body["test_response"] = response;
    if let Some(delay) = delay {
        body["test_delay_seconds"] = json!(delay);
    }
    body
}

fn a_workflow_tries_both_branches_in_milliseconds() {
    let s = Server::start_with(&LOCAL);
    let created = s.create_loop(&s.admin_key, "Payouts");
    let loop_id = id_of(&created["loop"]);
    let reviewer = s.key("reviewer@example.com");
    s.join(&reviewer, &created);
    let test_key = s.key_with("admin@localhost", &["--test"]);
    let made = s.cli(&["key", "list", "--email", "admin@localhost", "--json"]);
    assert!(made.to_string().contains("\"test\":true"), "{made}");
    assert_eq!(s.get(&test_key, "/v1/test").data(200)["test"], true);
    assert_eq!(s.get(&s.admin_key, "/v1/test").data(200)["test"], false);
    let path = format!("/v1/loops/{loop_id}/requests");

    // Webhooks of each mode receive their own mode's events only.
    let receiver = Receiver::start();
    s.post(
        &s.admin_key,
        "/v1/api/webhooks",
        json!({"url": receiver.url("/live"), "events": ["*"]}),
    )
    .data(201);
    s.post(
        &test_key,
        "/v1/api/webhooks",
        json!({"url": receiver.url("/test"), "events": ["*"]}),
    )
    .data(201);
    assert_eq!(
        s.get(&s.admin_key, "/v1/api/webhooks").data(200)["count"],
        1
    );
    assert_eq!(s.get(&test_key, "/v1/api/webhooks").data(200)["count"], 1);

    // A live key cannot ask for automatic answers.
    let refused = s.post(
        &s.admin_key,
        &path,
        with_test(request_body(), json!("approve"), None),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body["msg"],
        "test_response and test_delay_seconds are for test-mode keys (reviewloop key create --test)"
    );
    // Bad test answers are named.
    let bad = s.post(
        &test_key,
        &path,
        with_test(request_body(), json!("maybe"), Some(3600)),
    );
    assert_eq!(bad.status, 400);
    assert!(
        bad.body["msg"].as_str().unwrap().contains("test_response")
            && bad.body["msg"]
                .as_str()
                .unwrap()
                .contains("test_delay_seconds"),
        "{}",
        bad.body
    );

    // The approve branch: answered as it is made, by nobody.
    let approved = s
        .post(
            &test_key,
            &path,
            with_test(request_body(), json!("approve"), None),
        )
        .data(201)["request"]
        .clone();
    assert_eq!(approved["status"], "completed");
    assert_eq!(approved["response_data"], "approve");
    assert_eq!(approved["response_by"], Value::Null);
    assert_eq!(approved["test"], true);
    assert_eq!(approved["broadcasted_to"], json!([]));
    assert_eq!(
        approved["receipt"],
        Value::Null,
        "test decisions are not signed"
    );
    let approved_id = id_of(&approved);

    // A delayed answer comes when the test clock gets there.
    let delayed = id_of(
        &s.post(
            &test_key,
            &path,
            with_test(request_body(), json!("reject"), Some(600)),
        )
        .data(201)["request"],
    );
    let clock = s
        .post(
            &test_key,
            "/v1/api/test/clock",
            json!({"advance_seconds": 599}),
        )
        .data(200)
        .clone();
    assert_eq!(clock["answered"], 0);
    assert_eq!(clock["offset_seconds"], 599);
    let clock = s
        .post(&test_key, "/v1/test/clock", json!({"advance_seconds": 1}))
        .data(200)
        .clone();
    assert_eq!(clock["answered"], 1);
    assert_eq!(clock["offset_seconds"], 600);
    let answered = s
        .get(&test_key, &format!("/v1/api/requests/{delayed}"))
        .data(200)["request"]
        .clone();
    assert_eq!(answered["status"], "completed");
    assert_eq!(answered["response_data"], "reject");

    // Without a move of the clock, a delay passes as time does.
    let soon = id_of(
        &s.post(
            &test_key,
            &path,
            with_test(request_body(), json!("approve"), Some(1)),
        )
        .data(201)["request"],
    );
    let started = Instant::now();
    loop {
        let r = s
            .get(&test_key, &format!("/v1/api/requests/{soon}"))
            .data(200)["request"]
            .clone();
        if r["status"] == "completed" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{r}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // The timeout branch: an hour passes in one call; a waiting long-poll
    // hears it at once.
    let waiting = id_of(&s.post(&test_key, &path, request_body()).data(201)["request"]);
    let started = Instant::now();
    let timed_out = std::thread::scope(|scope| {
        let poll = scope.spawn(|| {
            s.get(&test_key, &format!("/v1/api/requests/{waiting}?wait=20"))
                .data(200)["request"]
                .clone()
        });
        std::thread::sleep(Duration::from_millis(300));
        let clock = s
            .post(
                &test_key,
                "/v1/api/test/clock",
                json!({"advance_seconds": 3600}),
            )
            .data(200)
            .clone();
        assert_eq!(clock["timed_out"], 1);
        poll.join().unwrap()
    });
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(timed_out["status"], "timeout");
    assert_eq!(timed_out["response_data"], "reject", "the default answer");
    let now = s.get(&test_key, "/v1/api/test/clock").data(200)["now"].clone();
    assert!(now.as_str().unwrap() > approved["created_at"].as_str().unwrap());

    // The clock is test mode's; it moves forward only.
    let live = s.post(
        &s.admin_key,
        "/v1/api/test/clock",
        json!({"advance_seconds": 5}),
    );
    assert_eq!(live.status, 403);
    let zero = s.post(
        &test_key,
        "/v1/api/test/clock",
        json!({"advance_seconds": 0}),
    );
    assert_eq!(
        zero.body["msg"],
        "advance_seconds must be a whole number of seconds from 1 to 31536000"
    );

    // Live keys never see test data, and test keys never see live data.
    let live_request = s.create_request(&s.admin_key, &loop_id);
    assert_eq!(
        s.get(&s.admin_key, &format!("/v1/api/requests/{approved_id}"))
            .status,
        404
    );
    assert_eq!(
        s.delete(&s.admin_key, &format!("/v1/api/requests/{waiting}"))
            .status,
        404
    );
    assert_eq!(
        s.get(&test_key, &format!("/v1/api/requests/{live_request}"))
            .status,
        404
    );
    let live_list = s.get(&s.admin_key, "/v1/api/requests").data(200).clone();
    assert_eq!(live_list["count"], 1, "{live_list}");
    let test_list = s.get(&test_key, "/v1/api/requests").data(200).clone();
    assert_eq!(test_list["count"], 4, "{test_list}");
    let inbox = s.get(&reviewer, "/v1/api/inbox").data(200).clone();
    assert_eq!(inbox["count"], 1, "the reviewer sees the live request only");
    let audit = s
        .get(&s.admin_key, "/v1/api/audit?limit=1000")
        .data(200)
        .clone();
    let test_ids = [approved_id.as_str(), delayed.as_str(), waiting.as_str()];
    assert!(
        !audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| test_ids.contains(&e["request_id"].as_str().unwrap_or(""))),
        "test data stays out of the audit log"
    );
    let reviews = s.get(&test_key, "/v1/reviews");
    assert_eq!(reviews.status, 403);
    // The admin's own inbox holds the live request; its test key's is empty.
    assert_eq!(s.get(&s.admin_key, "/v1/api/inbox").data(200)["count"], 1);
    assert_eq!(s.get(&test_key, "/v1/api/inbox").data(200)["count"], 0);
    // A test key changes nothing live and reads no live log.
    for (method, path, body) in [
        (
            "DELETE",
            format!("/v1/api/loops/{loop_id}?force=true"),
            Value::Null,
        ),
        (
            "PUT",
            format!("/v1/api/loops/{loop_id}"),
            json!({"name": "Renamed"}),
        ),
        (
            "POST",
            format!("/v1/api/loops/{loop_id}/invite-code"),
            json!({}),
        ),
        (
            "POST",
            "/v1/api/account/signing-secret/rotate".to_owned(),
            json!({}),
        ),
        ("GET", "/v1/api/audit".to_owned(), Value::Null),
    ] {
        let reply = match method {
            "DELETE" => s.delete(&test_key, &path),
            "PUT" => s.put(&test_key, &path, body),
            "POST" => s.post(&test_key, &path, body),
            _ => s.get(&test_key, &path),
        };
        assert_eq!(reply.status, 403, "{method} {path}: {}", reply.body);
    }
    assert_eq!(
        s.get(&s.admin_key, &format!("/v1/api/requests/{live_request}"))
            .data(200)["request"]["status"],
        "pending",
        "the live request was not cancelled"
    );

    // Webhooks: the test subscription got the test events, the live one
    // the live request's creation only.
    let got = receiver.wait_until(Duration::from_secs(15), |got| {
        got.iter().filter(|r| r.path == "/test").count() >= 8
            && got.iter().any(|r| r.path == "/live")
    });
    std::thread::sleep(Duration::from_millis(1500));
    let got = receiver
        .received()
        .into_iter()
        .chain(got)
        .collect::<Vec<_>>();
    let live_got: Vec<_> = got.iter().filter(|r| r.path == "/live").collect();
    assert!(live_got
        .iter()
        .any(|r| r.json()["data"]["request"]["id"] == live_request.as_str()));
    for r in live_got {
        assert_ne!(r.json()["data"]["request"]["test"], true, "{}", r.body);
    }
    for r in got.iter().filter(|r| r.path == "/test") {
        assert_eq!(r.json()["data"]["request"]["test"], true, "{}", r.body);
    }
}

on_every_backend!(a_workflow_tries_both_branches_in_milliseconds);
