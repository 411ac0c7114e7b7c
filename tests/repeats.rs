//! Black-box: fewer questions for people. Requests that repeat an open
//! one join it and end with it; a loop may join repeats by their
//! question and reuse a person's recent answer; creates racing with one
//! key make one open request, tested on SQLite and on PostgreSQL with the
//! creates spread over two instances.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::people::Person;
use common::{id_of, request_body, run_on, Backend, Server};
use serde_json::{json, Value};

/// A loop of the admin's with two reviewers; the loop's id and their keys.
fn loop_with_reviewers(s: &Server, name: &str) -> (String, Vec<String>) {
    let created = s.create_loop(&s.admin_key, name);
    let keys = (0..2)
        .map(|i| {
            let key = s.key(
                &format!("{name}{i}@example.com")
                    .to_lowercase()
                    .replace(' ', ""),
            );
            s.join(&key, &created);
            key
        })
        .collect();
    (id_of(&created["loop"]), keys)
}

fn create(s: &Server, key: &str, loop_id: &str, changes: Value) -> Value {
    let mut body = request_body();
    for (k, v) in changes.as_object().unwrap() {
        body[k] = v.clone();
    }
    s.post(key, &format!("/v1/loops/{loop_id}/requests"), body)
        .data(201)["request"]
        .clone()
}

fn read(s: &Server, key: &str, id: &str) -> Value {
    s.get(key, &format!("/v1/api/requests/{id}")).data(200)["request"].clone()
}

fn answer(s: &Server, key: &str, id: &str, answer: &str) {
    s.post(
        key,
        &format!("/v1/api/requests/{id}/respond"),
        json!({"response_data": answer}),
    )
    .data(200);
}

fn a_repeat_joins_the_open_request_and_ends_with_it() {
    let s = Server::start();
    let (loop_id, reviewers) = loop_with_reviewers(&s, "Deploys");
    let first = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "deploy-7"}),
    );
    let first_id = id_of(&first);
    assert_eq!(first["coalesced_into"], Value::Null);
    assert_eq!(first["coalesce_key"], "deploy-7");
    let joined = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "deploy-7", "metadata": {"run": 2}, "callback_url": null}),
    );
    let joined_id = id_of(&joined);
    assert_eq!(joined["coalesced_into"], first_id.as_str());
    assert_eq!(joined["broadcasted_to"], json!([]), "nobody is asked again");
    assert_eq!(joined["status"], "pending");
    assert_eq!(joined["timeout_at"], first["timeout_at"]);
    // Reviewers see the question once, and cannot reach the repeat.
    assert_eq!(s.inbox(&reviewers[0]), std::slice::from_ref(&first_id));
    s.get(&reviewers[0], &format!("/v1/api/requests/{joined_id}"))
        .error(404);
    s.post(
        &reviewers[0],
        &format!("/v1/api/requests/{joined_id}/respond"),
        json!({"response_data": "approve"}),
    )
    .error(404);

    answer(&s, &reviewers[0], &first_id, "approve");
    let ended = read(&s, &s.admin_key, &joined_id);
    assert_eq!(ended["status"], "completed");
    assert_eq!(ended["response_data"], "approve");
    assert_eq!(
        ended["response_by"],
        read(&s, &s.admin_key, &first_id)["response_by"]
    );
    assert_eq!(ended["responses"].as_array().unwrap().len(), 1);
    assert_eq!(ended["metadata"], json!({"run": 2}), "its own metadata");
    assert!(ended["receipt"]["signature"].is_string(), "its own receipt");
    assert_eq!(
        s.logged(&joined_id, "request.completed"),
        1,
        "its own event"
    );
    assert_eq!(s.logged(&first_id, "request.completed"), 1);
    // The reviewer answered once, and its list says so.
    let answered: Vec<String> = s.get(&reviewers[0], "/v1/api/inbox?view=done").data(200)
        ["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect();
    assert!(!answered.contains(&joined_id), "{answered:?}");

    // Once it ended, the key asks people again.
    let again = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "deploy-7"}),
    );
    assert_eq!(again["coalesced_into"], Value::Null);
    assert_eq!(again["broadcasted_to"].as_array().unwrap().len(), 3);

    // Cancelling the open request ends those that joined it the same way.
    let repeat = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "deploy-7"}),
    );
    s.delete(&s.admin_key, &format!("/v1/api/requests/{}", id_of(&again)))
        .data(200);
    assert_eq!(
        read(&s, &s.admin_key, &id_of(&repeat))["status"],
        "cancelled"
    );

    // Keys never cross accounts, and test requests never join live ones.
    let other = s.key("someone-else@example.com");
    let lp = s.get(&s.admin_key, &format!("/v1/api/loops/{loop_id}"));
    s.join(&other, &lp.data(200)["loop"]);
    let live = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "shared"}),
    );
    let theirs = create(&s, &other, &loop_id, json!({"coalesce_key": "shared"}));
    assert_eq!(theirs["coalesced_into"], Value::Null);
    let test_key = s.key_with("admin@localhost", &["--test"]);
    let test = create(&s, &test_key, &loop_id, json!({"coalesce_key": "shared"}));
    assert_eq!(test["coalesced_into"], Value::Null);
    let test_repeat = create(&s, &test_key, &loop_id, json!({"coalesce_key": "shared"}));
    assert_eq!(test_repeat["coalesced_into"], id_of(&test).as_str());
    assert_ne!(id_of(&live), id_of(&test));
    // The test clock times the test request out, and its repeat with it.
    s.post(
        &test_key,
        "/v1/api/test/clock",
        json!({"advance_seconds": 3600}),
    )
    .data(200);
    let repeat = read(&s, &test_key, &id_of(&test_repeat));
    assert_eq!(repeat["status"], "timeout");
    assert_eq!(repeat["response_data"], "reject");

    // A shared question stays as it is; a request that joined changes
    // nothing; a key names one kind of answer.
    let open = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "shared-q"}),
    );
    let follower = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"coalesce_key": "shared-q"}),
    );
    let error = s
        .call(
            reqwest::Method::PATCH,
            Some(&s.admin_key),
            &format!("/v1/api/requests/{}", id_of(&open)),
            Some(json!({"request_text": "Something else?"})),
        )
        .error(400)
        .to_owned();
    assert!(error.contains("coalesce_key"), "{error}");
    s.call(
        reqwest::Method::PATCH,
        Some(&s.admin_key),
        &format!("/v1/api/requests/{}", id_of(&follower)),
        Some(json!({"priority": "low"})),
    )
    .error(400);
    let mut other_kind = request_body();
    other_kind["coalesce_key"] = json!("shared-q");
    other_kind["response_type"] = json!("boolean");
    other_kind["response_config"] = json!({});
    other_kind["default_response"] = json!(false);
    let error = s
        .post(
            &s.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            other_kind,
        )
        .error(400)
        .to_owned();
    assert!(error.contains("coalesce_key"), "{error}");

    // What is wrong is named.
    let mut bad = request_body();
    bad["coalesce_key"] = json!("");
    let error = s
        .post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), bad)
        .error(400)
        .to_owned();
    assert!(error.contains("coalesce_key"), "{error}");
    s.assert_audit_verifies();
}

