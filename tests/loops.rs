//! Black-box: loops, membership, invite codes, QR codes and the join page,
//! through both path forms.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use base64::Engine;
use common::{id_of, request_body, Server, PREFIXES};
use serde_json::{json, Value};

fn user_id(server: &Server, key: &str) -> String {
    server.get(key, "/v1/test").data(200)["user_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn loops_are_created_read_listed_updated_and_deleted_in_both_path_forms() {
    let server = Server::start();
    let key = &server.admin_key;
    let me = user_id(&server, key);
    for prefix in PREFIXES {
        let created = server.post(
            key,
            &format!("{prefix}/loops"),
            json!({"name": "Legal", "description": "Contracts"}),
        );
        let data = created.data(201).clone();
        let lp = &data["loop"];
        assert_eq!(lp["name"], "Legal");
        assert_eq!(lp["description"], "Contracts");
        assert_eq!(lp["icon"], "🔁");
        assert_eq!(lp["creator_id"], me);
        assert_eq!(
            (lp["member_count"].as_u64(), lp["pending_count"].as_u64()),
            (Some(1), Some(0))
        );
        assert_eq!(lp["members"][0]["user_id"], me);
        assert_eq!(lp["members"][0]["status"], "active");
        assert!(lp["members"][0]["joined_at"].is_string());
        assert!(lp["created_at"].as_str().unwrap().ends_with('Z') && lp["updated_at"].is_string());
        let code = data["invite_code"].as_str().unwrap();
        assert_eq!(code.len(), 6);
        assert!(code
            .chars()
            .all(|c| "ABCDEFGHJKMNPQRSTUVWXYZ23456789".contains(c)));
        assert_eq!(data["join_url"], format!("{}/join/{code}", server.base));
        assert_eq!(
            data["qr_code_url"],
            format!("{}/v1/qr/{code}.png", server.base)
        );
        let uri = data["qr_code_base64"].as_str().unwrap();
        let png = base64::engine::general_purpose::STANDARD
            .decode(
                uri.strip_prefix("data:image/png;base64,")
                    .expect("a data URI"),
            )
            .unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

        let id = id_of(lp);
        let got = server.get(key, &format!("{prefix}/loops/{id}"));
        assert_eq!(got.data(200)["loop"]["id"], id.as_str());

        let listed = server.get(key, &format!("{prefix}/loops"));
        let listed = listed.data(200);
        assert!(listed["loops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == id.as_str()));
        assert_eq!(
            listed["count"].as_u64().unwrap() as usize,
            listed["loops"].as_array().unwrap().len()
        );

        let updated = server.put(
            key,
            &format!("{prefix}/loops/{id}"),
            json!({"name": "Legal EU", "description": null, "icon": "⚖️"}),
        );
        let updated = &updated.data(200)["loop"];
        assert_eq!(
            (updated["name"].as_str(), updated["icon"].as_str()),
            (Some("Legal EU"), Some("⚖️"))
        );
        assert_eq!(
            updated["description"], "",
            "cleared: an empty text, never null"
        );

        let deleted = server.delete(key, &format!("{prefix}/loops/{id}"));
        assert_eq!(deleted.data(200)["loop_id"], id.as_str());
        assert_eq!(
            server.get(key, &format!("{prefix}/loops/{id}")).error(404),
            "Loop not found"
        );
        assert_eq!(
            server
                .delete(key, &format!("{prefix}/loops/{id}"))
                .error(404),
            "Loop not found"
        );
    }
}

fn loop_bodies_are_validated_with_messages() {
    let server = Server::start();
    let key = &server.admin_key;
    let cases: [(Value, &str); 5] = [
        (json!({}), "name is required"),
        (json!({"name": ""}), "name must be 1 to 100 characters"),
        (
            json!({"name": "x".repeat(101)}),
            "name must be 1 to 100 characters",
        ),
        (
            json!({"name": "ok", "description": "d".repeat(501)}),
            "description must be at most 500 characters",
        ),
        (
            json!({"name": 7}),
            "Invalid request body: invalid type: integer `7`, expected a string",
        ),
    ];
    for (body, message) in cases {
        assert_eq!(server.post(key, "/v1/loops", body).error(400), message);
    }
    assert_eq!(
        server
            .post(key, "/v1/loops", json!({"name": "x".repeat(100)}))
            .status,
        201
    );
    let id = id_of(&server.create_loop(key, "Edit me")["loop"]);
    assert!(server
        .put(key, &format!("/v1/loops/{id}"), json!({}))
        .error(400)
        .starts_with("nothing to update"));
    assert_eq!(
        server
            .put(key, &format!("/v1/loops/{id}"), json!({"icon": ""}))
            .error(400),
        "icon must be 1 to 64 characters"
    );
}

fn other_accounts_learn_nothing_about_a_loop() {
    let server = Server::start();
    let owner = &server.admin_key;
    let stranger = server.key("stranger@example.com");
    let id = id_of(&server.create_loop(owner, "Private")["loop"]);
    for prefix in PREFIXES {
        let base = format!("{prefix}/loops/{id}");
        assert_eq!(server.get(&stranger, &base).error(404), "Loop not found");
        assert_eq!(
            server
                .put(&stranger, &base, json!({"name": "mine"}))
                .error(404),
            "Loop not found"
        );
        assert_eq!(server.delete(&stranger, &base).error(404), "Loop not found");
        assert_eq!(
            server.get(&stranger, &format!("{base}/members")).error(404),
            "Loop not found"
        );
        assert_eq!(
            server
                .get(&stranger, &format!("{base}/requests"))
                .error(404),
            "Loop not found"
        );
        assert_eq!(
            server
                .post(&stranger, &format!("{base}/requests"), request_body())
                .error(404),
            "Loop not found"
        );
        let listed = server.get(&stranger, &format!("{prefix}/loops"));
        assert_eq!(listed.data(200)["count"], 0);
    }
    assert_eq!(
        server.get(owner, &format!("/v1/loops/{id}")).status,
        200,
        "nothing changed"
    );
}

fn members_join_are_listed_and_only_the_creator_removes_them() {
    let server = Server::start();
    let owner = &server.admin_key;
    let reviewer = server.key("rev@example.com");
    let third = server.key("third@example.com");
    let created = server.create_loop(owner, "Moderation");
    let id = id_of(&created["loop"]);
    let (owner_id, reviewer_id, third_id) = (
        user_id(&server, owner),
        user_id(&server, &reviewer),
        user_id(&server, &third),
    );

    for prefix in PREFIXES {
        // An email invitation is pending until that user joins with the code.
        let invited = server.post(
            owner,
            &format!("{prefix}/loops/{id}/members"),
            json!({"email": "Rev@Example.com"}),
        );
        let member = &invited.data(201)["member"];
        assert_eq!(
            (member["status"].as_str(), member["email"].as_str()),
            (Some("pending"), Some("rev@example.com"))
        );
        assert!(member["joined_at"].is_null());
        let members = server.get(owner, &format!("{prefix}/loops/{id}/members"));
        let members = members.data(200);
        assert_eq!(members["loop_id"], id.as_str());
        assert_eq!(
            (
                members["total_count"].as_u64(),
                members["active_count"].as_u64(),
                members["pending_count"].as_u64()
            ),
            (Some(2), Some(1), Some(1))
        );
        assert_eq!(members["member_count"], members["total_count"]);
        assert_eq!(
            server
                .get(&reviewer, &format!("{prefix}/loops/{id}"))
                .error(404),
            "Loop not found",
            "pending members see nothing yet"
        );

        let joined = server.post(
            &reviewer,
            &format!("{prefix}/loops/join"),
            json!({"invite_code": created["invite_code"]}),
        );
        let joined = joined.data(200);
        assert_eq!(joined["loop"]["id"], id.as_str());
        assert_eq!(joined["member"]["status"], "active");
        assert!(joined["member"]["joined_at"].is_string());
        server.join(&third, &created);

        // A member reads the loop but may not change it.
        assert_eq!(
            server
                .get(&reviewer, &format!("{prefix}/loops/{id}"))
                .status,
            200
        );
        assert_eq!(
            server
                .get(&reviewer, &format!("{prefix}/loops/{id}/members"))
                .status,
            200
        );
        assert_eq!(
            server
                .put(
                    &reviewer,
                    &format!("{prefix}/loops/{id}"),
                    json!({"name": "x"})
                )
                .error(403),
            "Access denied to this loop"
        );
        assert_eq!(
            server
                .delete(&reviewer, &format!("{prefix}/loops/{id}"))
                .error(403),
            "Access denied to this loop"
        );
        assert_eq!(
            server
                .delete(
                    &reviewer,
                    &format!("{prefix}/loops/{id}/members/{third_id}")
                )
                .error(403),
            "Only loop creator can remove members"
        );
        assert_eq!(
            server
                .delete(owner, &format!("{prefix}/loops/{id}/members/{owner_id}"))
                .error(400),
            "Loop creator cannot remove themselves"
        );
        assert_eq!(
            server
                .delete(
                    owner,
                    &format!("{prefix}/loops/{id}/members/0123456789abcdef01234567")
                )
                .error(404),
            "Member not found in this loop"
        );
        assert_eq!(
            server
                .delete(owner, &format!("{prefix}/loops/{id}/members/nope"))
                .error(400),
            "Invalid ID format"
        );

        let removed = server.delete(owner, &format!("{prefix}/loops/{id}/members/{reviewer_id}"));
        let removed = removed.data(200);
        assert_eq!(
            (removed["loop_id"].as_str(), removed["user_id"].as_str()),
            (Some(id.as_str()), Some(reviewer_id.as_str()))
        );
        assert!(removed["removed_at"].is_string());
        assert_eq!(
            server
                .get(&reviewer, &format!("{prefix}/loops/{id}"))
                .error(404),
            "Loop not found"
        );
        let remaining = server.get(owner, &format!("{prefix}/loops/{id}/members"));
        assert_eq!(remaining.data(200)["total_count"], 2);
        server
            .delete(owner, &format!("{prefix}/loops/{id}/members/{third_id}"))
            .data(200);
    }
}

fn a_new_invite_code_retires_the_old_one() {
    let server = Server::start();
    let owner = &server.admin_key;
    let reviewer = server.key("rev@example.com");
    let created = server.create_loop(owner, "Rotating");
    let id = id_of(&created["loop"]);
    let old = created["invite_code"].as_str().unwrap().to_owned();
    for prefix in PREFIXES {
        let fresh = server.post(
            owner,
            &format!("{prefix}/loops/{id}/invite-code"),
            json!({}),
        );
        let fresh = fresh.data(200).clone();
        assert_ne!(fresh["invite_code"], old.as_str());
        assert!(fresh["join_url"]
            .as_str()
            .unwrap()
            .ends_with(fresh["invite_code"].as_str().unwrap()));
        assert_eq!(
            server
                .post(
                    &reviewer,
                    &format!("{prefix}/loops/join"),
                    json!({"invite_code": old})
                )
                .error(404),
            "Invalid invite code"
        );
        assert_eq!(
            server
                .post(
                    &reviewer,
                    &format!("{prefix}/loops/{id}/invite-code"),
                    json!({})
                )
                .error(404),
            "Loop not found"
        );
    }
    assert_eq!(
        server
            .post(&reviewer, "/v1/loops/join", json!({}))
            .error(400),
        "invite_code is required"
    );
    assert_eq!(
        server
            .post(
                &reviewer,
                "/v1/loops/join",
                json!({"invite_code": "0OIL1x"})
            )
            .error(404),
        "Invalid invite code"
    );
}

fn the_qr_code_and_join_page_are_public() {
    let server = Server::start();
    let created = server.create_loop(&server.admin_key, "<Design> & \"Review\"");
    let code = created["invite_code"].as_str().unwrap();

    let qr = server
        .http()
        .get(created["qr_code_url"].as_str().unwrap())
        .send()
        .unwrap();
    assert_eq!(qr.status(), 200);
    assert_eq!(qr.headers()["content-type"], "image/png");
    let png = qr.bytes().unwrap();
    let embedded = base64::engine::general_purpose::STANDARD
        .decode(
            created["qr_code_base64"]
                .as_str()
                .unwrap()
                .trim_start_matches("data:image/png;base64,"),
        )
        .unwrap();
    assert_eq!(
        png.as_ref(),
        embedded.as_slice(),
        "the URL serves the same image as the creation result"
    );

    let page = server
        .http()
        .get(created["join_url"].as_str().unwrap())
        .send()
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = page.text().unwrap();
    assert!(html.contains(code));
    assert!(
        html.contains("&lt;Design&gt; &amp; &quot;Review&quot;"),
        "the name is escaped"
    );
    assert!(!html.contains("<Design>"));
    // A person signs up (or in) from there and lands in the loop.
    assert!(html.contains(&format!("/signup?code={code}")), "{html}");

    let missing = server
        .http()
        .get(format!("{}/v1/qr/ZZZZZZ.png", server.base))
        .send()
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().unwrap();
    assert_eq!(body["msg"], "Invalid invite code");
    let missing = server
        .http()
        .get(format!("{}/join/ZZZZZZ", server.base))
        .send()
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing
        .text()
        .unwrap()
        .contains("This invite code is not valid"));
}

fn deleting_a_loop_with_open_requests_needs_force_and_takes_them_along() {
    let server = Server::start();
    let key = &server.admin_key;
    for prefix in PREFIXES {
        let id = id_of(&server.create_loop(key, "Busy")["loop"]);
        let request = server.post(
            key,
            &format!("{prefix}/loops/{id}/requests"),
            request_body(),
        );
        let request_id = id_of(&request.data(201)["request"]);
        assert_eq!(
            server
                .delete(key, &format!("{prefix}/loops/{id}"))
                .error(400),
            "Cannot delete loop with active requests"
        );
        assert_eq!(
            server
                .delete(key, &format!("{prefix}/loops/{id}?force=maybe"))
                .error(400),
            "force must be true or false"
        );
        assert_eq!(
            server
                .get(key, &format!("{prefix}/requests/{request_id}"))
                .status,
            200,
            "refused deletion changed nothing"
        );
        server
            .delete(key, &format!("{prefix}/loops/{id}?force=true"))
            .data(200);
        assert_eq!(
            server.get(key, &format!("{prefix}/loops/{id}")).error(404),
            "Loop not found"
        );
        assert_eq!(
            server
                .get(key, &format!("{prefix}/requests/{request_id}"))
                .error(404),
            "Request not found"
        );
    }
}

on_every_backend!(
    loops_are_created_read_listed_updated_and_deleted_in_both_path_forms,
    loop_bodies_are_validated_with_messages,
    other_accounts_learn_nothing_about_a_loop,
    members_join_are_listed_and_only_the_creator_removes_them,
    a_new_invite_code_retires_the_old_one,
    the_qr_code_and_join_page_are_public,
    deleting_a_loop_with_open_requests_needs_force_and_takes_them_along,
);
