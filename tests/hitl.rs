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

/// HITL.sh's response-type guides, replayed: each config is accepted and
/// shown back as given, and its bounds hold for reviewers' answers.
fn documented_response_configs_are_accepted_and_enforced() {
    let server = Server::start();
    let key = &server.admin_key;
    let created = server.create_loop(key, "Guides");
    let reviewer = server.key("rev@example.com");
    server.join(&reviewer, &created);
    let loop_id = id_of(&created["loop"]);
    let create = |response_type: &str, config: serde_json::Value, default: serde_json::Value| {
        let mut body = documented_request();
        body["response_type"] = json!(response_type);
        body["response_config"] = config.clone();
        body["default_response"] = default;
        let data = server
            .post(key, &format!("/v1/api/loops/{loop_id}/requests"), body)
            .data(201)
            .clone();
        for (k, v) in config.as_object().unwrap() {
            assert_eq!(
                &data["request"]["response_config"][k], v,
                "{k} shown as given"
            );
        }
        data["request_id"].as_str().unwrap().to_owned()
    };
    let answer = |id: &str, value: serde_json::Value| {
        server.post(
            &reviewer,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": value}),
        )
    };
    let options = json!([
        {"value": "approve", "label": "✅ Approve Content", "description": "Meets all guidelines", "color": "#16a34a"},
        {"value": "reject", "label": "❌ Reject Content", "color": "#dc2626"},
        {"value": "escalate", "label": "⬆️ Escalate"}
    ]);
    let single = create(
        "single_select",
        json!({"options": options}),
        json!("reject"),
    );
    let refused = answer(&single, json!("✅ Approve Content"));
    assert_eq!(
        refused.error(400),
        "response_data '✅ Approve Content' is not one of the options: approve, reject, escalate"
    );
    assert_eq!(
        answer(&single, json!("approve")).data(200)["request"]["response_data"],
        "approve"
    );

    let multi = create(
        "multi_select",
        json!({"options": options, "min_selections": 2, "max_selections": 2}),
        json!(["reject", "escalate"]),
    );
    assert_eq!(
        answer(&multi, json!(["approve"])).error(400),
        "response_data must select at least 2 options"
    );
    answer(&multi, json!(["approve", "escalate"])).data(200);

    let rating = create(
        "rating",
        json!({"scale_min": 1, "scale_max": 5, "scale_step": 0.5}),
        json!(3),
    );
    assert_eq!(
        answer(&rating, json!(4.25)).error(400),
        "response_data must be from 1 to 5 in steps of 0.5"
    );
    answer(&rating, json!(4.5)).data(200);

    let text = create(
        "text",
        json!({"min_length": 10, "max_length": 500}),
        json!("No answer given"),
    );
    assert_eq!(
        answer(&text, json!("Too short")).error(400),
        "response_data must be at least 10 characters"
    );
    answer(&text, json!("Long enough to pass")).data(200);

    let number = create(
        "number",
        json!({"min_value": 0, "max_value": 1000, "decimal_places": 2}),
        json!(0),
    );
    assert_eq!(
        answer(&number, json!(1500)).error(400),
        "response_data must be from 0 to 1000"
    );
    assert_eq!(
        answer(&number, json!(12.345)).error(400),
        "response_data must have at most 2 decimal places"
    );
    answer(&number, json!(129.99)).data(200);

    // A default that breaks the bounds is refused when the request is made.
    let mut body = documented_request();
    body["response_type"] = json!("multi_select");
    body["response_config"] = json!({"options": options, "max_selections": 1});
    body["default_response"] = json!(["approve", "reject"]);
    let refused = server.post(key, &format!("/v1/api/loops/{loop_id}/requests"), body);
    assert_eq!(
        refused.error(400),
        "default_response must select at most one option"
    );
}

