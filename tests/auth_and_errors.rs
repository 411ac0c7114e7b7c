//! Black-box: keys, permissions, rate limits, the error envelope, the CLI,
//! bootstrap and shutdown, against the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Server, PREFIXES};
use reqwest::Method;
use serde_json::json;

fn the_key_check_answers_in_every_form() {
    let server = Server::start();
    for path in ["/v1/test", "/v1/api/test"] {
        let reply = server.get(&server.admin_key, path);
        let data = reply.data(200);
        assert_eq!(data["email"], "admin@localhost");
        assert_eq!(data["account_status"], "active");
        assert_eq!(
            data["permissions"],
            json!([
                "loops:read",
                "loops:write",
                "requests:read",
                "requests:write"
            ])
        );
        assert_eq!(data["rate_limit"]["limit"], 100);
        assert!(data["api_key_id"].as_str().unwrap().len() == 24);
        assert!(data["user_id"].as_str().unwrap().len() == 24);
        assert!(data["rate_limit"]["reset_at"]
            .as_str()
            .unwrap()
            .ends_with('Z'));
        assert_eq!(reply.header("x-ratelimit-limit"), Some("100"));
        assert!(reply.header("x-request-id").is_some());
    }
}

fn missing_malformed_unknown_and_revoked_keys_get_401() {
    let server = Server::start();
    let created = server.cli(&["key", "create", "--email", "ops@example.com", "--json"]);
    let key = created["api_key"].as_str().unwrap();
    assert_eq!(server.get(key, "/v1/test").status, 200);

    for prefix in PREFIXES {
        let no_key = server.call(Method::GET, None, &format!("{prefix}/loops"), None);
        assert!(no_key.error(401).starts_with("Missing API key"));
        let wrong = server.get("rl_not_a_real_key", &format!("{prefix}/loops"));
        assert_eq!(wrong.error(401), "Invalid or revoked API key");
        assert!(wrong.header("x-ratelimit-limit").is_none());
    }

    let revoked = server.cli(&[
        "key",
        "revoke",
        created["api_key_id"].as_str().unwrap(),
        "--json",
    ]);
    assert!(revoked["revoked_at"].is_string());
    // The CLI is another process: the server believes the key it saw less
    // than a second ago until then (at most 2 s, as documented).
    let revoked_at = std::time::Instant::now();
    while server.get(key, "/v1/test").status == 200 {
        assert!(revoked_at.elapsed() < std::time::Duration::from_secs(2));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        server.get(key, "/v1/test").error(401),
        "Invalid or revoked API key"
    );
}

fn keys_without_a_permission_get_403_naming_it() {
    let server = Server::start();
    let reader = server.key_with("reader@example.com", &["--permissions", "loops:read"]);
    for prefix in PREFIXES {
        let reply = server.post(&reader, &format!("{prefix}/loops"), json!({"name": "x"}));
        assert_eq!(
            reply.error(403),
            "Insufficient permissions: requires loops:write"
        );
        let reply = server.get(&reader, &format!("{prefix}/requests"));
        assert_eq!(
            reply.error(403),
            "Insufficient permissions: requires requests:read"
        );
        assert_eq!(server.get(&reader, &format!("{prefix}/loops")).status, 200);
    }
    let test = server.get(&reader, "/v1/test");
    assert_eq!(test.data(200)["permissions"], json!(["loops:read"]));
}

