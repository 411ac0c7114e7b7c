//! Black-box: clients written from HITL.sh's documentation read what they
//! expect. Each body here is one of its documented examples.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::receiver::Receiver;
use common::{id_of, Server};
use serde_json::json;

/// The create-request example of HITL.sh's API reference.
fn documented_request() -> serde_json::Value {
    json!({
        "processing_type": "time-sensitive",
        "type": "markdown",
        "priority": "high",
        "request_text": "Please review this user-generated content for compliance with our community guidelines.",
        "response_type": "single_select",
        "response_config": {"options": ["Approve", "Reject", "Needs Changes"]},
        "default_response": "Reject",
        "timeout_seconds": 3600,
        "platform": "api"
    })
}

fn the_create_answer_carries_the_documented_top_level_fields() {
    let server = Server::start();
    let key = &server.admin_key;
    let created = server
        .post(key, "/v1/api/loops", json!({"name": "Content Moderation"}))
        .data(201)
        .clone();
    assert!(
        created["qr_code_base64"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBORw0KGgo"),
        "a data URI of a PNG, as the reference shows"
    );
    assert_eq!(created["loop"]["description"], "", "a string, never null");
    let loop_id = id_of(&created["loop"]);

    let data = server
        .post(
            key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            documented_request(),
        )
        .data(201)
        .clone();
    let id = data["request_id"].as_str().unwrap();
    assert_eq!(data["id"], id, "scripts that read data.id find it too");
    assert_eq!(
        (
            &data["status"],
            &data["processing_type"],
            &data["type"],
            &data["priority"]
        ),
        (
            &json!("pending"),
            &json!("time-sensitive"),
            &json!("markdown"),
            &json!("high")
        )
    );
    assert_eq!(data["timeout_at"], data["request"]["timeout_at"]);
    assert_eq!(
        data["polling_url"],
        format!("{}/v1/api/requests/{id}", server.base)
    );
    assert_eq!(data["broadcasted_to"], 1);
    assert_eq!(data["notifications_sent"], 0);

    // A second page of the list says where the next one starts.
    server
        .post(
            key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            documented_request(),
        )
        .data(201);
    let first = server.get(key, "/v1/api/requests?limit=1&offset=0");
    let first = first.data(200);
    assert_eq!(
        first["pagination"],
        json!({"limit": 1, "offset": 0, "next_offset": 1})
    );
    let last = server.get(key, "/v1/api/requests?limit=1&offset=1");
    assert_eq!(
        last.data(200)["pagination"],
        json!({"limit": 1, "offset": 1, "next_offset": null})
    );
}

/// A receiver written from HITL.sh's webhook guide: it checks
/// `X-HITL-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
fn a_receiver_written_for_hitl_verifies_our_deliveries() {
    use hmac::{Hmac, Mac};
    let server = Server::start_with(&[("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true")]);
    let receiver = Receiver::start();
    let key = &server.admin_key;
    let hook = server
        .post(
            key,
            "/v1/api/webhooks",
            json!({"url": receiver.url("/hitl"), "events": ["request.created"]}),
        )
        .data(201)["webhook"]
        .clone();
    let secret = hook["secret"].as_str().unwrap();
    let created = server.create_loop(key, "Hooks");
    server.create_request(key, &id_of(&created["loop"]));
    let got = receiver.wait_until(Duration::from_secs(10), |r| !r.is_empty());
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(got[0].body.as_bytes());
    let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    assert_eq!(got[0].header("x-hitl-signature-256"), expected);
}

on_every_backend!(
    the_create_answer_carries_the_documented_top_level_fields,
    a_receiver_written_for_hitl_verifies_our_deliveries,
);
