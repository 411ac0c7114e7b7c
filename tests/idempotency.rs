//! Black-box: `Idempotency-Key` on create-loop and create-request, so that
//! an automation's retry never creates a second loop or request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{id_of, request_body, Server};
use reqwest::blocking::Response;
use serde_json::{json, Value};

fn post_with_key(
    server: &Server,
    api_key: &str,
    path: &str,
    idempotency_key: &str,
    body: &Value,
) -> (u16, Option<String>, Value) {
    let response: Response = server
        .http()
        .post(format!("{}{path}", server.base))
        .bearer_auth(api_key)
        .header("Idempotency-Key", idempotency_key)
        .json(body)
        .send()
        .unwrap();
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, replayed, response.json().unwrap())
}

fn request_total(server: &Server) -> u64 {
    server.get(&server.admin_key, "/v1/requests").data(200)["total"]
        .as_u64()
        .unwrap()
}

fn a_retried_create_answers_the_first_response_and_creates_nothing_new() {
    let mut server = Server::start();
    let key = server.admin_key.clone();
    let loop_id = id_of(&server.create_loop(&key, "Retries")["loop"]);
    let path = format!("/v1/api/loops/{loop_id}/requests");

    let (status, replayed, first) =
        post_with_key(&server, &key, &path, "n8n-run-1", &request_body());
    assert_eq!((status, replayed), (201, None));
    // The same body, sent as other text (keys reversed, spread over lines),
    // is the same body.
    let object = request_body();
    let entries: Vec<String> = object
        .as_object()
        .unwrap()
        .iter()
        .rev()
        .map(|(k, v)| format!("{k:?} :  {v}"))
        .collect();
    let text = format!("{{\n  {}\n}}", entries.join(",\n  "));
    assert_ne!(text, object.to_string());
    let response = server
        .http()
        .post(format!(
            "{}{}",
            server.base,
            path.replacen("/v1/api/", "/v1/", 1)
        ))
        .bearer_auth(&key)
        .header("Idempotency-Key", "n8n-run-1")
        .header("Content-Type", "application/json")
        .body(text)
        .send()
        .unwrap();
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    let again: Value = response.json().unwrap();
    assert_eq!((status, replayed.as_deref()), (201, Some("true")));
    assert_eq!(again, first, "the very same answer, in either path form");
    assert_eq!(request_total(&server), 1);

    let mut changed = request_body();
    changed["priority"] = json!("low");
    let (status, _, body) = post_with_key(&server, &key, &path, "n8n-run-1", &changed);
    assert_eq!(
        (status, body["msg"].as_str()),
        (422, Some("Idempotency key reused with a different body"))
    );

    // Kept in the database: a restart does not forget it.
    server.restart();
    let (status, replayed, after_restart) =
        post_with_key(&server, &key, &path, "n8n-run-1", &request_body());
    assert_eq!((status, replayed.as_deref()), (201, Some("true")));
    assert_eq!(after_restart, first);
    assert_eq!(request_total(&server), 1);

    let (status, _, second) = post_with_key(&server, &key, &path, "n8n-run-2", &request_body());
    assert_eq!(status, 201);
    assert_ne!(
        second["data"]["request"]["id"],
        first["data"]["request"]["id"]
    );
}

fn keys_belong_to_one_api_key_and_failures_are_replayed_too() {
    let server = Server::start();
    let owner = server.admin_key.clone();
    let other = server.key("other@example.com");
    let (status, _, mine) = post_with_key(
        &server,
        &owner,
        "/v1/loops",
        "same-key",
        &json!({"name": "Mine"}),
    );
    assert_eq!(status, 201);
    let (status, replayed, theirs) = post_with_key(
        &server,
        &other,
        "/v1/loops",
        "same-key",
        &json!({"name": "Mine"}),
    );
    assert_eq!(
        (status, replayed),
        (201, None),
        "another API key's idempotency key is its own"
    );
    assert_ne!(mine["data"]["loop"]["id"], theirs["data"]["loop"]["id"]);

    let (status, _, invalid) = post_with_key(
        &server,
        &owner,
        "/v1/loops",
        "bad-body",
        &json!({"name": ""}),
    );
    assert_eq!(status, 400);
    let (status, replayed, again) = post_with_key(
        &server,
        &owner,
        "/v1/loops",
        "bad-body",
        &json!({"name": ""}),
    );
    assert_eq!((status, replayed.as_deref()), (400, Some("true")));
    assert_eq!(again, invalid);

    let (status, _, body) = post_with_key(
        &server,
        &owner,
        "/v1/loops",
        &"k".repeat(256),
        &json!({"name": "x"}),
    );
    assert_eq!(
        (status, body["msg"].as_str()),
        (400, Some("Idempotency-Key must be 1 to 255 characters"))
    );
}

