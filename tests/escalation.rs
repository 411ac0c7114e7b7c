//! Black-box: a request nobody claims in time escalates to another loop,
//! once, with its event and a line in its timeline; escalation targets
//! are checked; a claimed request stays put.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::people::Person;
use common::{id_of, request_body, Server};
use serde_json::{json, Value};

/// Reads request `id` as `key` until it may and `done` holds (or 15 s
/// pass).
fn wait_for(s: &Server, key: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let reply = s.get(key, &format!("/v1/api/requests/{id}"));
        let request = reply.body["data"]["request"].clone();
        if reply.status == 200 && done(&request) {
            return request;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "waited 15 s: {request}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn create(s: &Server, loop_id: &str, escalation: Value) -> common::Reply {
    let mut body = request_body();
    body["escalation"] = escalation;
    s.post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body)
}

fn an_unclaimed_request_escalates_once() {
    let s = Server::start();
    let support = s.create_loop(&s.admin_key, "Support");
    let support_id = id_of(&support["loop"]);
    let agent = s.key("agent@example.com");
    s.join(&agent, &support);
    let leads = s.create_loop(&s.admin_key, "Leads");
    let leads_id = id_of(&leads["loop"]);
    let lead = s.key("lead@example.com");
    s.join(&lead, &leads);
    let stranger = s.key("stranger@example.com");
    let theirs = id_of(&s.create_loop(&stranger, "Not yours")["loop"]);

    // Targets the requester may not use, its own loop, and one too late.
    let bad = create(
        &s,
        &support_id,
        json!({"after_seconds": 1, "to_loop_id": theirs}),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.body["msg"],
        "escalation.to_loop_id names no loop you may use"
    );
    let bad = create(
        &s,
        &support_id,
        json!({"after_seconds": 1, "to_loop_id": support_id}),
    );
    assert_eq!(bad.status, 400);
    assert!(bad.body["msg"]
        .as_str()
        .unwrap()
        .starts_with("escalation.to_loop_id"));
    let bad = create(
        &s,
        &support_id,
        json!({"after_seconds": 30, "to_loop_id": leads_id, "colour": 1}),
    );
    assert_eq!(
        bad.body["msg"],
        "escalation.colour is not an escalation field: use after_seconds, to_loop_id and raise_priority"
    );
    let bad = create(
        &s,
        &support_id,
        json!({"after_seconds": 3600, "to_loop_id": leads_id}),
    );
    assert_eq!(
        bad.body["msg"],
        "escalation.after_seconds must be less than the request's timeout (3600 seconds)"
    );

    let created = create(
        &s,
        &support_id,
        json!({"after_seconds": 1, "to_loop_id": leads_id, "raise_priority": true}),
    )
    .data(201)["request"]
        .clone();
    let id = id_of(&created);
    assert_eq!(created["escalated_at"], Value::Null);
    assert_eq!(created["escalation"]["to_loop_id"], leads_id.as_str());
    // Before it escalates the lead cannot see it.
    assert_eq!(s.get(&lead, &format!("/v1/api/requests/{id}")).status, 404);

    let escalated = wait_for(&s, &s.admin_key, &id, |r| !r["escalated_at"].is_null());
    assert_eq!(escalated["priority"], "critical", "raised from high");
    let roles: Vec<(&str, &str)> = escalated["broadcasted_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["email"].as_str().unwrap(), b["role"].as_str().unwrap()))
        .collect();
    assert!(
        roles.contains(&("agent@example.com", "member")),
        "{roles:?}"
    );
    assert!(
        roles.contains(&("lead@example.com", "escalation")),
        "{roles:?}"
    );
    assert_eq!(
        roles
            .iter()
            .filter(|(e, _)| *e == "admin@localhost")
            .count(),
        1,
        "a member of both loops is sent it once"
    );
    assert_eq!(escalated["status"], "pending");

    // The lead now has it in the inbox, reads it and answers it.
    let inbox = s.get(&lead, "/v1/api/inbox").data(200).clone();
    let ids: Vec<String> = inbox["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect();
    assert_eq!(ids, std::slice::from_ref(&id), "{inbox}");
    let answered = s
        .post(
            &lead,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200)["request"]
        .clone();
    assert_eq!(answered["status"], "completed");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(s.logged(&id, "request.escalated"), 1, "once");

    // A claimed request is being worked on: it does not escalate.
    let claimed = id_of(
        &create(
            &s,
            &support_id,
            json!({"after_seconds": 1, "to_loop_id": leads_id}),
        )
        .data(201)["request"],
    );
    s.post(
        &agent,
        &format!("/v1/api/requests/{claimed}/claim"),
        json!({}),
    )
    .data(200);
    std::thread::sleep(Duration::from_millis(2500));
    let still = s
        .get(&s.admin_key, &format!("/v1/api/requests/{claimed}"))
        .data(200)["request"]
        .clone();
    assert_eq!(still["escalated_at"], Value::Null);
    assert_eq!(
        s.get(&lead, &format!("/v1/api/requests/{claimed}")).status,
        404
    );
    assert_eq!(s.logged(&claimed, "request.escalated"), 0);
}

fn a_loop_escalates_its_requests_by_default() {
    let s = Server::start();
    let support = s.create_loop(&s.admin_key, "Support");
    let support_id = id_of(&support["loop"]);
    let leads = s.create_loop(&s.admin_key, "Leads");
    let leads_id = id_of(&leads["loop"]);
    let lead = s.key("lead@example.com");
    s.join(&lead, &leads);
    let stranger = s.key("stranger@example.com");
    let theirs = id_of(&s.create_loop(&stranger, "Not yours")["loop"]);
    let path = format!("/v1/api/loops/{support_id}");

    let refused = s.put(
        &s.admin_key,
        &path,
        json!({"escalation": {"after_seconds": 60, "to_loop_id": theirs}}),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body["msg"],
        "escalation.to_loop_id names no loop you may use"
    );
    let refused = s.put(
        &s.admin_key,
        &path,
        json!({"escalation": {"after_seconds": 60, "to_loop_id": support_id}}),
    );
    assert_eq!(refused.status, 400);
    let updated = s
        .put(
            &s.admin_key,
            &path,
            json!({"escalation": {"after_seconds": 1, "to_loop_id": leads_id}}),
        )
        .data(200)
        .clone();
    assert_eq!(
        updated["loop"]["escalation"],
        json!({"after_seconds": 1, "to_loop_id": leads_id, "raise_priority": false})
    );

    let id = s.create_request(&s.admin_key, &support_id);
    let escalated = wait_for(&s, &lead, &id, |r| !r["escalated_at"].is_null());
    assert_eq!(escalated["priority"], "high", "not raised");
    // The reviewer's view lists only its own entry.
    let entries = escalated["broadcasted_to"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["role"], "escalation");

    // A member who may not see the leads' loop: its request stays put.
    let agent = s.key("agent@example.com");
    s.join(&agent, &support);
    let kept = s.create_request(&agent, &support_id);
    std::thread::sleep(Duration::from_millis(2500));
    let seen = s.get(&agent, &format!("/v1/api/requests/{kept}")).data(200)["request"].clone();
    assert_eq!(seen["escalation"], Value::Null, "dropped: {seen}");
    assert_eq!(seen["escalated_at"], Value::Null);
    assert_eq!(
        s.get(&lead, &format!("/v1/api/requests/{kept}")).status,
        404
    );

    // `escalation: null` declines the loop's default.
    let declined = create(&s, &support_id, Value::Null).data(201)["request"].clone();
    assert_eq!(declined["escalation"], Value::Null);

    // The requester's page shows it in the timeline.
    s.set_password("admin@localhost", "correct horse battery");
    let admin = Person::new(&s);
    admin.sign_in("admin@localhost", "correct horse battery");
    let (status, html) = admin.page(&format!("/app/requests/{id}"));
    assert_eq!(status, 200);
    assert!(
        html.contains(
            "Escalated to Leads: nobody had claimed it, so it also went to 1 reviewer there"
        ),
        "{html}"
    );
}

on_every_backend!(
    an_unclaimed_request_escalates_once,
    a_loop_escalates_its_requests_by_default
);
