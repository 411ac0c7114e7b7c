//! Black-box: two instances on one PostgreSQL database behind nginx
//! (configured from docs/nginx.conf) behave as one service: one winner per
//! claim race, each timeout once, each event delivered once per subscriber,
//! one rate limit per key, and no accepted request lost when an instance dies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::{id_of, request_body, run_on, Backend, Nginx, Server};
use diesel::sql_types::{BigInt, Text};
use diesel::{Connection, QueryableByName, RunQueryDsl};
use serde_json::json;

struct Cluster {
    /// Talks to nginx (its `base` is nginx's address).
    front: Server,
    /// The first instance's own address, behind nginx.
    first: String,
    second: Server,
    _nginx: Nginx,
}

fn cluster() -> Cluster {
    let mut front = Server::start_with(&[
        ("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true"),
        // As docs/nginx.conf says: nginx connects from here.
        ("REVIEWLOOP_TRUSTED_PROXIES", "127.0.0.1"),
        ("REVIEWLOOP_WEBHOOK_RETRY_SCHEDULE", "1,1,1"),
    ]);
    let second = front.another_instance();
    let nginx = Nginx::start(&[&front.base, &second.base]);
    let first = std::mem::replace(&mut front.base, nginx.base.clone());
    Cluster {
        front,
        first,
        second,
        _nginx: nginx,
    }
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = Text)]
    request_id: String,
    #[diesel(sql_type = BigInt)]
    events: i64,
}

