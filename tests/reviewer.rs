//! Black-box: the reviewer's side and the whole lifecycle: join, inbox,
//! claim, release, respond, races, cancellation, removal and timeouts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{id_of, request_body, Server, PREFIXES};
use serde_json::{json, Value};

struct Team {
    server: Server,
    reviewers: Vec<(String, String)>,
    created: Value,
    loop_id: String,
}

/// An owner (the admin key) with a loop that `n` reviewers joined by code.
fn team(n: usize) -> Team {
    let server = Server::start();
    let created = server.create_loop(&server.admin_key, "Reviewers");
    let loop_id = id_of(&created["loop"]);
    let reviewers = (0..n)
        .map(|i| {
            let key = server.key(&format!("reviewer{i}@example.com"));
            server.join(&key, &created);
            let id = server.get(&key, "/v1/test").data(200)["user_id"]
                .as_str()
                .unwrap()
                .to_owned();
            (key, id)
        })
        .collect();
    Team {
        server,
        reviewers,
        created,
        loop_id,
    }
}

impl Team {
    fn create(&self, body: Value) -> String {
        let reply = self.server.post(
            &self.server.admin_key,
            &format!("/v1/loops/{}/requests", self.loop_id),
            body,
        );
        id_of(&reply.data(201)["request"])
    }

    fn poll(&self, id: &str) -> Value {
        self.server
            .get(&self.server.admin_key, &format!("/v1/api/requests/{id}"))
            .data(200)["request"]
            .clone()
    }