fn a_burst_of_identical_retries_creates_exactly_one_request() {
    let server = Server::start();
    let key = server.admin_key.clone();
    let loop_id = id_of(&server.create_loop(&key, "Burst")["loop"]);
    let path = format!("/v1/loops/{loop_id}/requests");
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (server, key, path) = (&server, &key, &path);
                scope.spawn(move || {
                    let (status, _, body) =
                        post_with_key(server, key, path, "burst", &request_body());
                    (status, body)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let created: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 201)
        .map(|(_, b)| &b["data"]["request"]["id"])
        .collect();
    assert!(!created.is_empty());
    assert!(
        created.iter().all(|id| *id == created[0]),
        "every 201 names the same request"
    );
    for (status, body) in &answers {
        assert!(*status == 201 || *status == 409, "{status}: {body}");
    }
    assert_eq!(request_total(&server), 1);
}

/// Puts the database in the state a crash leaves behind: the request was
/// created, but the process died before recording the outcome.
fn forget_outcome_as_if_the_process_died(server: &Server, key: &str) {
    forget_outcome_as_if_the_process_died_ago(server, key, 120);
}

/// As above, the process having died `seconds` ago.
fn forget_outcome_as_if_the_process_died_ago(server: &Server, key: &str, seconds: u32) {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let rewind = |ago: &str| {
        format!(
            "UPDATE idempotency_keys
                SET state = 'running', response_status = NULL, response_body = NULL, locked_at = {ago}
              WHERE idempotency_key = '{key}';"
        )
    };
    if let Some(path) = server.db_url.strip_prefix("sqlite://") {
        let mut conn = diesel::SqliteConnection::establish(path).unwrap();
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = 5000; {}",
            rewind(&format!("datetime('now', '-{seconds} seconds')"))
        ))
        .unwrap();
    } else {
        let mut conn = diesel::PgConnection::establish(&server.db_url).unwrap();
        conn.batch_execute(&rewind(&format!(
            "(now() AT TIME ZONE 'UTC') - interval '{seconds} seconds'"
        )))
        .unwrap();
    }
}

fn a_retry_after_a_crash_finds_the_request_the_dead_attempt_created() {
    let server = Server::start();
    let key = server.admin_key.clone();
    let loop_id = id_of(&server.create_loop(&key, "Crashes")["loop"]);
    let path = format!("/v1/loops/{loop_id}/requests");
    let (status, _, first) = post_with_key(&server, &key, &path, "zap-42", &request_body());
    assert_eq!(status, 201);

    forget_outcome_as_if_the_process_died(&server, "zap-42");
    let (status, replayed, retried) =
        post_with_key(&server, &key, &path, "zap-42", &request_body());
    assert_eq!((status, replayed), (201, None), "the call ran again ...");
    assert_eq!(
        retried["data"]["request"]["id"], first["data"]["request"]["id"],
        "... and found the first request"
    );
    assert_eq!(request_total(&server), 1, "no second request");

    let (status, replayed, _) = post_with_key(&server, &key, &path, "zap-42", &request_body());
    assert_eq!(
        (status, replayed.as_deref()),
        (201, Some("true")),
        "and recorded it this time"
    );

    let (status, _, loop_first) = post_with_key(
        &server,
        &key,
        "/v1/loops",
        "loop-7",
        &json!({"name": "Once"}),
    );
    assert_eq!(status, 201);
    forget_outcome_as_if_the_process_died(&server, "loop-7");
    let (status, _, loop_again) = post_with_key(
        &server,
        &key,
        "/v1/loops",
        "loop-7",
        &json!({"name": "Once"}),
    );
    assert_eq!(status, 201);
    assert_eq!(
        loop_again["data"]["loop"]["id"],
        loop_first["data"]["loop"]["id"]
    );
    assert_eq!(
        loop_again["data"]["invite_code"],
        loop_first["data"]["invite_code"]
    );
}

/// Just after a crash, a retry is told to come back (409 with
/// `Retry-After`), and within seconds a retry takes the call over.
fn a_retry_just_after_a_crash_is_told_when_and_then_taken_over() {
    let server = Server::start();
    let key = server.admin_key.clone();
    let loop_id = id_of(&server.create_loop(&key, "Crashes")["loop"]);
    let path = format!("/v1/loops/{loop_id}/requests");
    let (status, _, first) = post_with_key(&server, &key, &path, "zap-7", &request_body());
    assert_eq!(status, 201);
    forget_outcome_as_if_the_process_died_ago(&server, "zap-7", 0);
    let started = std::time::Instant::now();
    let retry = || {
        server
            .http()
            .post(format!("{}{path}", server.base))
            .bearer_auth(&key)
            .header("Idempotency-Key", "zap-7")
            .json(&request_body())
            .send()
            .unwrap()
    };
    let busy = retry();
    assert_eq!(busy.status(), 409);
    let wait: u64 = busy.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=5).contains(&wait), "{wait}");
    let finished = loop {
        std::thread::sleep(std::time::Duration::from_secs(wait));
        let answer = retry();
        if answer.status() != 409 {
            break answer;
        }
        assert!(started.elapsed().as_secs() < 20, "never taken over");
    };
    assert_eq!(finished.status(), 201);
    assert!(started.elapsed().as_secs() <= 15, "{:?}", started.elapsed());
    let body: Value = finished.json().unwrap();
    assert_eq!(
        body["data"]["request"]["id"],
        first["data"]["request"]["id"]
    );
    assert_eq!(request_total(&server), 1);
}

on_every_backend!(
    a_retry_just_after_a_crash_is_told_when_and_then_taken_over,
    a_retried_create_answers_the_first_response_and_creates_nothing_new,
    keys_belong_to_one_api_key_and_failures_are_replayed_too,
    a_burst_of_identical_retries_creates_exactly_one_request,
    a_retry_after_a_crash_finds_the_request_the_dead_attempt_created,
);