fn a_loop_joins_repeated_questions_and_reuses_answers() {
    let s = Server::start();
    let (loop_id, reviewers) = loop_with_reviewers(&s, "Refunds");
    let path = format!("/v1/api/loops/{loop_id}");
    let error = s
        .put(
            &s.admin_key,
            &path,
            json!({"coalesce": {"window_seconds": 0}}),
        )
        .error(400)
        .to_owned();
    assert!(error.contains("coalesce.window_seconds"), "{error}");
    let lp = s
        .put(
            &s.admin_key,
            &path,
            json!({"coalesce": {"window_seconds": 600}, "reuse_answers": {"window_seconds": 600}}),
        )
        .data(200)["loop"]
        .clone();
    assert_eq!(lp["coalesce"], json!({"window_seconds": 600}));
    assert_eq!(lp["reuse_answers"], json!({"window_seconds": 600}));
    // A person sets the same in the loop's settings, in minutes.
    s.set_password("admin@localhost", PASSWORD);
    let admin = Person::new(&s);
    admin.sign_in("admin@localhost", PASSWORD);
    let settings = format!("/app/loops/{loop_id}/settings");
    let (_, html) = admin.page(&settings);
    assert!(html.contains("Repeated questions"), "{html}");
    assert!(html.contains("name=\"coalesce_minutes\""));
    let edit = format!("/app/loops/{loop_id}/edit");
    let refused = admin.submit(
        &settings,
        &edit,
        &[
            ("name", "Refunds"),
            ("coalesce_minutes", "soon"),
            ("reuse_minutes", ""),
        ],
    );
    assert_eq!(refused.status(), 400);
    let text = refused.text().unwrap();
    assert!(
        text.contains("Join a repeated question for this many minutes"),
        "{text}"
    );
    admin.submit(
        &settings,
        &edit,
        &[
            ("name", "Refunds"),
            ("coalesce_minutes", "10"),
            ("reuse_minutes", "5"),
        ],
    );
    let lp = s.get(&s.admin_key, &path).data(200)["loop"].clone();
    assert_eq!(lp["coalesce"], json!({"window_seconds": 600}));
    assert_eq!(lp["reuse_answers"], json!({"window_seconds": 300}));

    // The same question joins; another context is another question.
    let first = create(&s, &s.admin_key, &loop_id, json!({}));
    let same = create(&s, &s.admin_key, &loop_id, json!({"metadata": {"run": 2}}));
    assert_eq!(same["coalesced_into"], id_of(&first).as_str());
    let other = create(
        &s,
        &s.admin_key,
        &loop_id,
        json!({"context": {"post_id": 43}}),
    );
    assert_eq!(other["coalesced_into"], Value::Null);
    assert!(first["coalesce_key"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));

    // Once a person answered, the question is answered at once.
    answer(&s, &reviewers[1], &id_of(&first), "approve");
    let reused = create(&s, &s.admin_key, &loop_id, json!({}));
    assert_eq!(reused["status"], "completed");
    assert_eq!(reused["reused_from"], id_of(&first).as_str());
    assert_eq!(reused["response_data"], "approve");
    assert_eq!(reused["broadcasted_to"].as_array().unwrap().len(), 1);
    assert!(reused["receipt"]["signature"].is_string());
    let signed = reused["receipt"]["signed"].as_str().unwrap().to_owned();
    assert!(!signed.is_empty());
    assert_eq!(s.logged(&id_of(&reused), "request.completed"), 1);
    // The answer that joined it is the person's too, but the reused one
    // points at the request the person answered.
    assert_eq!(read(&s, &s.admin_key, &id_of(&same))["status"], "completed");

    // The pages say what happened, and analytics count what was saved.
    let (_, html) = admin.page(&format!("/app/requests/{}", id_of(&first)));
    assert!(
        html.contains("Answered together with 1 other request"),
        "{html}"
    );
    let (_, html) = admin.page(&format!("/app/requests/{}", id_of(&same)));
    assert!(html.contains("Asked the same question as"), "{html}");
    let (_, html) = admin.page(&format!("/app/requests/{}", id_of(&reused)));
    assert!(html.contains("Answer reused from"), "{html}");
    let (_, html) = admin.page("/app/analytics?days=7");
    assert!(
        html.contains(
            "<span class=\"value\">2</span><span class=\"hint\">questions nobody was asked again"
        ),
        "{html}"
    );

    // Turned off, every request asks people again.
    s.put(
        &s.admin_key,
        &path,
        json!({"coalesce": null, "reuse_answers": null}),
    )
    .data(200);
    let asked = create(&s, &s.admin_key, &loop_id, json!({}));
    assert_eq!(asked["status"], "pending");
    assert_eq!(asked["reused_from"], Value::Null);
    assert_eq!(asked["coalesced_into"], Value::Null);
    s.assert_audit_verifies();
}

