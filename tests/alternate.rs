//! Black-box: the alternate surface's templates and teams, in envelope B,
//! with every mistake named by its field path and every answer naming its
//! request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::receiver::Receiver;
use common::{id_of, Server};
use reqwest::blocking::Client;
use serde_json::{json, Value};

fn blog_template() -> Value {
    json!({
        "name": "Blog post",
        "description": "Before a post goes live",
        "fields": [
            {"name": "post", "type": "content_display", "label": "Post"},
            {"name": "approve", "type": "boolean", "label": "Publish?", "required": true},
            {"name": "reply", "type": "text", "label": "Reply", "editable": true, "max_length": 280},
            {"name": "tone", "type": "single_select", "label": "Tone", "options": ["calm", "sharp"]}
        ]
    })
}

fn templates_are_created_read_changed_and_deleted() {
    let server = Server::start_with(&[("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true")]);
    let key = server.key("owner@example.com");
    let receiver = Receiver::start();
    server
        .post(
            &key,
            "/v1/webhooks",
            json!({"url": receiver.url("/hook"), "events": ["template.updated"]}),
        )
        .data_b(201);

    let created = server.post(&key, "/v1/templates", blog_template());
    let template = created.data_b(201).clone();
    let id = id_of(&template);
    assert_eq!(template["name"], "Blog post");
    assert_eq!(template["fields"].as_array().unwrap().len(), 4);
    assert_eq!(
        template["fields"][2],
        json!({"name": "reply", "type": "text", "label": "Reply", "required": false, "editable": true, "max_length": 280})
    );
    assert_eq!(
        server.get(&key, &format!("/v1/templates/{id}")).data_b(200),
        &template
    );
    let listed = server.get(&key, "/v1/templates");
    assert_eq!(listed.data_b(200).as_array().unwrap().len(), 1);

    let changed = server.patch(
        &key,
        &format!("/v1/templates/{id}"),
        json!({"name": "Blog post v2", "description": null}),
    );
    let changed = changed.data_b(200);
    assert_eq!(
        (changed["name"].as_str(), changed["description"].clone()),
        (Some("Blog post v2"), Value::Null)
    );
    assert_eq!(
        changed["fields"], template["fields"],
        "fields stay as they were"
    );

    // The change reaches the subscriber as template.updated.
    let got = receiver.wait_until(Duration::from_secs(10), |got| !got.is_empty());
    let body = got[0].json();
    assert_eq!(body["event"], "template.updated");
    assert_eq!(body["template"]["id"], id.as_str());
    assert_eq!(body["template"]["name"], "Blog post v2");
    assert!(body["timestamp"].is_string() && body["id"].is_string());

    let deleted = server.delete(&key, &format!("/v1/templates/{id}"));
    assert_eq!(deleted.data_b(200), &json!({"id": id, "deleted": true}));
    let gone = server.get(&key, &format!("/v1/templates/{id}"));
    assert_eq!(gone.error_b(404)["code"], "template_not_found");
}

fn template_mistakes_are_named_by_field_path() {
    let server = Server::start();
    let key = server.key("owner@example.com");
    let bad = server.post(
        &key,
        "/v1/templates",
        json!({
            "name": "",
            "fields": [
                {"name": "ok", "type": "boolean"},
                {"name": "pick", "type": "single_select", "options": []},
                {"name": "ok", "type": "text"},
                {"name": "score", "type": "stars"}
            ]
        }),
    );
    let error = bad.error_b(400);
    assert_eq!(error["code"], "validation_error");
    let fields: Vec<&str> = error["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "name",
            "fields[1].options",
            "fields[2].name",
            "fields[3].type"
        ]
    );
    assert!(error["details"][1]["message"]
        .as_str()
        .unwrap()
        .starts_with("fields[1].options must have 1 to 100 entries"));

    let missing = server.post(&key, "/v1/templates", json!({}));
    let fields: Vec<&str> = missing.error_b(400)["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["name", "fields"]);

    // Wrong JSON types, malformed JSON, a body that is not an object, a bad
    // id: each a 400 in envelope B, never a 500.
    let typed = server.post(&key, "/v1/templates", json!({"name": 7, "fields": []}));
    assert_eq!(typed.error_b(400)["code"], "validation_error");
    let http = Client::new();
    let raw = http
        .post(format!("{}/v1/templates", server.base))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .unwrap();
    let request_id = raw
        .headers()
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(raw.status().as_u16(), 400);
    let raw: Value = raw.json().unwrap();
    assert_eq!(raw["success"], false);
    assert_eq!(raw["error"]["code"], "validation_error");
    assert_eq!(raw["meta"]["request_id"], request_id.as_str());
    let array = server.post(&key, "/v1/templates", json!([1, 2]));
    assert_eq!(array.error_b(400)["code"], "validation_error");
    let bad_id = server.get(&key, "/v1/templates/not-an-id");
    assert_eq!(bad_id.error_b(400)["message"], "Invalid ID format");
    let patch = server.patch(
        &key,
        "/v1/templates/0123456789abcdef01234567",
        json!({"name": "x"}),
    );
    assert_eq!(patch.error_b(404)["code"], "template_not_found");
}

