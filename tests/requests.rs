//! Black-box: the requester's side of review requests through both path
//! forms: create, read, list, change, cancel, rate, and isolation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use chrono::{DateTime, Utc};
use common::{id_of, request_body, Server, PREFIXES};
use serde_json::{json, Value};

fn time(value: &Value) -> DateTime<Utc> {
    value.as_str().unwrap().parse().unwrap()
}

fn with(mut body: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            body.as_object_mut().unwrap().remove(k);
        } else {
            body[k] = v.clone();
        }
    }
    body
}

fn requests_are_created_in_every_form_with_every_field() {
    let server = Server::start();
    let key = &server.admin_key;
    let me = server.get(key, "/v1/test").data(200).clone();
    let loop_id = id_of(&server.create_loop(key, "Blog")["loop"]);
    let forms = [
        (format!("/v1/api/loops/{loop_id}/requests"), request_body()),
        (
            format!("/v1/loops/{loop_id}/requests"),
            with(request_body(), json!({"loop_id": loop_id})),
        ),
        (
            "/v1/api/requests".to_owned(),
            with(request_body(), json!({"loop_id": loop_id})),
        ),
        (
            "/v1/requests".to_owned(),
            with(request_body(), json!({"loop_id": loop_id})),
        ),
    ];
    for (path, body) in forms {
        let reply = server.post(key, &path, body);
        let data = reply.data(201);
        let r = &data["request"];
        assert_eq!(r["loop_id"], loop_id.as_str(), "{path}");
        assert_eq!(r["creator_id"], me["user_id"]);
        assert_eq!(r["api_key_id"], me["api_key_id"]);
        assert_eq!(r["status"], "pending");
        assert_eq!(r["type"], "markdown");
        assert_eq!(r["processing_type"], "time-sensitive");
        assert_eq!(r["priority"], "high");
        assert_eq!(r["request_text"], "Publish this post?");
        assert_eq!(r["response_type"], "single_select");
        assert_eq!(
            r["response_config"],
            json!({"options": ["approve", "reject"]})
        );
        assert_eq!(r["default_response"], "reject");
        assert_eq!(r["context"], json!({"post_id": 42}));
        assert_eq!(r["metadata"], json!({"workflow": "blog"}));
        assert_eq!(r["platform"], "n8n");
        assert_eq!(r["timeout_seconds"], 3600);
        assert_eq!(
            (time(&r["timeout_at"]) - time(&r["created_at"])).num_seconds(),
            3600
        );
        assert_eq!(r["broadcasted_at"], r["created_at"]);
        let sent = r["broadcasted_to"].as_array().unwrap();
        assert_eq!(
            sent.len(),
            1,
            "the creator is the loop's only active member"
        );
        assert_eq!(sent[0]["email"], "admin@localhost");
        assert_eq!(sent[0]["role"], "member");
        assert_eq!(
            (
                sent[0]["notification_sent"].as_bool(),
                sent[0]["notification_error"].as_str()
            ),
            (Some(false), Some("not notified: email is not configured")),
            "this server has no SMTP server"
        );
        for empty in [
            "image_url",
            "platform_version",
            "callback_url",
            "response_by",
            "response_at",
            "response_data",
            "response_time_seconds",
            "claimed_by",
            "cancelled_at",
            "feedback",
        ] {
            assert!(r[empty].is_null(), "{empty} should be null");
        }
        let id = id_of(r);
        assert_eq!(data["request_id"], id.as_str());
        assert_eq!(
            data["polling_url"],
            format!("{}/v1/api/requests/{id}", server.base)
        );
        assert_eq!(
            (
                data["broadcasted_to"].as_u64(),
                data["notifications_sent"].as_u64()
            ),
            (Some(1), Some(0))
        );
        let polled = server.get(
            key,
            data["polling_url"]
                .as_str()
                .unwrap()
                .trim_start_matches(&server.base),
        );
        assert_eq!(polled.data(200)["request"], *r);
    }
}

