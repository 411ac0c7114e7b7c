//! Black-box: what a hostile or careless client sends, on both backends:
//! control characters in every text field, what reviewers may see of a
//! requester's data, removed members, slow bodies and forged addresses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{id_of, request_body, Server};
use serde_json::json;

const NUL: &str = "a\u{0}b";

/// Text read as a line or as prose refuses a NUL with a 400 that names the
/// field; free-form JSON keeps it exactly, on both backends.
fn a_nul_character_is_refused_in_text_and_kept_in_json() {
    let server = Server::start();
    let key = &server.admin_key;
    for (field, body) in [
        ("name", json!({"name": NUL})),
        ("description", json!({"name": "ok", "description": NUL})),
        ("icon", json!({"name": "ok", "icon": NUL})),
    ] {
        let reply = server.post(key, "/v1/api/loops", body);
        assert_eq!(reply.status, 400, "{field}: {}", reply.body);
        assert!(
            reply.error(400).contains(field),
            "{field}: {}",
            reply.body["msg"]
        );
    }
    let created = server.create_loop(key, "Moderation");
    let loop_id = id_of(&created["loop"]);
    let put = server.put(
        key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({"description": NUL}),
    );
    assert!(put.error(400).contains("description"));
    let invite = server.post(
        key,
        &format!("/v1/api/loops/{loop_id}/members"),
        json!({"email": "a\u{0}@example.com"}),
    );
    assert!(invite.error(400).contains("email"));
    let hook = server.post(
        key,
        "/v1/api/webhooks",
        json!({"url": "https://hooks.example.com/x", "events": ["*"], "description": NUL}),
    );
    assert_eq!(hook.status, 400, "{}", hook.body);

    let requests = format!("/v1/api/loops/{loop_id}/requests");
    for (field, value) in [
        ("request_text", json!(NUL)),
        ("platform_version", json!(NUL)),
        ("response_config", json!({"options": ["approve", NUL]})),
    ] {
        let mut body = request_body();
        body[field] = value;
        let reply = server.post(key, &requests, body);
        assert!(reply.error(400).contains(field), "{}", reply.body);
    }

    // Free-form JSON: keys and values with NUL and other control characters.
    let context = json!({"k\u{0}ey": "v\u{0}al\u{1b}", "nested": ["\u{0}"]});
    let metadata = json!({"trace\u{0}": "x\u{0}y"});
    let mut body = request_body();
    body["response_type"] = json!("text");
    body["response_config"] = json!({});
    body["default_response"] = json!(NUL);
    body["context"] = context.clone();
    body["metadata"] = metadata.clone();
    let created = server.post(key, &requests, body);
    let request = created.data(201)["request"].clone();
    let id = id_of(&request);
    let path = format!("/v1/api/requests/{id}");
    let read = server.get(key, &path).data(200)["request"].clone();
    assert_eq!(read["context"], context);
    assert_eq!(read["metadata"], metadata);
    assert_eq!(read["default_response"], json!(NUL));

    let patched = server.patch(key, &path, json!({"request_text": NUL}));
    assert!(patched.error(400).contains("request_text"));
    let patched = server.patch(key, &path, json!({"context": {"\u{0}": "\u{0}"}}));
    assert_eq!(
        patched.data(200)["request"]["context"],
        json!({"\u{0}": "\u{0}"})
    );

    let answer = "line one\u{0}\nline two";
    let responded = server.post(
        key,
        &format!("{path}/respond"),
        json!({"response_data": answer}),
    );
    assert_eq!(responded.data(200)["request"]["response_data"], answer);
    assert_eq!(
        server.get(key, &path).data(200)["request"]["response_data"],
        answer
    );
    let feedback = server.post(
        key,
        &format!("{path}/feedback"),
        json!({"rating": 4, "comment": NUL}),
    );
    assert!(feedback.error(400).contains("comment"));
    let feedback = server.post(
        key,
        &format!("{path}/feedback"),
        json!({"rating": 4, "comment": "fine\nthanks"}),
    );
    assert_eq!(feedback.data(200)["feedback"]["comment"], "fine\nthanks");
}

/// A loop of the admin with two reviewers, and one request in it that
/// carries a callback URL with a token and the requester's metadata.
fn loop_with_two_reviewers(server: &Server) -> (String, String, String, String) {
    let created = server.create_loop(&server.admin_key, "Refunds");
    let loop_id = id_of(&created["loop"]);
    let ana = server.key("ana@example.com");
    let bo = server.key("bo@example.com");
    server.join(&ana, &created);
    server.join(&bo, &created);
    let mut body = request_body();
    body["callback_url"] = json!("https://hooks.example.com/cb?token=s3cret");
    let request = server
        .post(
            &server.admin_key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            body,
        )
        .data(201)["request"]
        .clone();
    (loop_id, id_of(&request), ana, bo)
}