/// HITL.sh's feedback example: wrapped in `feedback`, with its longer form.
fn documented_feedback_is_kept_whole() {
    let server = Server::start();
    let key = &server.admin_key;
    let created = server.create_loop(key, "Feedback");
    let loop_id = id_of(&created["loop"]);
    let id = server
        .post(
            key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            documented_request(),
        )
        .data(201)["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The loop's creator is its first reviewer.
    server
        .post(
            key,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "Approve"}),
        )
        .data(200);
    let feedback = json!({
        "rating": 5,
        "comment": "Excellent review, very thorough and accurate",
        "accuracy": 5,
        "timeliness": 4,
        "helpfulness": 5,
        "would_recommend": true,
        "follow_up_needed": false,
        "tags": ["thorough", "fast"],
        "category": "positive"
    });
    let kept = server
        .post(
            key,
            &format!("/v1/api/requests/{id}/feedback"),
            json!({"feedback": feedback}),
        )
        .data(200)["feedback"]
        .clone();
    for (k, v) in feedback.as_object().unwrap() {
        match v {
            serde_json::Value::Number(n) => assert_eq!(kept[k].as_f64(), n.as_f64(), "{k}"),
            other => assert_eq!(&kept[k], other, "{k}"),
        }
    }
    let shown = server.get(key, &format!("/v1/api/requests/{id}"));
    assert_eq!(
        shown.data(200)["request"]["feedback"]["tags"],
        json!(["thorough", "fast"])
    );
    let refused = server.post(
        key,
        &format!("/v1/api/requests/{id}/feedback"),
        json!({"feedback": {"category": "great"}}),
    );
    assert_eq!(
        refused.error(400),
        "category must be one of positive, constructive, issue"
    );
}

/// HITL.sh's MCP server sends `tags` on create and `tags`/`platform` on
/// PATCH; both are kept and shown to the requester.
fn tags_and_platform_are_kept_on_create_and_patch() {
    let server = Server::start();
    let key = &server.admin_key;
    let created = server.create_loop(key, "Tags");
    let reviewer = server.key("rev@example.com");
    server.join(&reviewer, &created);
    let loop_id = id_of(&created["loop"]);
    let mut body = documented_request();
    body["tags"] = json!(["moderation", " urgent ", "moderation"]);
    let data = server
        .post(key, &format!("/v1/api/loops/{loop_id}/requests"), body)
        .data(201)
        .clone();
    assert_eq!(
        data["request"]["tags"],
        json!(["moderation", "urgent"]),
        "trimmed, once each"
    );
    let id = data["request_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/api/requests/{id}");
    let patched = server.patch(key, &path, json!({"tags": ["legal"], "platform": "n8n"}));
    let request = &patched.data(200)["request"];
    assert_eq!(
        (&request["tags"], &request["platform"]),
        (&json!(["legal"]), &json!("n8n"))
    );
    assert_eq!(
        server
            .patch(key, &path, json!({"platform": "fax"}))
            .error(400),
        "platform must be one of web_portal, api, mobile, webhook, n8n, zapier"
    );
    assert_eq!(
        server
            .patch(key, &path, json!({"tags": "legal"}))
            .error(400),
        "tags must be an array of at most 20 texts of 1 to 50 characters"
    );
    let cleared = server.patch(key, &path, json!({"tags": null}));
    assert_eq!(cleared.data(200)["request"]["tags"], json!([]));
    let seen = server.get(&reviewer, &path);
    assert!(
        seen.data(200)["request"].get("tags").is_none(),
        "tags are the requester's, like metadata"
    );
}

