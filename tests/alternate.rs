//! Black-box: the alternate surface's templates and teams, in envelope B,
//! with every mistake named by its field path and every answer naming its
//! request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::receiver::{Received, Receiver};
use common::{id_of, Server};
use hmac::{Hmac, Mac};
use reqwest::blocking::Client;
use serde_json::{json, Value};
use sha2::Sha256;

/// Checks `X-ReviewLoop-Signature` as a receiver of this surface would:
/// the lowercase hex HMAC-SHA256 of the raw body.
fn assert_signed_b(got: &Received, secret: &str) {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(got.body.as_bytes());
    let expected = hex::encode(mac.finalize().into_bytes());
    assert_eq!(
        got.header("x-reviewloop-signature"),
        expected,
        "{}",
        got.body
    );
}

/// Creates the blog template for `key`'s account; returns its id.
fn new_template(server: &Server, key: &str) -> String {
    id_of(
        server
            .post(key, "/v1/templates", blog_template())
            .data_b(201),
    )
}

/// The fields an envelope-B error names in its `details`, in order.
fn detail_fields(error: &Value) -> Vec<&str> {
    error["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect()
}

const WEBHOOK_SECRET: &str = "review-receiver-secret-42";

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
    let fields = detail_fields(error);
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
    let fields = detail_fields(missing.error_b(400));
    assert_eq!(fields, ["name", "fields"]);

    // Wrong JSON types, malformed JSON, a body that is not an object, a bad
    // id: each a 400 in envelope B, never a 500.
    let typed = server.post(&key, "/v1/templates", json!({"name": 7, "fields": []}));
    let typed = typed.error_b(400);
    assert_eq!(typed["code"], "validation_error");
    assert_eq!(typed["details"][0]["field"], "name", "{typed}");
    let deep = server.post(
        &key,
        "/v1/reviews",
        json!({"template_id": "0123456789abcdef01234567", "assignees": ["a@example.com"], "due_date": 5}),
    );
    assert_eq!(deep.error_b(400)["details"][0]["field"], "due_date");
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
    assert_eq!(raw["error"]["details"][0]["field"], "body");
    assert_eq!(raw["meta"]["request_id"], request_id.as_str());
    let array = server.post(&key, "/v1/templates", json!([1, 2]));
    assert_eq!(array.error_b(400)["code"], "validation_error");
    let huge = server.post(
        &key,
        "/v1/templates",
        json!({"name": "Huge", "fields": [{"name": "r", "type": "rating", "scale_min": i64::MIN, "scale_max": i64::MAX}]}),
    );
    assert_eq!(
        huge.error_b(400)["details"][0]["message"],
        "fields[0].scale_min must be from -1000000 to 1000000"
    );
    let bad_id = server.get(&key, "/v1/templates/not-an-id");
    let bad_id = bad_id.error_b(400);
    assert_eq!(bad_id["message"], "Invalid ID format");
    assert_eq!(bad_id["details"][0]["field"], "id");
    let bad_query = server.get(&key, "/v1/reviews?limit=many");
    assert_eq!(bad_query.error_b(400)["details"][0]["field"], "query");
    let bad_hook = server.get(&key, "/v1/webhooks/not-an-id");
    assert_eq!(bad_hook.error_b(400)["details"][0]["field"], "id");
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
    let id = new_template(&server, &owner);
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

/// One whole review, as a user would run it: a template of several fields,
/// a review assigned by email with an AI draft, the reviewer's start and
/// result, the signed webhooks and the callback.
fn a_review_round_trip_with_signed_deliveries() {
    let server = Server::start_with(&[
        ("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true"),
        ("REVIEWLOOP_WEBHOOK_RETRY_SCHEDULE", "1,1,1"),
    ]);
    let owner = server.key("owner@example.com");
    let ana = server.key("ana@example.com");
    let stranger = server.key("stranger@example.com");
    let receiver = Receiver::start();
    server
        .post(
            &owner,
            "/v1/webhooks",
            json!({"url": receiver.url("/hook"), "events": ["review.created", "review.assigned", "review.started", "review.completed"], "secret": WEBHOOK_SECRET}),
        )
        .data_b(201);
    let template_id = new_template(&server, &owner);

    let sent = server.post(
        &owner,
        "/v1/reviews",
        json!({
            "template_id": template_id,
            "content": {"text": "# Launch post\nWe ship on Monday.", "metadata": {"reply": "Thanks for the post!"}},
            "assignees": ["ana@example.com"],
            "priority": "high",
            "due_date": "2030-01-01T12:00:00Z",
            "callback_url": receiver.url("/callback")
        }),
    );
    let review = sent.data_b(201).clone();
    let id = id_of(&review);
    assert_eq!(
        (review["status"].as_str(), review["priority"].as_str()),
        (Some("created"), Some("high"))
    );
    assert_eq!(review["assignees"], json!(["ana@example.com"]));
    assert_eq!(review["template_id"], template_id.as_str());
    assert_eq!(
        review["content"]["metadata"]["reply"],
        "Thanks for the post!"
    );
    assert_eq!(review["fields"].as_array().unwrap().len(), 4);

    // The reviewer finds it and reads it; a stranger does not.
    let mine = server.get(&ana, "/v1/reviews?role=reviewer");
    assert_eq!(mine.data_b(200)[0]["id"], id.as_str());
    assert_eq!(mine.body["meta"]["pagination"]["total"], 1);
    assert!(server
        .get(&ana, "/v1/reviews")
        .data_b(200)
        .as_array()
        .unwrap()
        .is_empty());
    server.get(&ana, &format!("/v1/reviews/{id}")).data_b(200);
    let hidden = server.get(&stranger, &format!("/v1/reviews/{id}"));
    assert_eq!(hidden.error_b(404)["code"], "review_not_found");
    let stolen = server.post(
        &stranger,
        &format!("/v1/reviews/{id}/complete"),
        json!({"result": {"approve": true}}),
    );
    assert_eq!(stolen.error_b(404)["code"], "review_not_found");

    let started = server.post(&ana, &format!("/v1/reviews/{id}/start"), json!({}));
    let started = started.data_b(200);
    assert_eq!(started["status"], "started");
    assert_eq!(started["reviewer"]["email"], "ana@example.com");

    let wrong = server.post(
        &ana,
        &format!("/v1/reviews/{id}/complete"),
        json!({"result": {"approve": "yes", "mood": 1}}),
    );
    let fields = detail_fields(wrong.error_b(400));
    assert_eq!(fields, ["result.mood", "result.approve"]);

    let done = server.post(
        &ana,
        &format!("/v1/reviews/{id}/complete"),
        json!({"result": {"approve": true, "tone": "calm"}}),
    );
    let done = done.data_b(200).clone();
    assert_eq!(done["status"], "completed");
    // The AI draft stands where the reviewer left it as it was.
    assert_eq!(
        done["result"],
        json!({"approve": true, "reply": "Thanks for the post!", "tone": "calm"})
    );
    let again = server.post(
        &ana,
        &format!("/v1/reviews/{id}/complete"),
        json!({"result": {"approve": false}}),
    );
    assert_eq!(again.error_b(409)["code"], "conflict");
    let late_cancel = server.delete(&owner, &format!("/v1/reviews/{id}"));
    assert_eq!(late_cancel.error_b(400)["code"], "validation_error");

    let completed = server.get(&owner, "/v1/reviews?status=completed&priority=high");
    assert_eq!(completed.data_b(200)[0]["result"]["tone"], "calm");
    let overdue = server.get(&owner, "/v1/reviews?overdue=true");
    assert!(overdue.data_b(200).as_array().unwrap().is_empty());

    // Four signed webhook deliveries, in the surface's own shape, and the
    // callback signed with the account's secret.
    let got = receiver.wait_until(Duration::from_secs(15), |got| {
        got.iter().filter(|r| r.path == "/hook").count() >= 4
            && got.iter().any(|r| r.path == "/callback")
    });
    let mut events: Vec<String> = Vec::new();
    for hook in got.iter().filter(|r| r.path == "/hook") {
        assert_signed_b(hook, WEBHOOK_SECRET);
        let body = hook.json();
        assert_eq!(body["review"]["id"], id.as_str());
        assert!(body["timestamp"].is_string());
        events.push(body["event"].as_str().unwrap().to_owned());
    }
    events.sort();
    assert_eq!(
        events,
        [
            "review.assigned",
            "review.completed",
            "review.created",
            "review.started"
        ]
    );
    let completed_hook = got
        .iter()
        .find(|r| r.path == "/hook" && r.json()["event"] == "review.completed")
        .unwrap()
        .json();
    assert_eq!(
        completed_hook["review"]["result"],
        json!({"approve": true, "reply": "Thanks for the post!", "tone": "calm"})
    );
    assert_eq!(
        completed_hook["review"]["reviewer"]["email"],
        "ana@example.com"
    );
    assert!(completed_hook["review"]["completed_at"].is_string());
    let account_secret = server
        .get(&owner, "/v1/api/account/signing-secret")
        .data(200)["signing_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let callback = got.iter().find(|r| r.path == "/callback").unwrap();
    assert_signed_b(callback, &account_secret);
    assert_eq!(callback.json()["event"], "review.completed");
}

fn reviews_refuse_what_does_not_fit() {
    let server = Server::start();
    let owner = server.key("owner@example.com");
    let other = server.key("other@example.com");
    let member = server.key("member@example.com");
    let template_id = new_template(&server, &owner);
    let foreign_template = new_template(&server, &other);
    let foreign_team = id_of(
        server
            .post(&other, "/v1/teams", json!({"name": "Theirs"}))
            .data_b(201),
    );

    let bad = server.post(
        &owner,
        "/v1/reviews",
        json!({
            "template_id": template_id,
            "content": {"text": 3, "metadata": {"reply": "x".repeat(281)}},
            "assignees": ["not-an-email"],
            "priority": "urgent",
            "due_date": "next week"
        }),
    );
    let fields = detail_fields(bad.error_b(400));
    assert_eq!(
        fields,
        ["content.text", "assignees[0]", "priority", "due_date"]
    );
    let draft_too_long = server.post(
        &owner,
        "/v1/reviews",
        json!({"template_id": template_id, "content": {"metadata": {"reply": "x".repeat(281)}}, "assignees": ["a@example.com"]}),
    );
    assert_eq!(
        draft_too_long.error_b(400)["details"][0]["field"],
        "content.metadata.reply"
    );
    let nobody = server.post(&owner, "/v1/reviews", json!({"template_id": template_id}));
    assert_eq!(nobody.error_b(400)["details"][0]["field"], "assignees");
    let unknown_user = server.post(
        &owner,
        "/v1/reviews",
        json!({"template_id": template_id, "assignees": ["0123456789abcdef01234567"]}),
    );
    assert_eq!(
        unknown_user.error_b(400)["details"][0]["field"],
        "assignees[0]"
    );
    let theirs = server.post(
        &owner,
        "/v1/reviews",
        json!({"template_id": foreign_template, "assignees": ["a@example.com"]}),
    );
    assert_eq!(theirs.error_b(404)["code"], "template_not_found");
    let their_team = server.post(
        &owner,
        "/v1/reviews",
        json!({"template_id": template_id, "team_id": foreign_team}),
    );
    assert_eq!(their_team.error_b(404)["code"], "team_not_found");
    assert!(
        server
            .get(&owner, "/v1/reviews")
            .data_b(200)
            .as_array()
            .unwrap()
            .is_empty(),
        "nothing half-written"
    );
    let bad_query = server.get(&owner, "/v1/reviews?limit=0&status=done");
    assert_eq!(
        bad_query.error_b(400)["details"].as_array().unwrap().len(),
        2
    );

    // A team's review reaches its active members, not a pending invitee;
    // an invited email with no account yet becomes an assignee.
    let team = server.post(&owner, "/v1/teams", json!({"name": "Mods"}));
    let team = team.data_b(201).clone();
    let team_id = id_of(&team);
    server
        .post(
            &member,
            "/v1/api/loops/join",
            json!({"invite_code": team["invite_code"]}),
        )
        .data(200);
    server
        .post(
            &owner,
            &format!("/v1/teams/{team_id}/members"),
            json!({"email": "other@example.com"}),
        )
        .data_b(201);
    let sent = server.post(
        &owner,
        "/v1/reviews",
        json!({"template_id": template_id, "team_id": team_id, "assignees": ["newcomer@example.com"]}),
    );
    let review = sent.data_b(201).clone();
    assert_eq!(review["assignees"], json!(["newcomer@example.com"]));
    let id = id_of(&review);
    server
        .get(&member, &format!("/v1/reviews/{id}"))
        .data_b(200);
    assert_eq!(
        server
            .get(&other, &format!("/v1/reviews/{id}"))
            .error_b(404)["code"],
        "review_not_found"
    );
    // Its sender changes and cancels it; a member may not.
    let moved = server.patch(
        &owner,
        &format!("/v1/reviews/{id}"),
        json!({"priority": "critical", "due_date": null}),
    );
    assert_eq!(moved.data_b(200)["priority"], "critical");
    let by_member = server.delete(&member, &format!("/v1/reviews/{id}"));
    assert_eq!(by_member.error_b(403)["code"], "insufficient_permissions");
    let cancelled = server.delete(&owner, &format!("/v1/reviews/{id}"));
    assert_eq!(cancelled.data_b(200)["status"], "cancelled");
    let too_late = server.post(&member, &format!("/v1/reviews/{id}/start"), json!({}));
    assert_eq!(too_late.error_b(409)["code"], "conflict");
}

/// A reviewer who started a review and was then reassigned away (or left
/// its team) does not keep it from the new reviewers.
fn a_start_does_not_outlive_the_starters_assignment() {
    let server = Server::start();
    let owner = server.key("owner@example.com");
    let ana = server.key("ana@example.com");
    let ben = server.key("ben@example.com");
    let template_id = new_template(&server, &owner);
    let id = id_of(
        server
            .post(
                &owner,
                "/v1/reviews",
                json!({"template_id": template_id, "assignees": ["ana@example.com", "ben@example.com"]}),
            )
            .data_b(201),
    );
    server
        .post(&ana, &format!("/v1/reviews/{id}/start"), json!({}))
        .data_b(200);
    let blocked = server.post(&ben, &format!("/v1/reviews/{id}/start"), json!({}));
    let error = blocked.error_b(409);
    assert_eq!(
        error["message"],
        "Review already started by another reviewer"
    );

    let moved = server.patch(
        &owner,
        &format!("/v1/reviews/{id}"),
        json!({"assignees": ["ben@example.com"]}),
    );
    assert_eq!(moved.data_b(200)["assignees"], json!(["ben@example.com"]));
    assert_eq!(
        server.get(&ana, &format!("/v1/reviews/{id}")).error_b(404)["code"],
        "review_not_found"
    );
    let done = server.post(
        &ben,
        &format!("/v1/reviews/{id}/complete"),
        json!({"result": {"approve": false}}),
    );
    let done = done.data_b(200);
    assert_eq!(
        (done["status"].as_str(), done["reviewer"]["email"].as_str()),
        (Some("completed"), Some("ben@example.com"))
    );
    let late = server.delete(&owner, &format!("/v1/reviews/{id}"));
    assert_eq!(
        late.error_b(400)["message"],
        "Review is completed; only created or started reviews can be cancelled"
    );
}

/// The alternate surface counts calls per minute by the key's plan; the
/// request surface keeps the key's hourly limit; the two are apart.
fn the_alternate_surface_is_limited_per_minute_by_plan() {
    let server = Server::start();
    let standard = server.key_with("std@example.com", &["--rate-limit", "5"]);
    let enterprise = server.key_with(
        "big@example.com",
        &["--rate-limit", "5", "--plan", "enterprise"],
    );
    let check = server.get(&enterprise, "/v1/test");
    let check = check.data(200);
    assert_eq!(
        (
            check["plan"].as_str(),
            check["plan_rate_limit"]["per_minute"].as_u64()
        ),
        (Some("enterprise"), Some(100_000))
    );
    assert_eq!(
        check["rate_limit"]["limit"], 5,
        "the request surface: hourly"
    );

    // The thousand calls below must fall in one minute: start early in one.
    let into_minute = chrono::Utc::now().timestamp().rem_euclid(60);
    if into_minute > 40 {
        std::thread::sleep(Duration::from_secs((61 - into_minute).unsigned_abs()));
    }
    let first = server.get(&standard, "/v1/templates");
    first.data_b(200);
    assert_eq!(first.header("x-ratelimit-limit"), Some("1000"));
    let reset: i64 = first.header("x-ratelimit-reset").unwrap().parse().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        reset > now && reset <= now + 61,
        "a minute's window: {reset} vs {now}"
    );
    assert_eq!(
        server
            .get(&enterprise, "/v1/reviews")
            .header("x-ratelimit-limit"),
        Some("100000")
    );

    // 1,000 calls a minute, then 429 in envelope B with Retry-After. The
    // key's 5 calls an hour on the request surface are its own.
    let mut refused = None;
    for n in 1..=1_001 {
        let reply = server.get(&standard, "/v1/templates");
        if reply.status == 429 {
            refused = Some((n, reply));
            break;
        }
    }
    // The first call above was one of the thousand.
    let (n, reply) = refused.expect("refused past the plan's allowance");
    assert_eq!(n, 1_000, "call 1,001 of the minute is refused");
    assert_eq!(reply.error_b(429)["code"], "rate_limit_exceeded");
    let wait: i64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(server.get(&standard, "/v1/test").status, 200);
}

on_every_backend!(
    the_alternate_surface_is_limited_per_minute_by_plan,
    a_start_does_not_outlive_the_starters_assignment,
    a_review_round_trip_with_signed_deliveries,
    reviews_refuse_what_does_not_fit,
    templates_are_created_read_changed_and_deleted,
    template_mistakes_are_named_by_field_path,
    templates_belong_to_their_account,
    a_team_is_a_loop_on_both_surfaces,
);