const RACERS: usize = 8;
const PASSWORD: &str = "correct horse battery";

/// `RACERS` creates with one key at once, creator `i` through
/// `servers[i % len]`: exactly one asks people, the others join it.
fn racing_creates_make_one_open_request(servers: &[&Server]) {
    let s = servers[0];
    let (loop_id, _) = loop_with_reviewers(s, "Races");
    for round in 0..3 {
        let key = format!("race-{round}");
        let created: Vec<Value> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..RACERS)
                .map(|i| {
                    let server = servers[i % servers.len()];
                    let (key, loop_id) = (key.clone(), loop_id.clone());
                    scope.spawn(move || {
                        let mut body = request_body();
                        body["coalesce_key"] = json!(key);
                        server
                            .post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body)
                            .data(201)["request"]
                            .clone()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let asking: Vec<&Value> = created
            .iter()
            .filter(|r| r["coalesced_into"].is_null())
            .collect();
        assert_eq!(asking.len(), 1, "round {round}: {created:?}");
        let open = id_of(asking[0]);
        assert!(
            created
                .iter()
                .filter(|r| !r["coalesced_into"].is_null())
                .all(|r| r["coalesced_into"] == open.as_str()),
            "round {round}"
        );
    }
}

fn on_sqlite() {
    a_repeat_joins_the_open_request_and_ends_with_it();
    a_loop_joins_repeated_questions_and_reuses_answers();
    let s = Server::start();
    racing_creates_make_one_open_request(&[&s]);
}

fn on_postgres() {
    a_repeat_joins_the_open_request_and_ends_with_it();
    a_loop_joins_repeated_questions_and_reuses_answers();
    let s = Server::start();
    let second = s.another_instance();
    racing_creates_make_one_open_request(&[&s, &second]);
}

#[test]
fn repeated_questions_are_asked_once_on_sqlite() {
    run_on(Backend::Sqlite, on_sqlite);
}

#[test]
fn repeated_questions_are_asked_once_across_two_postgres_instances() {
    run_on(Backend::Postgres, on_postgres);
}