    fn inbox(&self, key: &str) -> Vec<String> {
        let reply = self.server.get(key, "/v1/api/inbox");
        reply.data(200)["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(id_of)
            .collect()
    }
}

fn typed(response_type: &str, config: Value, default: Value) -> Value {
    json!({
        "request_text": format!("A {response_type} question"),
        "type": "markdown",
        "response_type": response_type,
        "response_config": config,
        "priority": "medium",
        "processing_type": "deferred",
        "default_response": default,
    })
}

fn every_response_type_goes_from_broadcast_to_a_polled_answer() {
    let t = team(2);
    let (a, b) = (&t.reviewers[0], &t.reviewers[1]);
    let cases = [
        (
            "text",
            json!({}),
            json!("n/a"),
            json!("Looks good to me"),
            vec![json!(""), json!(5), json!("x".repeat(5001))],
        ),
        (
            "single_select",
            json!({"options": ["yes", "no"]}),
            json!("no"),
            json!("yes"),
            vec![json!("maybe"), json!(["yes"])],
        ),
        (
            "multi_select",
            json!({"options": ["a", "b", "c"]}),
            json!(["a"]),
            json!(["a", "c"]),
            vec![json!([]), json!(["a", "a"]), json!(["d"]), json!("a")],
        ),
        (
            "rating",
            json!({"scale_min": 1, "scale_max": 5}),
            json!(3),
            json!(4),
            vec![json!(0), json!(6), json!(2.5), json!("4")],
        ),
        (
            "number",
            json!({"min": 0, "max": 100}),
            json!(0),
            json!(42.5),
            vec![json!(-1), json!(101), json!("42")],
        ),
        (
            "boolean",
            json!({}),
            json!(false),
            json!(true),
            vec![json!("true"), json!(1), json!(null)],
        ),
    ];
    for (i, (kind, config, default, valid, invalid)) in cases.into_iter().enumerate() {
        let prefix = PREFIXES[i % 2];
        let id = t.create(typed(kind, config, default));
        assert!(
            t.inbox(&a.0).contains(&id) && t.inbox(&b.0).contains(&id),
            "{kind}: in both inboxes"
        );

        let claimed = t
            .server
            .post(&a.0, &format!("{prefix}/requests/{id}/claim"), json!({}));
        let claimed = &claimed.data(200)["request"];
        assert_eq!(
            (claimed["status"].as_str(), claimed["claimed_by"].as_str()),
            (Some("claimed"), Some(a.1.as_str()))
        );
        assert_eq!(
            t.server
                .post(
                    &b.0,
                    &format!("{prefix}/requests/{id}/respond"),
                    json!({"response_data": valid})
                )
                .error(409),
            "Request already claimed"
        );
        assert_eq!(
            t.server
                .post(&b.0, &format!("{prefix}/requests/{id}/claim"), json!({}))
                .error(409),
            "Request already claimed"
        );
        assert!(
            !t.inbox(&b.0).contains(&id),
            "{kind}: claimed by someone else leaves b's inbox"
        );
        assert!(
            t.inbox(&a.0).contains(&id),
            "{kind}: stays in the claimer's inbox"
        );

        for answer in invalid {
            let reply = t.server.post(
                &a.0,
                &format!("{prefix}/requests/{id}/respond"),
                json!({"response_data": answer}),
            );
            assert!(
                reply.error(400).starts_with("response_data"),
                "{kind}: {answer} → {}",
                reply.body
            );
        }
        let answered = t.server.post(
            &a.0,
            &format!("{prefix}/requests/{id}/respond"),
            json!({"response_data": valid}),
        );
        assert_eq!(answered.data(200)["request"]["status"], "completed");

        let polled = t.poll(&id);
        assert_eq!(polled["status"], "completed", "{kind}");
        assert_eq!(polled["response_data"], valid, "{kind}");
        assert_eq!(polled["response_by"], a.1.as_str());
        assert!(polled["response_at"].is_string());
        assert!(polled["response_time_seconds"].as_f64().unwrap() >= 0.0);
        assert!(!t.inbox(&a.0).contains(&id));
        assert_eq!(
            t.server
                .post(
                    &b.0,
                    &format!("{prefix}/requests/{id}/respond"),
                    json!({"response_data": valid})
                )
                .error(409),
            "Request is not open"
        );
    }
}

fn of_many_reviewers_racing_to_claim_exactly_one_wins() {
    let t = team(6);
    for round in 0..3 {
        let id = t.create(request_body());
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let handles: Vec<_> = t
                .reviewers
                .iter()
                .enumerate()
                .map(|(i, (key, _))| {
                    let (server, id) = (&t.server, &id);
                    scope.spawn(move || {
                        let action = if (i + round) % 2 == 0 {
                            "claim"
                        } else {
                            "respond"
                        };
                        let body = json!({"response_data": "approve"});
                        server
                            .post(key, &format!("/v1/api/requests/{id}/{action}"), body)
                            .status
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            statuses.iter().filter(|s| **s == 200).count(),
            1,
            "round {round}: {statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| **s == 409).count(),
            t.reviewers.len() - 1,
            "round {round}: {statuses:?}"
        );
    }
}

fn a_claim_can_be_released_for_someone_else() {
    let t = team(2);
    let (a, b) = (&t.reviewers[0], &t.reviewers[1]);
    let id = t.create(request_body());
    for prefix in PREFIXES {
        assert_eq!(
            t.server
                .post(&a.0, &format!("{prefix}/requests/{id}/release"), json!({}))
                .error(409),
            "Request is not claimed by you"
        );
        t.server
            .post(&a.0, &format!("{prefix}/requests/{id}/claim"), json!({}))
            .data(200);
        assert_eq!(
            t.server
                .post(&b.0, &format!("{prefix}/requests/{id}/release"), json!({}))
                .error(409),
            "Request already claimed"
        );
        let released = t
            .server
            .post(&a.0, &format!("{prefix}/requests/{id}/release"), json!({}));
        let released = &released.data(200)["request"];
        assert_eq!(released["status"], "pending");
        assert!(released["claimed_by"].is_null());
        assert!(t.inbox(&b.0).contains(&id));
    }
    t.server
        .post(&b.0, &format!("/v1/requests/{id}/claim"), json!({}))
        .data(200);
}

fn cancelling_a_claimed_request_closes_it_to_its_reviewer() {
    let t = team(1);
    let reviewer = &t.reviewers[0];
    let id = t.create(request_body());
    t.server
        .post(&reviewer.0, &format!("/v1/requests/{id}/claim"), json!({}))
        .data(200);
    let cancelled = t
        .server
        .delete(&t.server.admin_key, &format!("/v1/api/requests/{id}"));
    assert_eq!(cancelled.data(200)["status"], "cancelled");
    let late = t.server.post(
        &reviewer.0,
        &format!("/v1/requests/{id}/respond"),
        json!({"response_data": "approve"}),
    );
    assert_eq!(late.error(409), "Request is not open");
    assert!(!t.inbox(&reviewer.0).contains(&id));
}

fn the_inbox_orders_by_priority_then_age_and_follows_membership() {
    let t = team(1);
    let reviewer = &t.reviewers[0];
    let mut ids = Vec::new();
    for priority in ["low", "critical", "medium", "critical"] {
        let mut body = request_body();
        body["priority"] = json!(priority);
        ids.push(t.create(body));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        t.inbox(&reviewer.0),
        [
            ids[1].clone(),
            ids[3].clone(),
            ids[2].clone(),
            ids[0].clone()
        ]
    );
    let page = t.server.get(&reviewer.0, "/v1/inbox?limit=2&offset=1");
    let page: Vec<String> = page.data(200)["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect();
    assert_eq!(page, [ids[3].clone(), ids[2].clone()]);
    assert_eq!(
        t.server.get(&reviewer.0, "/v1/inbox?limit=0").error(400),
        "limit must be a whole number from 1 to 200"
    );
    assert_eq!(
        t.server.get(&reviewer.0, "/v1/inbox?offset=-1").error(400),
        "offset must be a whole number"
    );

    // Pending invitations receive nothing; joining later does not bring old requests.
    let invited = t.server.key("invited@example.com");
    t.server
        .post(
            &t.server.admin_key,
            &format!("/v1/loops/{}/members", t.loop_id),
            json!({"email": "invited@example.com"}),
        )
        .data(201);
    let before_join = t.create(request_body());
    assert!(t.inbox(&invited).is_empty());
    t.server.join(&invited, &t.created);
    assert!(!t.inbox(&invited).contains(&before_join));
    let after_join = t.create(request_body());
    assert_eq!(t.inbox(&invited), vec![after_join.clone()]);

    // A removed member loses the loop's requests at once.
    let reviewer_id = &reviewer.1;
    t.server
        .delete(
            &t.server.admin_key,
            &format!("/v1/loops/{}/members/{reviewer_id}", t.loop_id),
        )
        .data(200);
    assert!(t.inbox(&reviewer.0).is_empty());
    assert_eq!(
        t.server
            .get(&reviewer.0, &format!("/v1/requests/{after_join}"))
            .error(404),
        "Request not found"
    );
    let claim = t.server.post(
        &reviewer.0,
        &format!("/v1/requests/{after_join}/claim"),
        json!({}),
    );
    assert_eq!(claim.error(404), "Request not found");
}

/// Milliseconds from one API timestamp to another.
fn millis_between(from: &Value, to: &Value) -> i64 {
    let parse = |v: &Value| {
        v.as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };
    (parse(to) - parse(from)).num_milliseconds()
}

fn wait_for_status(t: &Team, id: &str, status: &str, limit: Duration) -> Value {
    let started = Instant::now();
    loop {
        let request = t.poll(id);
        if request["status"] == status {
            return request;
        }
        assert!(
            started.elapsed() < limit,
            "still {} after {limit:?}",
            request["status"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn unanswered_requests_time_out_with_their_default_response() {
    let t = team(1);
    let mut body = request_body();
    body["timeout_seconds"] = json!(2);
    let pending = t.create(body.clone());
    let claimed = t.create(body);
    t.server
        .post(
            &t.reviewers[0].0,
            &format!("/v1/requests/{claimed}/claim"),
            json!({}),
        )
        .data(200);
    for id in [&pending, &claimed] {
        let request = wait_for_status(&t, id, "timeout", Duration::from_secs(5));
        assert_eq!(request["response_data"], "reject");
        assert!(request["response_by"].is_null());
        let late = millis_between(&request["timeout_at"], &request["response_at"]);
        assert!(
            (0..1000).contains(&late),
            "timed out {late} ms after timeout_at"
        );
    }
    let late = t.server.post(
        &t.reviewers[0].0,
        &format!("/v1/requests/{claimed}/respond"),
        json!({"response_data": "approve"}),
    );
    assert_eq!(late.error(409), "Request is not open");
}

fn a_request_that_fell_due_while_the_server_was_down_times_out_after_start() {
    let mut t = team(0);
    let mut body = request_body();
    body["timeout_seconds"] = json!(1);
    let id = t.create(body);
    t.server.kill();
    std::thread::sleep(Duration::from_millis(1500));
    t.server.relaunch();
    let restarted = chrono::Utc::now();
    let request = wait_for_status(&t, &id, "timeout", Duration::from_secs(3));
    assert_eq!(request["response_data"], "reject");
    let after_start = millis_between(&json!(restarted.to_rfc3339()), &request["response_at"]);
    assert!(
        after_start < 1000,
        "timed out {after_start} ms after the restart"
    );
}

fn removing_a_member_gives_its_claimed_requests_back_to_the_others() {
    let t = team(2);
    let (a, b) = (&t.reviewers[0], &t.reviewers[1]);
    let id = t.create(request_body());
    t.server
        .post(&a.0, &format!("/v1/requests/{id}/claim"), json!({}))
        .data(200);
    assert!(!t.inbox(&b.0).contains(&id));
    t.server
        .delete(
            &t.server.admin_key,
            &format!("/v1/api/loops/{}/members/{}", t.loop_id, a.1),
        )
        .data(200);
    assert!(
        t.inbox(&b.0).contains(&id),
        "back in the other reviewer's inbox"
    );
    let request = t.poll(&id);
    assert_eq!(request["status"], "pending");
    assert!(request["claimed_by"].is_null());
    t.server
        .post(
            &b.0,
            &format!("/v1/requests/{id}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200);
}

fn a_comment_goes_with_the_answer_to_the_requester() {
    let t = team(1);
    let reviewer = &t.reviewers[0];
    // Too long: refused, and the request stays open.
    let id = t.create(request_body());
    let long = "x".repeat(2001);
    let refused = t.server.post(
        &reviewer.0,
        &format!("/v1/api/requests/{id}/respond"),
        json!({"response_data": "approve", "comment": long}),
    );
    assert_eq!(
        refused.error(400),
        "comment must be at most 2000 characters"
    );
    assert_eq!(t.poll(&id)["status"], "pending");

    let answered = t.server.post(
        &reviewer.0,
        &format!("/v1/api/requests/{id}/respond"),
        json!({"response_data": "approve", "comment": "  Fine; <b>fix</b> the typo\nin line 2  "}),
    );
    let answered = &answered.data(200)["request"];
    assert_eq!(
        answered["response_comment"],
        "Fine; <b>fix</b> the typo\nin line 2"
    );
    let polled = t.poll(&id);
    assert_eq!(polled["response_data"], "approve");
    assert_eq!(
        polled["response_comment"],
        "Fine; <b>fix</b> the typo\nin line 2"
    );
    assert_eq!(
        polled["responses"][0]["comment"],
        "Fine; <b>fix</b> the typo\nin line 2"
    );
    // Without one, the field is there and null.
    let plain = t.create(request_body());
    t.server
        .post(
            &reviewer.0,
            &format!("/v1/requests/{plain}/respond"),
            json!({"response_data": "reject", "comment": "   "}),
        )
        .data(200);
    let polled = t.poll(&plain);
    assert!(polled["response_comment"].is_null(), "{polled}");
    assert!(polled["responses"][0]["comment"].is_null(), "{polled}");
    // The audit log keeps the comment with the decision.
    let log = t.server.get(&t.server.admin_key, "/v1/api/audit?limit=200");
    let completed: Vec<&Value> = log.data(200)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "request.completed")
        .collect();
    assert_eq!(
        completed[0]["data"]["response_comment"],
        "Fine; <b>fix</b> the typo\nin line 2"
    );
    assert!(completed[1]["data"].get("response_comment").is_none());
}

on_every_backend!(
    a_comment_goes_with_the_answer_to_the_requester,
    every_response_type_goes_from_broadcast_to_a_polled_answer,
    of_many_reviewers_racing_to_claim_exactly_one_wins,
    a_claim_can_be_released_for_someone_else,
    cancelling_a_claimed_request_closes_it_to_its_reviewer,
    the_inbox_orders_by_priority_then_age_and_follows_membership,
    unanswered_requests_time_out_with_their_default_response,
    a_request_that_fell_due_while_the_server_was_down_times_out_after_start,
    removing_a_member_gives_its_claimed_requests_back_to_the_others,
);
