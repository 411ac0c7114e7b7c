//! Black-box: requests that need a quorum. Each reviewer answers once,
//! every answer is listed, and among racing answers exactly one decides:
//! tested with a dozen reviewers answering at once, on SQLite, and on
//! PostgreSQL with the answers spread over two instances.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{id_of, request_body, run_on, Backend, Server};
use serde_json::{json, Value};

const REVIEWERS: usize = 12;

/// A loop of the admin's with `REVIEWERS` reviewers; their keys.
fn loop_with_reviewers(s: &Server) -> (String, Vec<String>) {
    let created = s.create_loop(&s.admin_key, "Four eyes");
    let keys = (0..REVIEWERS)
        .map(|i| {
            let key = s.key(&format!("q{i}@example.com"));
            s.join(&key, &created);
            key
        })
        .collect();
    (id_of(&created["loop"]), keys)
}

fn quorum_request(s: &Server, loop_id: &str, quorum: Value) -> String {
    let mut body = request_body();
    body["quorum"] = quorum;
    id_of(
        &s.post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body)
            .data(201)["request"],
    )
}

/// Every reviewer answers `id` at once, reviewer `i` through
/// `servers[i % len]`, with `answer(i)`; the statuses, in reviewer order.
fn all_answer(
    servers: &[&Server],
    keys: &[String],
    id: &str,
    answer: fn(usize) -> &'static str,
) -> Vec<u16> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                let server = servers[i % servers.len()];
                scope.spawn(move || {
                    server
                        .post(
                            key,
                            &format!("/v1/api/requests/{id}/respond"),
                            json!({"response_data": answer(i)}),
                        )
                        .status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn count(statuses: &[u16], status: u16) -> usize {
    statuses.iter().filter(|s| **s == status).count()
}

fn races_are_settled_exactly_once(servers: &[&Server]) {
    let s = servers[0];
    let (loop_id, keys) = loop_with_reviewers(s);
    let mut figures = Vec::new();
    for round in 0..3 {
        // all_agree 3 of 12, everybody approving at once: exactly three
        // answers land, the third decides, the other nine are too late.
        let id = quorum_request(s, &loop_id, json!({"count": 3, "rule": "all_agree"}));
        let statuses = all_answer(servers, &keys, &id, |_| "approve");
        assert_eq!(count(&statuses, 200), 3, "round {round}: {statuses:?}");
        assert_eq!(count(&statuses, 409), 9, "round {round}: {statuses:?}");
        let request = s
            .get(&s.admin_key, &format!("/v1/api/requests/{id}"))
            .data(200)["request"]
            .clone();
        assert_eq!(request["status"], "completed");
        assert_eq!(request["response_data"], "approve");
        assert_eq!(request["responses"].as_array().unwrap().len(), 3);
        assert_eq!(request["quorum"]["answered"], 3);
        assert!(request["receipt"]["signature"].is_string());
        assert_eq!(s.logged(&id, "request.answered"), 3);
        assert_eq!(s.logged(&id, "request.completed"), 1, "decided once");

        // majority of 4 with the reviewers split: a 2-2 tie waits for a
        // fifth answer, so four or five land; the leader decides, once.
        let id = quorum_request(s, &loop_id, json!({"count": 4, "rule": "majority"}));
        let statuses = all_answer(servers, &keys, &id, |i| {
            if i % 2 == 0 {
                "approve"
            } else {
                "reject"
            }
        });
        let landed = count(&statuses, 200);
        assert!((4..=5).contains(&landed), "round {round}: {statuses:?}");
        assert_eq!(count(&statuses, 409), REVIEWERS - landed);
        let request = s
            .get(&s.admin_key, &format!("/v1/api/requests/{id}"))
            .data(200)["request"]
            .clone();
        let answers: Vec<&str> = request["responses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["response_data"].as_str().unwrap())
            .collect();
        assert_eq!(answers.len(), landed, "every answer that landed is listed");
        let approvals = answers.iter().filter(|a| **a == "approve").count();
        assert_ne!(approvals * 2, landed, "a tie never decides: {answers:?}");
        let leader = if approvals * 2 > landed {
            "approve"
        } else {
            "reject"
        };
        assert_eq!(request["status"], "completed");
        assert_eq!(request["response_data"], leader);
        assert_eq!(s.logged(&id, "request.answered"), landed);
        assert_eq!(s.logged(&id, "request.completed"), 1, "decided once");
        figures.push(landed);
    }
    eprintln!(
        "quorum races on {} instance(s): all_agree 3 of {REVIEWERS}: 3 landed each round; majority 4: {figures:?} landed",
        servers.len()
    );
}

fn on_sqlite() {
    let s = Server::start();
    races_are_settled_exactly_once(&[&s]);
}

fn across_two_instances() {
    let s = Server::start();
    let second = s.another_instance();
    races_are_settled_exactly_once(&[&s, &second]);
}

#[test]
fn quorum_races_are_settled_exactly_once_on_sqlite() {
    run_on(Backend::Sqlite, on_sqlite);
}

#[test]
fn quorum_races_are_settled_exactly_once_across_two_postgres_instances() {
    run_on(Backend::Postgres, across_two_instances);
}

/// The rules a user meets one at a time: who may answer, what the
/// requester and a reviewer see, the loop's default, and bad input.
fn each_reviewer_answers_once_and_bad_quorums_are_named() {
    let s = Server::start();
    let created = s.create_loop(&s.admin_key, "Payouts");
    let loop_id = id_of(&created["loop"]);
    let (a, b) = (s.key("a@example.com"), s.key("b@example.com"));
    s.join(&a, &created);
    s.join(&b, &created);

    // Three members, one of them the requester: two may answer.
    let mut body = request_body();
    body["quorum"] = json!({"count": 3});
    let refused = s.post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body);
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body["msg"],
        "quorum.count is 3 but the loop has only 2 active members other than the requester to answer"
    );
    let mut body = request_body();
    body["quorum"] = json!({"count": "two", "rule": "most"});
    let refused = s.post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body);
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.body["msg"],
        "quorum.count must be a whole number from 1 to 100; quorum.rule must be one of all_agree, majority"
    );

    let id = quorum_request(&s, &loop_id, json!({"count": 2, "rule": "all_agree"}));
    let respond = |key: &str, answer: &str| {
        s.post(
            key,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": answer}),
        )
    };
    let own = respond(&s.admin_key, "approve");
    assert_eq!(own.status, 403, "{}", own.body);
    let claim = s.post(&a, &format!("/v1/api/requests/{id}/claim"), json!({}));
    assert_eq!(claim.status, 409);
    let first = s
        .post(
            &a,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "approve", "comment": "first look: fine"}),
        )
        .data(200)
        .clone();
    assert_eq!(first["request"]["status"], "pending");
    assert_eq!(
        first["request"]["responses"][0]["comment"],
        "first look: fine"
    );
    assert!(first["request"]["response_comment"].is_null());
    assert_eq!(first["request"]["quorum"]["answered"], 1);
    assert_eq!(
        respond(&a, "reject").status,
        409,
        "each reviewer answers once"
    );
    // A reviewer sees its own answer only; the requester sees every one.
    let seen_by_b = s.get(&b, &format!("/v1/api/requests/{id}")).data(200)["request"].clone();
    assert_eq!(seen_by_b["responses"], json!([]));
    assert_eq!(seen_by_b["quorum"]["answered"], 1);
    // Disagreement keeps it open; with nobody left it waits for its timeout.
    assert_eq!(
        respond(&b, "reject").data(200)["request"]["status"],
        "pending"
    );
    let open = s
        .get(&s.admin_key, &format!("/v1/api/requests/{id}"))
        .data(200)["request"]
        .clone();
    let emails: Vec<&str> = open["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["email"].as_str().unwrap())
        .collect();
    assert_eq!(emails, ["a@example.com", "b@example.com"]);

    // The loop's default quorum: checked against its members, applied to
    // new requests, declined by `quorum: null`.
    let path = format!("/v1/api/loops/{loop_id}");
    let refused = s.put(&s.admin_key, &path, json!({"quorum": {"count": 3}}));
    assert_eq!(refused.status, 400);
    assert!(
        refused.body["msg"]
            .as_str()
            .unwrap()
            .starts_with("quorum.count is 3"),
        "{}",
        refused.body
    );
    let updated = s
        .put(
            &s.admin_key,
            &path,
            json!({"quorum": {"count": 2, "rule": "majority"}}),
        )
        .data(200)
        .clone();
    assert_eq!(
        updated["loop"]["quorum"],
        json!({"count": 2, "rule": "majority", "exclude_requester": true})
    );
    let id = s.create_request(&s.admin_key, &loop_id);
    let request = s
        .get(&s.admin_key, &format!("/v1/api/requests/{id}"))
        .data(200)["request"]
        .clone();
    assert_eq!(request["quorum"]["count"], 2);
    let mut body = request_body();
    body["quorum"] = Value::Null;
    let plain = s
        .post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body)
        .data(201)["request"]
        .clone();
    assert_eq!(plain["quorum"], Value::Null);
    // A plain request lists its one answer too.
    let answered = s
        .post(
            &a,
            &format!("/v1/api/requests/{}/respond", id_of(&plain)),
            json!({"response_data": "approve"}),
        )
        .data(200)["request"]
        .clone();
    assert_eq!(answered["status"], "completed");
    assert_eq!(answered["responses"][0]["email"], "a@example.com");
    let cleared = s
        .put(&s.admin_key, &path, json!({"quorum": null}))
        .data(200)
        .clone();
    assert_eq!(cleared["loop"]["quorum"], Value::Null);
}

#[test]
fn each_reviewer_answers_once_and_bad_quorums_are_named_on_sqlite() {
    run_on(
        Backend::Sqlite,
        each_reviewer_answers_once_and_bad_quorums_are_named,
    );
}
