//! Black-box: assignment beyond broadcast. A loop offers each request to a
//! few members, in turn or to the least loaded; the others neither see it
//! nor can claim it; unclaimed in time, it is offered to the next ones.
//! The round-robin turn is shared: tested on SQLite and on PostgreSQL with
//! the creates spread over two instances.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{id_of, request_body, run_on, Backend, Server};
use serde_json::{json, Value};

const MEMBERS: usize = 4;

/// A loop of the admin's with `MEMBERS` reviewers; its id, and each
/// member's key by user id (the admin's too).
fn team(s: &Server, name: &str) -> (String, HashMap<String, String>) {
    let created = s.create_loop(&s.admin_key, name);
    let loop_id = id_of(&created["loop"]);
    let mut keys = HashMap::new();
    for i in 0..MEMBERS {
        let key = s.key(&format!("{}{i}@example.com", name.to_lowercase()));
        s.join(&key, &created);
        let me = s.get(&key, "/v1/test").data(200)["user_id"]
            .as_str()
            .unwrap()
            .to_owned();
        keys.insert(me, key);
    }
    let admin = s.get(&s.admin_key, "/v1/test").data(200)["user_id"]
        .as_str()
        .unwrap()
        .to_owned();
    keys.insert(admin, s.admin_key.clone());
    (loop_id, keys)
}

fn assign(s: &Server, loop_id: &str, assignment: Value) -> Value {
    s.put(
        &s.admin_key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({ "assignment": assignment }),
    )
    .data(200)["loop"]
        .clone()
}

fn create(s: &Server, loop_id: &str, changes: Value) -> Value {
    let mut body = request_body();
    for (k, v) in changes.as_object().unwrap() {
        body[k] = v.clone();
    }
    s.post(&s.admin_key, &format!("/v1/loops/{loop_id}/requests"), body)
        .data(201)["request"]
        .clone()
}