fn deferred_requests_default_to_thirty_days_and_images_need_a_url() {
    let server = Server::start();
    let key = &server.admin_key;
    let loop_id = id_of(&server.create_loop(key, "Art")["loop"]);
    let path = format!("/v1/loops/{loop_id}/requests");
    let deferred = server.post(
        key,
        &path,
        with(
            request_body(),
            json!({"processing_type": "deferred", "timeout_seconds": null}),
        ),
    );
    assert_eq!(deferred.data(201)["request"]["timeout_seconds"], 2_592_000);
    let image = server.post(
        key,
        &path,
        with(
            request_body(),
            json!({"type": "image", "image_url": "https://cdn.example.com/a.png"}),
        ),
    );
    assert_eq!(
        image.data(201)["request"]["image_url"],
        "https://cdn.example.com/a.png"
    );
    let rating = server.post(key, &path, with(request_body(), json!({"response_type": "rating", "response_config": {"scale_max": 10}, "default_response": 5})));
    assert_eq!(
        rating.data(201)["request"]["response_config"],
        json!({"scale_min": 1, "scale_max": 10})
    );
}

fn invalid_request_bodies_are_400_with_what_is_wrong() {
    let server = Server::start();
    let key = &server.admin_key;
    let loop_id = id_of(&server.create_loop(key, "Checks")["loop"]);
    let other_loop = id_of(&server.create_loop(key, "Other")["loop"]);
    let path = format!("/v1/api/loops/{loop_id}/requests");
    let cases = [
        (json!({}), "request_text is required; type is required; response_type is required; priority is required; processing_type is required"),
        (with(request_body(), json!({"request_text": ""})), "request_text must be 1 to 2000 characters"),
        (with(request_body(), json!({"request_text": "x".repeat(2001)})), "request_text must be 1 to 2000 characters"),
        (with(request_body(), json!({"type": "video"})), "type must be one of markdown, image"),
        (with(request_body(), json!({"type": "image"})), "image_url is required when type is image"),
        (with(request_body(), json!({"priority": "urgent"})), "priority must be one of low, medium, high, critical"),
        (with(request_body(), json!({"timeout_seconds": null})), "timeout_seconds is required when processing_type is time-sensitive"),
        (with(request_body(), json!({"timeout_seconds": 0})), "timeout_seconds must be a whole number from 1 to 2592000"),
        (with(request_body(), json!({"response_type": "essay"})), "response_type must be one of text, single_select, multi_select, rating, number, boolean"),
        (with(request_body(), json!({"response_config": {"options": []}})), "response_config.options must have 1 to 100 entries"),
        (with(request_body(), json!({"default_response": "maybe"})), "default_response 'maybe' is not one of the options: approve, reject"),
        (with(request_body(), json!({"response_type": "boolean", "default_response": "yes"})), "default_response must be true or false"),
        (with(request_body(), json!({"context": "text"})), "context must be a JSON object"),
        (with(request_body(), json!({"callback_url": "ftp://x"})), "callback_url must be an http or https URL"),
        (with(request_body(), json!({"platform": "make"})), "platform must be one of web_portal, api, mobile, webhook, n8n, zapier"),
        (with(request_body(), json!({"loop_id": other_loop})), "loop_id in the body does not match the loop in the path"),
    ];
    for (body, message) in cases {
        assert_eq!(
            server.post(key, &path, body.clone()).error(400),
            message,
            "{body}"
        );
    }
    assert_eq!(
        server.post(key, "/v1/requests", request_body()).error(400),
        "loop_id is required"
    );
    assert_eq!(
        server
            .post(
                key,
                "/v1/requests",
                with(request_body(), json!({"loop_id": "abc"}))
            )
            .error(400),
        "loop_id must be 24 hexadecimal characters"
    );
    assert_eq!(
        server
            .get(key, &format!("/v1/loops/{loop_id}/requests"))
            .data(200)["total"],
        0,
        "nothing was half-written"
    );
}

