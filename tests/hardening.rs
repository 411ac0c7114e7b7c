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

on_every_backend!(a_nul_character_is_refused_in_text_and_kept_in_json);