fn each_key_has_its_own_hourly_limit_and_429_says_when_to_retry() {
    // Windows end on the hour; keep the test inside one window.
    let into_hour = chrono::Utc::now().timestamp() % 3600;
    if into_hour > 3590 {
        std::thread::sleep(std::time::Duration::from_secs((3601 - into_hour) as u64));
    }
    let server = Server::start();
    let key = server.key_with("busy@example.com", &["--rate-limit", "3"]);
    let other = server.key_with("calm@example.com", &["--rate-limit", "3"]);
    let paths = ["/v1/test", "/v1/api/loops", "/v1/loops"];
    let remaining: Vec<_> = paths
        .iter()
        .map(|path| {
            let reply = server.get(&key, path);
            assert_eq!(reply.status, 200);
            reply.header("x-ratelimit-remaining").unwrap().to_owned()
        })
        .collect();
    assert_eq!(remaining, ["2", "1", "0"]);

    let refused = server.get(&key, "/v1/api/loops");
    assert_eq!(refused.error(429), "Rate limit exceeded");
    let usage = &refused.body["data"];
    assert_eq!(
        (
            &usage["usage_count"],
            &usage["usage_limit"],
            &usage["remaining"]
        ),
        (&json!(3), &json!(3), &json!(0)),
        "where the key stands, as HITL.sh's clients read it"
    );
    assert!(usage["reset_at"].is_string());
    assert_eq!(refused.header("x-ratelimit-limit"), Some("3"));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry));
    let reset: i64 = refused
        .header("x-ratelimit-reset")
        .unwrap()
        .parse()
        .unwrap();
    let now = chrono::Utc::now().timestamp();
    assert_eq!(
        reset % 3600,
        1,
        "the hour's calls weigh fully at the turn of the hour, so one more is admitted a second after it"
    );
    assert!(
        (reset - now - retry as i64).abs() <= 1,
        "Retry-After agrees with X-RateLimit-Reset"
    );

    assert_eq!(
        server.get(&other, "/v1/test").status,
        200,
        "another key is not affected"
    );
}

fn framework_failures_come_out_in_the_envelope() {
    let server = Server::start();
    let key = &server.admin_key;
    assert_eq!(
        server.get(key, "/v1/api/nothing-here").error(404),
        "Not found"
    );
    assert_eq!(
        server.get(key, "/v1/api/loops/not-an-id").error(400),
        "Invalid ID format"
    );
    assert_eq!(
        server
            .get(key, "/v1/requests/zzzzzzzzzzzzzzzzzzzzzzzz")
            .error(400),
        "Invalid ID format"
    );
    let wrong_method = server.call(Method::PATCH, Some(key), "/v1/api/loops", None);
    assert_eq!(wrong_method.error(405), "Method not allowed");

    let http = server.http();
    let url = format!("{}/v1/api/loops", server.base);
    let send = |request: reqwest::blocking::RequestBuilder| {
        let response = request.bearer_auth(key).send().unwrap();
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().unwrap();
        assert_eq!(body["error"], true, "{body}");
        (status, body["msg"].as_str().unwrap().to_owned())
    };
    let (status, msg) = send(
        http.post(&url)
            .header("content-type", "application/json")
            .body("{\"name\": "),
    );
    assert_eq!(status, 400);
    assert!(msg.starts_with("Malformed JSON"), "{msg}");
    let (status, msg) = send(
        http.post(&url)
            .header("content-type", "text/plain")
            .body("name"),
    );
    assert_eq!(
        (status, msg.as_str()),
        (400, "Content-Type must be application/json")
    );
    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(1024 * 1024 + 1));
    let (status, msg) = send(
        http.post(&url)
            .header("content-type", "application/json")
            .body(big),
    );
    assert_eq!(status, 413);
    assert!(msg.starts_with("Request body too large"), "{msg}");
    let (status, msg) = send(http.post(&url).json(&json!(["not", "an", "object"])));
    assert_eq!(status, 400);
    assert!(msg.starts_with("Invalid request body"), "{msg}");

    let bad_id = server.get(key, "/v1/reviews/abc");
    assert_eq!(bad_id.status, 400);
    assert_eq!(bad_id.body["error"]["message"], "Invalid ID format");
    let alternate = server.get(key, "/v1/reviews/abc/nope");
    assert_eq!(alternate.status, 404);
    assert_eq!(alternate.body["success"], false);
    assert_eq!(alternate.body["error"]["code"], "not_found");
    assert!(alternate.body["meta"]["request_id"].is_string());
}