/// The calls HITL.sh's own MCP server (`hitl-sh/mcp.hitl.sh`,
/// `lib/hitl-client.ts`) makes for each of its tools, with the bodies its
/// scripts send, against `HITL_API_BASE=<server>/v1`.
fn the_calls_of_hitls_mcp_server_work_unchanged() {
    let server = Server::start();
    let key = &server.admin_key;
    let reviewer = server.key("reviewer@example.com");
    let created = server
        .post(key, "/v1/api/loops", json!({"name": "MCP"}))
        .data(201)
        .clone();
    server.join(&reviewer, &created);
    let loop_id = id_of(&created["loop"]);
    // list_loops reads data.loops and data.count, then loops[i].id and name.
    let loops = server.get(key, "/v1/api/loops").data(200).clone();
    assert_eq!(loops["count"], 1);
    assert_eq!(loops["loops"][0]["id"], loop_id.as_str());
    assert_eq!(loops["loops"][0]["name"], "MCP");

    // create_request: each body its scripts send; they read data.id.
    let image = "https://example.com/tree.png";
    let bodies = [
        // PLAN.txt
        json!({"processing_type": "time-sensitive", "type": "markdown", "priority": "medium",
               "request_text": "Please review this content", "timeout_seconds": 1800,
               "response_type": "single_select",
               "response_config": {"options": [{"value": "approve", "label": "Approve"},
                                               {"value": "reject", "label": "Reject"}], "required": true},
               "default_response": "reject", "platform": "api"}),
        // scripts/test-all-tools.mjs
        json!({"processing_type": "time-sensitive", "type": "markdown", "priority": "high",
               "request_text": "Test request from the MCP tools script", "timeout_seconds": 600,
               "response_type": "single_select",
               "response_config": {"options": ["Approve", "Reject", "Needs Changes"], "required": true},
               "default_response": "Reject", "platform": "api", "tags": ["test", "mcp-server"]}),
        // scripts/test-all-response-types.mjs, one per type
        json!({"processing_type": "time-sensitive", "type": "markdown", "priority": "medium",
               "request_text": "Which category?", "timeout_seconds": 600,
               "response_type": "single_select",
               "response_config": {"options": ["Bug", "Feature", "Other"], "required": true},
               "default_response": "Other", "context": {"ticket_id": "T-1"}, "platform": "api"}),
        json!({"processing_type": "time-sensitive", "type": "image", "image_url": image,
               "priority": "low", "request_text": "What is in the picture?", "timeout_seconds": 900,
               "response_type": "multi_select",
               "response_config": {"options": ["Tree", "Car", "House", "Person"], "max_selections": 3, "required": true},
               "default_response": ["Tree"], "platform": "api"}),
        json!({"processing_type": "time-sensitive", "type": "markdown", "priority": "medium",
               "request_text": "Rate this answer", "timeout_seconds": 600,
               "response_type": "rating", "response_config": {"scale_max": 5},
               "default_response": 3, "platform": "api"}),
        json!({"processing_type": "time-sensitive", "type": "markdown", "priority": "medium",
               "request_text": "Summarise the thread", "timeout_seconds": 600,
               "response_type": "text", "response_config": {"min_length": 20, "max_length": 500},
               "default_response": "No summary provided", "platform": "api"}),
        json!({"processing_type": "time-sensitive", "type": "markdown", "priority": "medium",
               "request_text": "What should the refund be?", "timeout_seconds": 600,
               "response_type": "number",
               "response_config": {"min_value": 1, "max_value": 1000, "allow_negative": false, "decimal_places": 2},
               "default_response": 105.5, "platform": "api"}),
    ];
    let mut ids = Vec::new();
    for body in bodies {
        let reply = server.post(
            key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            body.clone(),
        );
        let data = reply.data(201);
        assert_eq!(data["id"], data["request_id"], "{body}");
        ids.push(data["id"].as_str().unwrap().to_owned());
    }
    // Their number config is enforced (allow_negative: false alone is
    // covered by the domain's tests; here min_value already bounds it).
    let number = &ids[6];
    server
        .post(
            &reviewer,
            &format!("/v1/api/requests/{number}/claim"),
            json!({}),
        )
        .data(200);
    let negative = server.post(
        &reviewer,
        &format!("/v1/api/requests/{number}/respond"),
        json!({"response_data": -5}),
    );
    assert_eq!(negative.error(400), "response_data must be from 1 to 1000");

    // list_requests with each filter it sends; it reads count, total,
    // has_more and requests.
    let list = server
        .get(
            key,
            "/v1/api/requests?status=pending&priority=medium&limit=2&offset=0&sort=priority_desc",
        )
        .data(200)
        .clone();
    assert_eq!(list["count"], 2);
    assert_eq!(list["total"], 4);
    assert_eq!(list["has_more"], true);
    assert_eq!(list["requests"].as_array().unwrap().len(), 2);
    let filtered = server
        .get(
            key,
            &format!("/v1/api/requests?loop_id={loop_id}&sort=created_at_asc"),
        )
        .data(200)
        .clone();
    assert_eq!(filtered["requests"][0]["id"], ids[0].as_str());

    // get_request, update_request (PATCH with its updates object),
    // add_request_feedback ({"feedback": {...}}), cancel_request.
    let first = &ids[1];
    let path = format!("/v1/api/requests/{first}");
    assert_eq!(
        server.get(key, &path).data(200)["request"]["tags"],
        json!(["test", "mcp-server"])
    );
    let updated = server.patch(
        key,
        &path,
        json!({"priority": "high", "request_text": "Test request from the MCP tools script UPDATED"}),
    );
    assert_eq!(updated.data(200)["request"]["priority"], "high");
    server
        .post(&reviewer, &format!("{path}/claim"), json!({}))
        .data(200);
    server
        .post(
            &reviewer,
            &format!("{path}/respond"),
            json!({"response_data": "Approve"}),
        )
        .data(200);
    let feedback = server.post(
        key,
        &format!("{path}/feedback"),
        json!({"feedback": {"rating": 5, "comment": "Great", "accuracy": 5, "timeliness": 5,
                            "helpfulness": 4, "would_recommend": true,
                            "tags": ["thorough", "quick"], "category": "positive"}}),
    );
    assert_eq!(feedback.data(200)["feedback"]["helpfulness"], 4.0);
    let cancelled = server.delete(key, &format!("/v1/api/requests/{}", ids[0]));
    assert_eq!(cancelled.data(200)["status"], "cancelled");
    // Its (unused) key check reads these from /v1/test.
    let check = server.get(key, "/v1/test").data(200).clone();
    for field in [
        "user_id",
        "email",
        "api_key_id",
        "permissions",
        "account_status",
    ] {
        assert!(check.get(field).is_some(), "{field}");
    }
}