fn offered(request: &Value) -> Vec<String> {
    request["broadcasted_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["user_id"].as_str().unwrap().to_owned())
        .collect()
}

fn only_those_offered_see_it_and_the_next_get_it_in_time() {
    let s = Server::start();
    let (loop_id, keys) = team(&s, "Support");
    let error = s
        .put(
            &s.admin_key,
            &format!("/v1/api/loops/{loop_id}"),
            json!({"assignment": {"strategy": "random", "per_request": 1}}),
        )
        .error(400)
        .to_owned();
    assert!(error.contains("assignment.strategy"), "{error}");
    let lp = assign(
        &s,
        &loop_id,
        json!({"strategy": "round_robin", "per_request": 1, "reassign_after_seconds": 2}),
    );
    assert_eq!(lp["assignment"]["strategy"], "round_robin");

    // In turn: each request to one member, never the same twice in a row,
    // everyone once before anyone twice.
    let mut order = Vec::new();
    for _ in 0..keys.len() * 2 {
        let r = create(&s, &loop_id, json!({"timeout_seconds": 3600}));
        let to = offered(&r);
        assert_eq!(to.len(), 1, "{r}");
        order.push((id_of(&r), to[0].clone()));
    }
    for pair in order.windows(2) {
        assert_ne!(pair[0].1, pair[1].1, "two in a row: {order:?}");
    }
    let first_round: std::collections::HashSet<&String> =
        order[..keys.len()].iter().map(|(_, u)| u).collect();
    assert_eq!(first_round.len(), keys.len(), "everyone once: {order:?}");

    // The others neither see it nor can claim it.
    let (id, to) = order[0].clone();
    for (_, other_key) in keys.iter().filter(|(u, k)| **u != to && **k != s.admin_key) {
        assert!(!s.inbox(other_key).contains(&id));
        s.get(other_key, &format!("/v1/api/requests/{id}"))
            .error(404);
        s.post(
            other_key,
            &format!("/v1/api/requests/{id}/claim"),
            json!({}),
        )
        .error(404);
    }
    assert!(s.inbox(&keys[&to]).contains(&id));

    // Unclaimed for two seconds, it is offered to the next member too.
    let deadline = Instant::now() + Duration::from_secs(15);
    let reassigned = loop {
        let r = s
            .get(&s.admin_key, &format!("/v1/api/requests/{id}"))
            .data(200)["request"]
            .clone();
        if offered(&r).len() >= 2 {
            break r;
        }
        assert!(Instant::now() < deadline, "never reassigned: {r}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(reassigned["broadcasted_to"][1]["role"], "reassigned");
    let next = offered(&reassigned)[1].clone();
    assert_ne!(next, to);
    assert!(s.inbox(&keys[&next]).contains(&id));
    assert!(s.logged(&id, "request.reassigned") >= 1);
    // A claimed request waits for its holder.
    assign(
        &s,
        &loop_id,
        json!({"strategy": "round_robin", "per_request": 1, "reassign_after_seconds": 2}),
    );
    let r = create(&s, &loop_id, json!({}));
    let (claimed, holder) = (id_of(&r), offered(&r)[0].clone());
    s.post(
        &keys[&holder],
        &format!("/v1/api/requests/{claimed}/claim"),
        json!({}),
    )
    .data(200);
    std::thread::sleep(Duration::from_secs(3));
    let r = s
        .get(&s.admin_key, &format!("/v1/api/requests/{claimed}"))
        .data(200)["request"]
        .clone();
    assert_eq!(
        offered(&r),
        std::slice::from_ref(&holder),
        "claimed: nobody else is asked"
    );

    // A quorum of 2 is offered to two, never its requester.
    assign(
        &s,
        &loop_id,
        json!({"strategy": "round_robin", "per_request": 1}),
    );
    let q = create(
        &s,
        &loop_id,
        json!({"quorum": {"count": 2, "rule": "all_agree"}}),
    );
    let admin = keys
        .iter()
        .find(|(_, k)| **k == s.admin_key)
        .unwrap()
        .0
        .clone();
    let to = offered(&q);
    assert_eq!(to.len(), 2);
    assert!(!to.contains(&admin));

    // Back to broadcast: everyone.
    assign(&s, &loop_id, Value::Null);
    let r = create(&s, &loop_id, json!({}));
    assert_eq!(offered(&r).len(), keys.len());
    s.assert_audit_verifies();
}

/// Least loaded: each new request goes to a member with the fewest open
/// requests, so a member whose request ended gets the next.
fn the_least_loaded_get_the_next() {
    let s = Server::start();
    let (loop_id, keys) = team(&s, "Loads");
    assign(
        &s,
        &loop_id,
        json!({"strategy": "least_loaded", "per_request": 1}),
    );
    let mut mine: HashMap<String, String> = HashMap::new();
    for _ in 0..keys.len() {
        let r = create(&s, &loop_id, json!({}));
        let to = offered(&r);
        assert_eq!(to.len(), 1);
        assert!(
            mine.insert(to[0].clone(), id_of(&r)).is_none(),
            "one each first: {mine:?}"
        );
    }
    // One member answers its request: it is the least loaded now.
    let (member, request) = mine
        .iter()
        .find(|(u, _)| keys[*u] != s.admin_key)
        .map(|(u, r)| (u.clone(), r.clone()))
        .unwrap();
    s.post(
        &keys[&member],
        &format!("/v1/api/requests/{request}/respond"),
        json!({"response_data": "approve"}),
    )
    .data(200);
    let next = create(&s, &loop_id, json!({}));
    assert_eq!(offered(&next), [member]);
}

/// Creates at once through `servers`: the shared turn gives each member
/// exactly its share.
fn the_turn_is_shared(servers: &[&Server]) {
    let s = servers[0];
    let (loop_id, keys) = team(s, "Turns");
    assign(
        s,
        &loop_id,
        json!({"strategy": "round_robin", "per_request": 1}),
    );
    let n = keys.len() * 3;
    let created: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let server = servers[i % servers.len()];
                let loop_id = loop_id.clone();
                scope.spawn(move || create(server, &loop_id, json!({})))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut counts: HashMap<String, usize> = HashMap::new();
    for r in &created {
        let to = offered(r);
        assert_eq!(to.len(), 1);
        *counts.entry(to[0].clone()).or_default() += 1;
    }
    assert_eq!(counts.len(), keys.len(), "{counts:?}");
    assert!(
        counts.values().all(|c| *c == 3),
        "each its share: {counts:?}"
    );
}

#[test]
fn assignment_offers_requests_to_a_few_on_sqlite() {
    run_on(Backend::Sqlite, || {
        only_those_offered_see_it_and_the_next_get_it_in_time();
        the_least_loaded_get_the_next();
        let s = Server::start();
        the_turn_is_shared(&[&s]);
    });
}

#[test]
fn assignment_shares_its_turn_across_two_postgres_instances() {
    run_on(Backend::Postgres, || {
        only_those_offered_see_it_and_the_next_get_it_in_time();
        the_least_loaded_get_the_next();
        let s = Server::start();
        let second = s.another_instance();
        the_turn_is_shared(&[&s, &second]);
    });
}