fn templates_belong_to_their_account() {
    let server = Server::start();
    let owner = server.key("owner@example.com");
    let stranger = server.key("stranger@example.com");
    let reader = server.key_with(
        "reader@example.com",
        &["--permissions", "requests:read", "--rate-limit", "1000"],
    );
    let id = id_of(
        server
            .post(&owner, "/v1/templates", blog_template())
            .data_b(201),
    );
    for reply in [
        server.get(&stranger, &format!("/v1/templates/{id}")),
        server.patch(
            &stranger,
            &format!("/v1/templates/{id}"),
            json!({"name": "Mine"}),
        ),
        server.delete(&stranger, &format!("/v1/templates/{id}")),
    ] {
        assert_eq!(reply.error_b(404)["code"], "template_not_found");
    }
    assert_eq!(
        server.get(&stranger, "/v1/templates").data_b(200),
        &json!([])
    );
    let denied = server.post(&reader, "/v1/templates", blog_template());
    assert_eq!(denied.error_b(403)["code"], "insufficient_permissions");
    let unauthenticated = server.call(reqwest::Method::GET, None, "/v1/templates", None);
    assert_eq!(unauthenticated.error_b(401)["code"], "unauthorized");
    // The owner's template is untouched.
    assert_eq!(
        server
            .get(&owner, &format!("/v1/templates/{id}"))
            .data_b(200)["name"],
        "Blog post"
    );
}

fn a_team_is_a_loop_on_both_surfaces() {
    let server = Server::start();
    let owner = server.key("owner@example.com");
    let reviewer = server.key("ana@example.com");
    let stranger = server.key("stranger@example.com");

    let team = server.post(
        &owner,
        "/v1/teams",
        json!({"name": "Moderators", "description": "Blog posts"}),
    );
    let team = team.data_b(201).clone();
    let team_id = id_of(&team);
    assert_eq!(team["name"], "Moderators");
    assert_eq!(team["member_count"], 1);
    let code = team["invite_code"].as_str().unwrap().to_owned();
    assert!(team["join_url"].as_str().unwrap().ends_with(&code));

    // The same loop on the request surface, and a loop made there is a team.
    let as_loop = server.get(&owner, &format!("/v1/api/loops/{team_id}"));
    assert_eq!(as_loop.data(200)["loop"]["name"], "Moderators");
    let made_as_loop = server.create_loop(&owner, "Legal");
    let loop_id = made_as_loop["loop"]["id"].as_str().unwrap();
    let as_team = server.get(&owner, &format!("/v1/teams/{loop_id}"));
    assert_eq!(as_team.data_b(200)["name"], "Legal");
    assert_eq!(
        server
            .get(&owner, "/v1/teams")
            .data_b(200)
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Invite by email: pending until the reviewer joins with the code.
    let invited = server.post(
        &owner,
        &format!("/v1/teams/{team_id}/members"),
        json!({"email": "ana@example.com"}),
    );
    assert_eq!(invited.data_b(201)["status"], "pending");
    server
        .post(
            &reviewer,
            "/v1/api/loops/join",
            json!({"invite_code": code}),
        )
        .data(200);
    let members = server.get(&owner, &format!("/v1/teams/{team_id}/members"));
    let statuses: Vec<(&str, &str)> = members
        .data_b(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["email"].as_str().unwrap(), m["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("owner@example.com", "active"),
            ("ana@example.com", "active")
        ]
    );

    // Mistakes and strangers.
    let no_email = server.post(&owner, &format!("/v1/teams/{team_id}/members"), json!({}));
    assert_eq!(no_email.error_b(400)["details"][0]["field"], "email");
    let no_name = server.post(&owner, "/v1/teams", json!({"description": "x"}));
    assert_eq!(no_name.error_b(400)["details"][0]["field"], "name");
    for reply in [
        server.get(&stranger, &format!("/v1/teams/{team_id}")),
        server.get(&stranger, &format!("/v1/teams/{team_id}/members")),
        server.post(
            &stranger,
            &format!("/v1/teams/{team_id}/members"),
            json!({"email": "x@example.com"}),
        ),
    ] {
        let error = reply.error_b(404);
        assert_eq!(
            (error["code"].as_str(), error["message"].as_str()),
            (Some("team_not_found"), Some("Team not found"))
        );
    }
    let member_invites = server.post(
        &reviewer,
        &format!("/v1/teams/{team_id}/members"),
        json!({"email": "y@example.com"}),
    );
    assert_eq!(
        member_invites.error_b(403)["code"],
        "insufficient_permissions"
    );
    let unknown_route = server.get(&owner, "/v1/teams/nope/else");
    assert_eq!(unknown_route.error_b(404)["code"], "not_found");
}

on_every_backend!(
    templates_are_created_read_changed_and_deleted,
    template_mistakes_are_named_by_field_path,
    templates_belong_to_their_account,
    a_team_is_a_loop_on_both_surfaces,
);