/// What HITL.sh's clients and troubleshooting page expect besides the
/// documented bodies: health without a key, PATCH refusing what it cannot
/// apply, and a request list per key.
fn health_patch_and_listing_behave_as_hitls_clients_expect() {
    let server = Server::start();
    let key = &server.admin_key;
    for path in ["/v1/health", "/v1/api/health"] {
        let reply = server
            .http()
            .get(format!("{}{path}", server.base))
            .send()
            .unwrap();
        assert_eq!(reply.status().as_u16(), 200, "{path}");
        assert_eq!(
            reply.json::<serde_json::Value>().unwrap()["data"]["status"],
            "ok"
        );
    }
    let loop_id = id_of(&server.create_loop(key, "Moderation")["loop"]);
    let id = server.create_request(key, &loop_id);
    let path = format!("/v1/api/requests/{id}");
    let request = server.get(key, &path).data(200)["request"].clone();
    // The same types again are no change; a callback is applied.
    let same = server
        .patch(
            key,
            &path,
            json!({
                "processing_type": request["processing_type"],
                "response_type": request["response_type"],
                "callback_url": "https://hooks.example.com/done",
            }),
        )
        .data(200)["request"]
        .clone();
    assert_eq!(same["callback_url"], "https://hooks.example.com/done");
    let refused = server.patch(
        key,
        &path,
        json!({"response_type": "number", "processing_type": "deferred-later"}),
    );
    let message = refused.error(400).to_owned();
    assert!(
        message.contains("response_type") && message.contains("processing_type"),
        "{message}"
    );
    let internal = server.patch(key, &path, json!({"callback_url": "http://127.0.0.1:9/x"}));
    assert!(internal.error(400).contains("callback_url"));
    server
        .patch(key, &path, json!({"callback_url": null}))
        .data(200);
    assert!(server.get(key, &path).data(200)["request"]["callback_url"].is_null());

    // Each key lists what it made; scope=account lists the account's.
    let other = server.key("admin@localhost");
    let theirs = server.create_request(&other, &loop_id);
    let listed = |k: &str, query: &str| -> Vec<String> {
        server.get(k, &format!("/v1/api/requests{query}")).data(200)["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(id_of)
            .collect()
    };
    assert_eq!(listed(key, ""), std::slice::from_ref(&id));
    assert_eq!(listed(&other, ""), std::slice::from_ref(&theirs));
    let mut all = listed(key, "?scope=account");
    all.sort();
    let mut both = vec![id, theirs];
    both.sort();
    assert_eq!(all, both);
    server.get(key, "/v1/api/requests?scope=team").error(400);
}

on_every_backend!(
    health_patch_and_listing_behave_as_hitls_clients_expect,
    the_calls_of_hitls_mcp_server_work_unchanged,
    tags_and_platform_are_kept_on_create_and_patch,
    documented_feedback_is_kept_whole,
    documented_response_configs_are_accepted_and_enforced,
    the_create_answer_carries_the_documented_top_level_fields,
    a_receiver_written_for_hitl_verifies_our_deliveries,
);