fn two_instances_behind_nginx_behave_as_one() {
    let c = cluster();
    let s = &c.front;

    // One rate limit per key, counted across both instances. Each instance
    // counts in memory and shares its counts every 100 ms; calls further
    // apart than that are counted exactly (a burst may overshoot by what
    // the other instance admits within one interval, as documented).
    let limited = s.key_with("limited@example.com", &["--rate-limit", "10"]);
    let statuses: Vec<u16> = (0..14)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(250));
            s.get(&limited, "/v1/test").status
        })
        .collect();
    assert_eq!(
        statuses.iter().filter(|st| **st == 200).count(),
        10,
        "{statuses:?}"
    );
    assert!(statuses[10..].iter().all(|st| *st == 429), "{statuses:?}");

    // A subscriber, a loop, six reviewers.
    let receiver = Receiver::start();
    s.post(
        &s.admin_key,
        "/v1/api/webhooks",
        json!({"url": receiver.url("/all"), "events": ["*"]}),
    )
    .data(201);
    let created = s.create_loop(&s.admin_key, "Cluster");
    let loop_id = id_of(&created["loop"]);
    let reviewers: Vec<String> = (0..6)
        .map(|i| {
            let key = s.key(&format!("r{i}@example.com"));
            s.join(&key, &created);
            key
        })
        .collect();

    // Each claim race, spread over both instances, has one winner.
    for round in 0..5 {
        let id = s.create_request(&s.admin_key, &loop_id);
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let handles: Vec<_> = reviewers
                .iter()
                .map(|key| {
                    let id = &id;
                    scope.spawn(move || {
                        s.post(
                            key,
                            &format!("/v1/api/requests/{id}/respond"),
                            json!({"response_data": "approve"}),
                        )
                        .status
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            statuses.iter().filter(|st| **st == 200).count(),
            1,
            "round {round}: {statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|st| **st == 409).count(),
            5,
            "round {round}: {statuses:?}"
        );
    }

    // Each timeout fires once, although both instances sweep.
    let mut body = request_body();
    body["timeout_seconds"] = json!(1);
    let timed: Vec<String> = (0..5)
        .map(|_| {
            id_of(
                &s.post(
                    &s.admin_key,
                    &format!("/v1/loops/{loop_id}/requests"),
                    body.clone(),
                )
                .data(201)["request"],
            )
        })
        .collect();
    let started = Instant::now();
    while !timed.iter().all(|id| {
        s.get(&s.admin_key, &format!("/v1/requests/{id}")).data(200)["request"]["status"]
            == "timeout"
    }) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timeouts did not fire"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    let mut conn = diesel::PgConnection::establish(&s.db_url).unwrap();
    let counted: Vec<Counted> = diesel::sql_query(
        "SELECT request_id, COUNT(*) AS events FROM outbox_events WHERE event_type = 'request.timeout' GROUP BY request_id",
    )
    .load(&mut conn)
    .unwrap();
    assert_eq!(counted.len(), 5);
    assert!(
        counted
            .iter()
            .all(|c| c.events == 1 && timed.contains(&c.request_id)),
        "one timeout event per request"
    );

    // Each event reaches the subscriber once, unless an attempt failed.
    let total: i64 =
        diesel::sql_query("SELECT COUNT(*) AS events, '' AS request_id FROM outbox_events")
            .get_result::<Counted>(&mut conn)
            .unwrap()
            .events;
    let got = receiver.wait_until(Duration::from_secs(20), |r| r.len() as i64 >= total);
    std::thread::sleep(Duration::from_secs(2));
    let mut per_event: HashMap<String, usize> = HashMap::new();
    for delivery in receiver.received() {
        *per_event
            .entry(delivery.header("webhook-id").to_owned())
            .or_default() += 1;
    }
    assert_eq!(
        per_event.len() as i64,
        total,
        "every event arrived ({} deliveries)",
        got.len()
    );
    // Delivery is at least once: an event may arrive again only after an
    // attempt at it was recorded as failed (on a loaded machine an attempt
    // can outlast its 10 s limit although the receiver got it), never
    // because two instances sent it at once.
    for (event_id, arrivals) in per_event.iter().filter(|(_, n)| **n > 1) {
        let failed: i64 = diesel::sql_query(format!(
            "SELECT COUNT(*) AS events, '' AS request_id FROM delivery_attempts a \
             JOIN deliveries d ON a.delivery_id = d.id \
             WHERE d.event_id = '{}' AND NOT a.success",
            event_id.replace('\'', "")
        ))
        .get_result::<Counted>(&mut conn)
        .unwrap()
        .events;
        assert!(
            failed >= (*arrivals as i64) - 1,
            "event {event_id} arrived {arrivals} times with {failed} failed attempts: {per_event:?}"
        );
    }
}

/// A long-poll waiting on one instance wakes when the other instance
/// records the answer: the change is announced between instances, so the
/// waiter does not sleep out its 20 seconds.
fn a_long_poll_on_one_instance_hears_an_answer_given_on_the_other() {
    let c = cluster();
    let created = c.front.create_loop(&c.front.admin_key, "Across");
    let reviewer = c.front.key("across@example.com");
    c.front.join(&reviewer, &created);
    let loop_id = id_of(&created["loop"]);
    let id = c.front.create_request(&c.front.admin_key, &loop_id);
    let started = Instant::now();
    let waited = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            let answered = c
                .front
                .http()
                .post(format!("{}/v1/api/requests/{id}/respond", c.first))
                .bearer_auth(&reviewer)
                .json(&json!({"response_data": "approve"}))
                .send()
                .unwrap();
            assert_eq!(answered.status(), 200);
        });
        c.second.get(
            &c.front.admin_key,
            &format!("/v1/api/requests/{id}?wait=20"),
        )
    });
    assert_eq!(waited.data(200)["request"]["status"], "completed");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the waiter slept {:?}",
        started.elapsed()
    );
}