fn the_cli_administers_accounts_and_keys_in_json() {
    let server = Server::start();
    let user = server.cli(&["user", "create", "--email", "Ann@Example.com", "--json"]);
    assert_eq!(user["email"], "ann@example.com");
    assert_eq!(user["user_id"].as_str().unwrap().len(), 24);
    let again = server.cli_raw(&["user", "create", "--email", "ann@example.com", "--json"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    let key = server.cli(&[
        "key",
        "create",
        "--email",
        "ann@example.com",
        "--permissions",
        "requests:read,loops:read",
        "--rate-limit",
        "500",
        "--name",
        "n8n",
        "--json",
    ]);
    assert_eq!(
        key["user_id"], user["user_id"],
        "the existing account gets the key"
    );
    assert_eq!(key["permissions"], json!(["loops:read", "requests:read"]));
    assert_eq!(key["rate_limit"], 500);
    assert!(key["api_key"].as_str().unwrap().starts_with("rl_"));

    let listed = server.cli(&["key", "list", "--email", "ann@example.com", "--json"]);
    let keys = listed["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["api_key_id"], key["api_key_id"]);
    assert_eq!(keys[0]["name"], "n8n");
    assert!(
        keys[0].get("api_key").is_none(),
        "a listed key never shows its secret"
    );

    let fresh = server.cli(&["key", "create", "--email", "new@example.com", "--json"]);
    assert_eq!(fresh["permissions"].as_array().unwrap().len(), 4);
    assert_eq!(fresh["rate_limit"], 100);

    for bad in [
        vec![
            "key",
            "create",
            "--email",
            "x@example.com",
            "--permissions",
            "admin",
        ],
        vec!["key", "create", "--email", "not-an-email"],
        vec!["key", "revoke", "0123456789abcdef01234567"],
        vec!["key", "list", "--email", "nobody@example.com"],
    ] {
        assert!(!server.cli_raw(&bad).status.success(), "{bad:?}");
    }
    let migrate = server.cli_raw(&["migrate"]);
    assert!(migrate.status.success());
    assert!(String::from_utf8_lossy(&migrate.stdout).contains("up to date"));
}

fn the_bootstrap_key_is_printed_only_on_the_first_start() {
    let mut server = Server::start();
    assert!(server.admin_key.starts_with("rl_"));
    server.restart();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let lines = server.stderr.lock().unwrap().clone();
    assert!(
        !lines.iter().any(|l| l.contains("bootstrap API key")),
        "{lines:?}"
    );
    assert_eq!(
        server.get(&server.admin_key, "/v1/test").status,
        200,
        "the first key still works"
    );
}

/// SIGTERM: `/ready` says 503 at once, calls are still served through
/// the drain, a long-poll answers with the request as it is, and the
/// process exits 0.
fn sigterm_stops_the_server_cleanly() {
    let server = Server::start_with(&[("REVIEWLOOP_SHUTDOWN_DRAIN", "4")]);
    let key = server.admin_key.clone();
    assert_eq!(server.get(&key, "/v1/test").status, 200);
    let loop_id = common::id_of(&server.create_loop(&key, "Stopping")["loop"]);
    let id = server.create_request(&key, &loop_id);
    let poll = {
        let (url, key) = (
            format!("{}/v1/api/requests/{id}?wait=60", server.base),
            key.clone(),
        );
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let reply = reqwest::blocking::Client::new()
                .get(url)
                .bearer_auth(key)
                .send()
                .unwrap();
            let status = reply.status().as_u16();
            let body: serde_json::Value = reply.json().unwrap();
            (status, body, started.elapsed())
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let ready = |s: &Server| {
        s.http()
            .get(format!("{}/ready", s.base))
            .send()
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    };
    assert_eq!(ready(&server), 200);
    let pid = server.pid().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(ready(&server), 503, "not ready at once");
    assert_eq!(
        server.get(&key, "/v1/test").status,
        200,
        "still serving during the drain"
    );
    let (status, body, waited) = poll.join().unwrap();
    assert_eq!(status, 200);
    assert_eq!(body["data"]["request"]["status"], "pending", "as it is");
    assert!(
        waited.as_secs() < 5,
        "answered at the stop, not at 60 s: {waited:?}"
    );
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
}

on_every_backend!(
    the_key_check_answers_in_every_form,
    missing_malformed_unknown_and_revoked_keys_get_401,
    keys_without_a_permission_get_403_naming_it,
    each_key_has_its_own_hourly_limit_and_429_says_when_to_retry,
    framework_failures_come_out_in_the_envelope,
    the_cli_administers_accounts_and_keys_in_json,
    the_bootstrap_key_is_printed_only_on_the_first_start,
    sigterm_stops_the_server_cleanly,
);