fn lists_filter_sort_and_page_with_totals() {
    let server = Server::start();
    let key = &server.admin_key;
    let first = id_of(&server.create_loop(key, "One")["loop"]);
    let second = id_of(&server.create_loop(key, "Two")["loop"]);
    let mut ids = Vec::new();
    for (loop_id, priority) in [
        (&first, "low"),
        (&first, "critical"),
        (&second, "medium"),
        (&first, "high"),
    ] {
        let created = server.post(
            key,
            &format!("/v1/loops/{loop_id}/requests"),
            with(request_body(), json!({"priority": priority})),
        );
        ids.push(id_of(&created.data(201)["request"]));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    server
        .delete(key, &format!("/v1/requests/{}", ids[3]))
        .data(200);

    for prefix in PREFIXES {
        let list = |query: &str| {
            server
                .get(key, &format!("{prefix}/requests{query}"))
                .data(200)
                .clone()
        };
        let order = |data: &Value| {
            data["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(id_of)
                .collect::<Vec<String>>()
        };

        let all = list("");
        assert_eq!(
            (
                all["count"].as_u64(),
                all["total"].as_u64(),
                all["has_more"].as_bool()
            ),
            (Some(4), Some(4), Some(false))
        );
        assert_eq!(
            order(&all),
            [
                ids[3].clone(),
                ids[2].clone(),
                ids[1].clone(),
                ids[0].clone()
            ],
            "newest first by default"
        );

        let page = list("?limit=2&offset=1&sort=created_at_asc");
        assert_eq!(order(&page), [ids[1].clone(), ids[2].clone()]);
        assert_eq!(
            (
                page["count"].as_u64(),
                page["total"].as_u64(),
                page["has_more"].as_bool()
            ),
            (Some(2), Some(4), Some(true))
        );
        assert_eq!(list("?limit=2&offset=2")["has_more"], false);

        assert_eq!(
            order(&list("?sort=priority_desc")),
            [
                ids[1].clone(),
                ids[3].clone(),
                ids[2].clone(),
                ids[0].clone()
            ]
        );
        assert_eq!(order(&list("?status=cancelled")), [ids[3].clone()]);
        assert_eq!(order(&list("?priority=low")), [ids[0].clone()]);
        assert_eq!(
            order(&list(&format!("?loop_id={second}"))),
            [ids[2].clone()]
        );
        assert_eq!(
            list(&format!("?status=pending&loop_id={first}"))["total"],
            2
        );

        let in_loop = server.get(
            key,
            &format!("{prefix}/loops/{first}/requests?status=pending"),
        );
        let in_loop = in_loop.data(200);
        assert_eq!(in_loop["loop_id"], first.as_str());
        assert_eq!(order(in_loop), [ids[1].clone(), ids[0].clone()]);

        let bad = server.get(
            key,
            &format!("{prefix}/requests?limit=500&status=done&sort=random"),
        );
        assert_eq!(
            bad.error(400),
            "status must be one of pending, claimed, completed, timeout, cancelled; limit must be a whole number from 1 to 200; sort must be one of created_at_desc, created_at_asc, priority_desc, status_asc"
        );
    }
}

fn pending_requests_can_be_changed_and_cancelled_once() {
    let server = Server::start();
    let key = &server.admin_key;
    let loop_id = id_of(&server.create_loop(key, "Edits")["loop"]);
    for prefix in PREFIXES {
        let created = server.post(
            key,
            &format!("{prefix}/loops/{loop_id}/requests"),
            request_body(),
        );
        let id = id_of(&created.data(201)["request"]);
        let path = format!("{prefix}/requests/{id}");

        let patched = server.patch(
            key,
            &path,
            json!({
                "request_text": "Publish the edited post?",
                "priority": "critical",
                "timeout_seconds": 7200,
                "response_config": {"options": ["approve", "reject", "edit"]},
                "default_response": "edit",
                "context": null,
            }),
        );
        let r = &patched.data(200)["request"];
        assert_eq!(
            (r["request_text"].as_str(), r["priority"].as_str()),
            (Some("Publish the edited post?"), Some("critical"))
        );
        assert_eq!(
            (time(&r["timeout_at"]) - time(&r["created_at"])).num_seconds(),
            7200
        );
        assert_eq!(r["default_response"], "edit");
        assert!(r["context"].is_null());
        assert_eq!(
            server.get(key, &path).data(200)["request"],
            *r,
            "the change was stored"
        );

        assert_eq!(
            server
                .patch(key, &path, json!({"priority": "asap"}))
                .error(400),
            "priority must be one of low, medium, high, critical"
        );
        assert_eq!(
            server
                .patch(
                    key,
                    &path,
                    json!({"response_config": {"options": ["a", "b"]}})
                )
                .error(400),
            "default_response 'edit' is not one of the options: a, b"
        );

        let cancelled = server.delete(key, &path);
        let data = cancelled.data(200);
        assert_eq!(
            (data["request_id"].as_str(), data["status"].as_str()),
            (Some(id.as_str()), Some("cancelled"))
        );
        let stored = server.get(key, &path);
        assert!(stored.data(200)["request"]["cancelled_at"].is_string());
        assert_eq!(
            server.delete(key, &path).error(400),
            "Request is cancelled; only pending or claimed requests can be cancelled"
        );
        assert_eq!(
            server
                .patch(key, &path, json!({"priority": "low"}))
                .error(400),
            "Request is cancelled; only pending requests can be updated"
        );
        assert_eq!(
            server
                .post(key, &format!("{path}/feedback"), json!({"rating": 5}))
                .error(400),
            "Request is cancelled; only completed requests can be given feedback"
        );
    }
}

fn feedback_rates_a_completed_request_and_replaces_earlier_feedback() {
    let server = Server::start();
    let key = &server.admin_key;
    let loop_id = id_of(&server.create_loop(key, "Rated")["loop"]);
    for prefix in PREFIXES {
        let created = server.post(
            key,
            &format!("/v1/loops/{loop_id}/requests"),
            request_body(),
        );
        let id = id_of(&created.data(201)["request"]);
        server
            .post(
                key,
                &format!("/v1/requests/{id}/respond"),
                json!({"response_data": "approve"}),
            )
            .data(200);

        let path = format!("{prefix}/requests/{id}/feedback");
        let first = server.post(key, &path, json!({"rating": 4, "comment": "Good call"}));
        let data = first.data(200);
        assert_eq!(data["request_id"], id.as_str());
        assert_eq!(
            (
                data["feedback"]["rating"].as_f64(),
                data["feedback"]["comment"].as_str()
            ),
            (Some(4.0), Some("Good call"))
        );
        let second = server.post(key, &path, json!({"feedback": {"rating": 2}}));
        assert_eq!(second.data(200)["feedback"]["rating"], 2.0);
        let stored = server.get(key, &format!("{prefix}/requests/{id}"));
        let feedback = &stored.data(200)["request"]["feedback"];
        assert_eq!(
            (feedback["rating"].as_f64(), feedback["comment"].is_null()),
            (Some(2.0), true),
            "the second replaced the first"
        );

        assert_eq!(
            server.post(key, &path, json!({"rating": 6})).error(400),
            "rating must be a number from 1 to 5"
        );
        assert_eq!(
            server.post(key, &path, json!({})).error(400),
            "feedback needs at least one of rating, comment, accuracy, timeliness, helpfulness, would_recommend, follow_up_needed, tags, category"
        );
    }
}

fn requests_stay_inside_their_account() {
    let server = Server::start();
    let owner = &server.admin_key;
    let stranger = server.key("stranger@example.com");
    let member = server.key("member@example.com");
    let created = server.create_loop(owner, "Mine");
    let loop_id = id_of(&created["loop"]);
    let reply = server.post(
        owner,
        &format!("/v1/loops/{loop_id}/requests"),
        request_body(),
    );
    let id = id_of(&reply.data(201)["request"]);
    server.join(&member, &created);
    for prefix in PREFIXES {
        let path = format!("{prefix}/requests/{id}");
        assert_eq!(server.get(&stranger, &path).error(404), "Request not found");
        assert_eq!(
            server
                .patch(&stranger, &path, json!({"priority": "low"}))
                .error(404),
            "Request not found"
        );
        assert_eq!(
            server.delete(&stranger, &path).error(404),
            "Request not found"
        );
        assert_eq!(
            server
                .post(&stranger, &format!("{path}/feedback"), json!({"rating": 1}))
                .error(404),
            "Request not found"
        );
        assert_eq!(
            server
                .get(&stranger, &format!("{prefix}/requests"))
                .data(200)["total"],
            0
        );
        // A member who joined after the request was created was never sent it.
        assert_eq!(server.get(&member, &path).error(404), "Request not found");
        assert_eq!(
            server.get(&member, &format!("{prefix}/requests")).data(200)["total"],
            0
        );
    }
    // A member who was sent a request may read it but not change it.
    let later = server.post(
        owner,
        &format!("/v1/loops/{loop_id}/requests"),
        request_body(),
    );
    let later_id = id_of(&later.data(201)["request"]);
    assert_eq!(
        server
            .get(&member, &format!("/v1/requests/{later_id}"))
            .status,
        200
    );
    assert_eq!(
        server
            .delete(&member, &format!("/v1/requests/{later_id}"))
            .error(403),
        "Access denied to this request"
    );
    assert_eq!(
        server
            .patch(
                &member,
                &format!("/v1/requests/{later_id}"),
                json!({"priority": "low"})
            )
            .error(403),
        "Access denied to this request"
    );
    assert_eq!(
        server.get(owner, &format!("/v1/requests/{id}")).data(200)["request"]["status"],
        "pending"
    );
}

/// Every request's log line says how many statements it ran. Reading a
/// request on PostgreSQL is one store call of one statement (the row, its
/// broadcast list and the viewer's membership together), from the
/// statement cache once warm; on SQLite, once the request and its loop are
/// in memory, it runs none.
fn each_request_logs_its_statements_and_a_warm_read_is_cheap() {
    let server = Server::start_with(&[("RUST_LOG", "info")]);
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Counted")["loop"]);
    let id = server.create_request(&server.admin_key, &loop_id);
    let path = format!("/v1/api/requests/{id}");
    for _ in 0..12 {
        server.get(&server.admin_key, &path).data(200);
    }
    let mut lines = Vec::new();
    for _ in 0..50 {
        lines = server
            .stderr
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(&format!("path={path} ")))
            .cloned()
            .collect::<Vec<_>>();
        if lines.len() >= 12 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let last = lines.last().expect("a log line per request");
    let statements = match common::backend() {
        common::Backend::Sqlite => "statements=0",
        common::Backend::Postgres => "statements=1",
    };
    assert!(last.contains(statements), "{last}");
    // The statement cache is per pooled connection; while the background
    // workers hold one, a read may land on a connection that has not
    // prepared it yet. A warm one prepares nothing.
    let recent = &lines[lines.len().saturating_sub(6)..];
    assert!(
        recent.iter().any(|l| l.contains("prepared=0")),
        "{recent:#?}"
    );
}

on_every_backend!(
    each_request_logs_its_statements_and_a_warm_read_is_cheap,
    requests_are_created_in_every_form_with_every_field,
    deferred_requests_default_to_thirty_days_and_images_need_a_url,
    invalid_request_bodies_are_400_with_what_is_wrong,
    lists_filter_sort_and_page_with_totals,
    pending_requests_can_be_changed_and_cancelled_once,
    feedback_rates_a_completed_request_and_replaces_earlier_feedback,
    requests_stay_inside_their_account,
);