/// Keys are cached per instance for at most a second: a key revoked by
/// the CLI (another process) stops working on every instance within 2 s.
fn a_revoked_key_stops_working_on_every_instance_within_two_seconds() {
    let c = cluster();
    let created = c
        .front
        .cli(&["key", "create", "--email", "gone@example.com", "--json"]);
    let key = created["api_key"].as_str().unwrap().to_owned();
    let key_id = created["api_key_id"].as_str().unwrap().to_owned();
    // Both instances (nginx alternates) have the key in their caches.
    for _ in 0..4 {
        assert_eq!(c.front.get(&key, "/v1/test").status, 200);
        assert_eq!(c.second.get(&key, "/v1/test").status, 200);
    }
    c.front.cli(&["key", "revoke", &key_id, "--json"]);
    let revoked = Instant::now();
    loop {
        let statuses = [
            c.front.get(&key, "/v1/test").status,
            c.front.get(&key, "/v1/test").status,
            c.second.get(&key, "/v1/test").status,
        ];
        if statuses == [401, 401, 401] {
            break;
        }
        assert!(
            revoked.elapsed() < Duration::from_secs(2),
            "still accepted {:?} after revocation: {statuses:?}",
            revoked.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn killing_an_instance_loses_no_accepted_request() {
    let mut c = cluster();
    let loop_id = id_of(&c.front.create_loop(&c.front.admin_key, "Failover")["loop"]);
    let mut accepted = Vec::new();
    let mut refused = 0;
    for i in 0..40 {
        if i == 10 {
            c.second.kill();
        }
        let reply = c.front.call(
            reqwest::Method::POST,
            Some(&c.front.admin_key.clone()),
            &format!("/v1/loops/{loop_id}/requests"),
            Some(request_body()),
        );
        match reply.status {
            201 => accepted.push(id_of(&reply.body["data"]["request"])),
            _ => refused += 1,
        }
    }
    assert!(
        accepted.len() >= 30,
        "the surviving instance took over ({refused} refused)"
    );
    for id in &accepted {
        assert_eq!(
            c.front
                .get(&c.front.admin_key, &format!("/v1/requests/{id}"))
                .status,
            200,
            "accepted {id} was kept"
        );
    }
    let listed = c.front.get(
        &c.front.admin_key,
        &format!("/v1/loops/{loop_id}/requests?limit=200"),
    );
    assert_eq!(
        listed.data(200)["total"].as_u64().unwrap() as usize,
        accepted.len(),
        "and nothing unaccepted was stored"
    );
}

/// Each instance restarted in turn (SIGTERM, then a new process on the
/// same address) while clients call through nginx: not one call fails.
fn restarting_each_instance_in_turn_fails_no_call() {
    let mut c = cluster();
    // A key whose limit the load does not reach.
    let key = c.front.key("rolling@example.com");
    let loop_id = id_of(&c.front.create_loop(&key, "Rolling")["loop"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..3)
        .map(|n| {
            let (base, key, loop_id, stop) = (
                c.front.base.clone(),
                key.clone(),
                loop_id.clone(),
                stop.clone(),
            );
            common::load::until_stopped(stop, reqwest::blocking::Client::new(), move |http, _| {
                if n == 0 {
                    http.post(format!("{base}/v1/loops/{loop_id}/requests"))
                        .bearer_auth(&key)
                        .json(&request_body())
                        .send()
                } else {
                    http.get(format!("{base}/v1/api/loops"))
                        .bearer_auth(&key)
                        .send()
                }
            })
        })
        .collect();
    let ready = |address: &str| {
        let http = reqwest::blocking::Client::new();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if http
                .get(format!("{address}/ready"))
                .send()
                .is_ok_and(|r| r.status() == 200)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{address} never became ready");
    };
    std::thread::sleep(Duration::from_secs(1));
    let first = c.first.clone();
    assert!(c.front.stop_gracefully().success());
    c.front.relaunch_at(&first);
    ready(&first);
    std::thread::sleep(Duration::from_secs(1));
    let second = c.second.base.clone();
    assert!(c.second.stop_gracefully().success());
    c.second.relaunch_at(&second);
    ready(&second);
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut total = 0;
    for client in clients {
        let (calls, failed) = client.join().unwrap();
        total += calls;
        assert!(
            failed.is_empty(),
            "{} of {calls} calls failed: {failed:?}",
            failed.len()
        );
    }
    assert!(total > 200, "a real load: {total} calls");
}

#[test]
fn behind_nginx_restarting_each_instance_in_turn_fails_no_call() {
    run_on(
        Backend::Postgres,
        restarting_each_instance_in_turn_fails_no_call,
    );
}

#[test]
fn behind_nginx_two_instances_behave_as_one() {
    run_on(Backend::Postgres, two_instances_behind_nginx_behave_as_one);
}

#[test]
fn behind_nginx_a_long_poll_on_one_instance_hears_an_answer_given_on_the_other() {
    run_on(
        Backend::Postgres,
        a_long_poll_on_one_instance_hears_an_answer_given_on_the_other,
    );
}

#[test]
fn behind_nginx_a_revoked_key_stops_working_on_every_instance_within_two_seconds() {
    run_on(
        Backend::Postgres,
        a_revoked_key_stops_working_on_every_instance_within_two_seconds,
    );
}

#[test]
fn behind_nginx_killing_an_instance_loses_no_accepted_request() {
    run_on(
        Backend::Postgres,
        killing_an_instance_loses_no_accepted_request,
    );
}