fn reviewers_see_what_they_need_and_not_the_requesters_secrets() {
    let server = Server::start();
    let (_, id, ana, _) = loop_with_two_reviewers(&server);
    let path = format!("/v1/api/requests/{id}");

    let full = server.get(&server.admin_key, &path).data(200)["request"].clone();
    assert_eq!(
        full["callback_url"],
        "https://hooks.example.com/cb?token=s3cret"
    );
    assert_eq!(full["metadata"], json!({"workflow": "blog"}));
    assert!(full["api_key_id"].is_string());
    assert_eq!(full["broadcasted_to"].as_array().unwrap().len(), 3);

    let only_mine = |request: &serde_json::Value| {
        for hidden in ["callback_url", "metadata", "api_key_id"] {
            assert!(request.get(hidden).is_none(), "{hidden} shown: {request}");
        }
        let entries = request["broadcasted_to"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{request}");
        assert_eq!(entries[0]["email"], "ana@example.com");
        assert_eq!(request["request_text"], "Publish this post?");
        assert_eq!(request["context"], json!({"post_id": 42}));
    };
    only_mine(&server.get(&ana, &path).data(200)["request"]);
    only_mine(&server.get(&ana, "/v1/api/inbox").data(200)["requests"][0]);
    only_mine(
        &server
            .post(&ana, &format!("{path}/claim"), json!({}))
            .data(200)["request"],
    );
    only_mine(
        &server
            .post(&ana, &format!("{path}/release"), json!({}))
            .data(200)["request"],
    );
    only_mine(
        &server
            .post(
                &ana,
                &format!("{path}/respond"),
                json!({"response_data": "approve"}),
            )
            .data(200)["request"],
    );
    only_mine(&server.get(&ana, &format!("{path}?wait=1")).data(200)["request"]);
}

/// Removal takes the loop's requests away from the removed member at once,
/// including one it answered; the others keep theirs (docs/decisions.md).
fn removed_members_lose_sight_of_the_loops_requests() {
    let server = Server::start();
    let (loop_id, id, ana, bo) = loop_with_two_reviewers(&server);
    let path = format!("/v1/api/requests/{id}");
    server
        .post(
            &ana,
            &format!("{path}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200);
    let ana_id = server.get(&ana, "/v1/test").data(200)["user_id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .delete(
            &server.admin_key,
            &format!("/v1/api/loops/{loop_id}/members/{ana_id}"),
        )
        .data(200);
    assert_eq!(server.get(&ana, &path).error(404), "Request not found");
    assert_eq!(server.get(&bo, &path).status, 200);
    assert_eq!(server.get(&server.admin_key, &path).status, 200);
    let second = server
        .post(
            &server.admin_key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            request_body(),
        )
        .data(201)["request"]
        .clone();
    assert_eq!(server.get(&ana, "/v1/api/inbox").data(200)["count"], 0);
    assert_eq!(
        server
            .get(&ana, &format!("/v1/api/requests/{}", id_of(&second)))
            .status,
        404
    );
}

/// Status of a public (no key) call that claims to come from `forwarded_for`.
fn public_call(server: &Server, code: &str, forwarded_for: &str) -> u16 {
    forged_call(server, code, forwarded_for, forwarded_for)
}

/// The same, with a `Forwarded` header that names `forwarded`.
fn forged_call(server: &Server, code: &str, forwarded_for: &str, forwarded: &str) -> u16 {
    server
        .http()
        .get(format!("{}/join/{code}", server.base))
        .header("X-Forwarded-For", forwarded_for)
        .header("Forwarded", format!("for={forwarded}"))
        .send()
        .expect("join page")
        .status()
        .as_u16()
}

/// The per-address limit of the public routes counts the connection's
/// address; forwarding headers count only from a trusted proxy.
fn a_forged_client_address_does_not_escape_the_public_limit() {
    let server = Server::start();
    let code = server.create_loop(&server.admin_key, "Open")["invite_code"]
        .as_str()
        .unwrap()
        .to_owned();
    let allowance = reviewloop_http_actix::PUBLIC_CALLS_PER_MINUTE;
    // Twice the allowance and one: even if the minute turns over once on
    // the way, one window sees more calls than it allows.
    let statuses: Vec<u16> = (0..=2 * allowance)
        .map(|n| public_call(&server, &code, &format!("198.51.100.{}", n % 250)))
        .collect();
    assert!(statuses.contains(&429), "forged addresses got {statuses:?}");

    let behind_proxy = Server::start_with(&[("REVIEWLOOP_TRUSTED_PROXIES", "127.0.0.1,::1")]);
    let code = behind_proxy.create_loop(&behind_proxy.admin_key, "Proxied")["invite_code"]
        .as_str()
        .unwrap()
        .to_owned();
    for n in 0..=allowance {
        let forwarded = format!("203.0.113.{n}");
        assert_eq!(
            public_call(&behind_proxy, &code, &forwarded),
            200,
            "{forwarded}"
        );
    }
    let statuses: Vec<u16> = (0..=2 * allowance)
        .map(|_| public_call(&behind_proxy, &code, "192.0.2.77"))
        .collect();
    assert!(
        statuses.contains(&429),
        "one forwarded client: {statuses:?}"
    );
}

/// A client that sends its headers and then one byte a second is answered
/// 408 in the envelope once the body's time is up, and the connection ends.
fn a_body_that_trickles_in_is_cut_off_with_408() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let server = Server::start();
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let head = format!(
        "POST /v1/api/loops HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n",
        server.admin_key
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(30) {
        // One byte a second, for as long as the server keeps listening.
        let _ = stream.write_all(b" ");
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(_) => std::thread::sleep(Duration::from_millis(800)),
        }
    }
    let elapsed = started.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let body = &answer[answer.find("\r\n\r\n").unwrap() + 4..];
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error"], true);
    assert!(body["msg"]
        .as_str()
        .unwrap()
        .contains("not received within"));
    assert!(elapsed < Duration::from_secs(20), "held for {elapsed:?}");
}

/// A database password never appears in what the binary prints.
#[test]
fn no_message_shows_the_database_password() {
    for url in [
        "postgres://app:hunter2@127.0.0.1:1/reviews",
        "mysql://app:hunter2@127.0.0.1/reviews",
    ] {
        let output = std::process::Command::new(common::BIN)
            .args(["migrate", "--database-url", url])
            .output()
            .expect("run reviewloop");
        assert!(!output.status.success());
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(printed.contains("cannot use database"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }
}

on_every_backend!(
    a_nul_character_is_refused_in_text_and_kept_in_json,
    reviewers_see_what_they_need_and_not_the_requesters_secrets,
    removed_members_lose_sight_of_the_loops_requests,
    a_forged_client_address_does_not_escape_the_public_limit,
);

#[test]
fn a_body_that_trickles_in_is_cut_off() {
    a_body_that_trickles_in_is_cut_off_with_408();
}

/// A raw HTTP/1.1 exchange: `request` is written whole, and what comes
/// back within a few seconds is returned.
fn raw_exchange(server: &Server, request: &str) -> String {
    use std::io::{Read, Write};
    use std::time::Duration;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    stream
        .write_all(request.replace("{addr}", &addr).as_bytes())
        .unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buffer) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
        if String::from_utf8_lossy(&answer).contains("\r\n\r\n{") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// A malformed chunked body is refused before the action runs: the
/// signing secret stays as it was, however often it is tried.
#[test]
fn a_malformed_body_runs_no_action() {
    let server = Server::start();
    let secret = || {
        server
            .get(&server.admin_key, "/v1/api/account/signing-secret")
            .data(200)
            .clone()
    };
    let before = secret();
    for _ in 0..10 {
        let answer = raw_exchange(
            &server,
            &format!(
                "POST /v1/api/account/signing-secret/rotate HTTP/1.1\r\nHost: {{addr}}\r\n\
                 Authorization: Bearer {}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n",
                server.admin_key
            ),
        );
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
            "refused, never done: {answer}"
        );
    }
    assert_eq!(secret(), before, "nothing rotated");
}

/// Two `Authorization` headers are one too many: 400, whichever comes first.
#[test]
fn two_authorization_headers_are_refused() {
    let server = Server::start();
    let other = server.key("other@example.com");
    let answer = raw_exchange(
        &server,
        &format!(
            "GET /v1/api/loops HTTP/1.1\r\nHost: {{addr}}\r\nAuthorization: Bearer {}\r\n\
             Authorization: Bearer {other}\r\n\r\n",
            server.admin_key
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("send one Authorization header"), "{answer}");
}
