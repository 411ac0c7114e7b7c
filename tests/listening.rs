//! Black-box: waiting for answers without webhooks, by long-poll and by
//! the Server-Sent Events stream with resume.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{id_of, request_body, Server, PREFIXES};
use serde_json::{json, Value};

fn loop_with_reviewer(server: &Server) -> (String, String) {
    let created = server.create_loop(&server.admin_key, "Listening");
    let reviewer = server.key("rev@example.com");
    server.join(&reviewer, &created);
    (id_of(&created["loop"]), reviewer)
}

fn a_long_poll_returns_as_soon_as_the_request_is_answered() {
    let server = Server::start();
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    for prefix in PREFIXES {
        let created = server.post(
            &server.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            request_body(),
        );
        let id = id_of(&created.data(201)["request"]);
        let started = Instant::now();
        let answered = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(800));
                server
                    .post(
                        &reviewer,
                        &format!("/v1/requests/{id}/respond"),
                        json!({"response_data": "approve"}),
                    )
                    .data(200);
            });
            server.get(
                &server.admin_key,
                &format!("{prefix}/requests/{id}?wait=20"),
            )
        });
        let elapsed = started.elapsed();
        let request = &answered.data(200)["request"];
        assert_eq!(request["status"], "completed");
        assert_eq!(request["response_data"], "approve");
        assert!(
            elapsed >= Duration::from_millis(700) && elapsed < Duration::from_secs(5),
            "{elapsed:?}"
        );
    }
}

fn a_long_poll_on_an_open_request_returns_it_when_the_wait_is_over() {
    let server = Server::start();
    let (loop_id, _) = loop_with_reviewer(&server);
    let created = server.post(
        &server.admin_key,
        &format!("/v1/loops/{loop_id}/requests"),
        request_body(),
    );
    let id = id_of(&created.data(201)["request"]);
    let started = Instant::now();
    let reply = server.get(&server.admin_key, &format!("/v1/api/requests/{id}?wait=1"));
    assert_eq!(reply.data(200)["request"]["status"], "pending");
    assert!(started.elapsed() >= Duration::from_millis(900));
    for bad in ["61", "-1", "soon"] {
        let reply = server.get(
            &server.admin_key,
            &format!("/v1/api/requests/{id}?wait={bad}"),
        );
        assert_eq!(
            reply.error(400),
            "wait must be a whole number of seconds from 0 to 60"
        );
    }
}

/// One parsed Server-Sent Event.
#[derive(Debug)]
struct Sse {
    id: String,
    event: String,
    data: Value,
}

/// Opens the stream and forwards its events to a channel.
fn listen(
    server: &Server,
    key: &str,
    path: &str,
    last_event_id: Option<&str>,
) -> mpsc::Receiver<Sse> {
    let mut request = server
        .http()
        .get(format!("{}{path}", server.base))
        .bearer_auth(key);
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id);
    }
    let response = request.send().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut id, mut event, mut data) = (String::new(), String::new(), String::new());
        for line in BufReader::new(response).lines().map_while(Result::ok) {
            if let Some(v) = line.strip_prefix("id: ") {
                id = v.to_owned();
            } else if let Some(v) = line.strip_prefix("event: ") {
                event = v.to_owned();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data = v.to_owned();
            } else if line.is_empty() && !event.is_empty() {
                let parsed = Sse {
                    id: id.clone(),
                    event: event.clone(),
                    data: serde_json::from_str(&data).unwrap(),
                };
                if tx.send(parsed).is_err() {
                    return;
                }
                event.clear();
            }
        }
    });
    rx
}

fn next_of(rx: &mpsc::Receiver<Sse>, kind: &str) -> Sse {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no {kind} event"));
        if event.event == kind {
            return event;
        }
    }
}

fn the_event_stream_delivers_completions_and_resumes_after_the_last_event() {
    let server = Server::start();
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    let live = listen(&server, &server.admin_key, "/v1/api/events", None);
    std::thread::sleep(Duration::from_millis(300));

    let created = server.post(
        &server.admin_key,
        &format!("/v1/loops/{loop_id}/requests"),
        request_body(),
    );
    let id = id_of(&created.data(201)["request"]);
    let first = next_of(&live, "request.created");
    assert_eq!(first.data["data"]["request"]["id"], id.as_str());
    server
        .post(
            &reviewer,
            &format!("/v1/requests/{id}/respond"),
            json!({"response_data": "reject"}),
        )
        .data(200);
    let completed = next_of(&live, "request.completed");
    assert_eq!(completed.data["event"], "request.completed");
    assert_eq!(completed.data["data"]["request"]["response_data"], "reject");
    assert_eq!(
        completed.data["data"]["reviewer"]["email"],
        "rev@example.com"
    );
    assert!(completed.id.parse::<i64>().unwrap() > first.id.parse::<i64>().unwrap());

    // A client that lost the connection after the first event resumes from it.
    let resumed = listen(&server, &server.admin_key, "/v1/events", Some(&first.id));
    let again = resumed.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        (again.id, again.event.as_str()),
        (completed.id.clone(), "request.completed")
    );

    // Another account, reading from the very first event, hears nothing of it;
    // the owner, reading the same way, hears both.
    let stranger = server.key("stranger@example.com");
    let theirs = listen(&server, &stranger, "/v1/api/events?last_event_id=0", None);
    assert_eq!(
        theirs
            .recv_timeout(Duration::from_millis(1500))
            .map(|e| e.event),
        Err(mpsc::RecvTimeoutError::Timeout),
        "no event crossed accounts, and the stream is still open"
    );
    let mine = listen(
        &server,
        &server.admin_key,
        "/v1/api/events?last_event_id=0",
        None,
    );
    assert_eq!(
        mine.recv_timeout(Duration::from_secs(5)).unwrap().event,
        "loop.member_joined"
    );
    assert_eq!(next_of(&mine, "request.created").id, first.id);

    let bad = server
        .http()
        .get(format!("{}/v1/api/events", server.base))
        .bearer_auth(&server.admin_key)
        .header("Last-Event-ID", "abc")
        .send()
        .unwrap();
    assert_eq!(bad.status(), 400);
}

/// Waiters are woken by changes, not by re-reading: a loop deleted with
/// its requests must wake them too, with the 404 a read would give.
fn a_long_poll_ends_with_404_when_its_loop_is_deleted() {
    let server = Server::start();
    let (loop_id, _) = loop_with_reviewer(&server);
    let id = server.create_request(&server.admin_key, &loop_id);
    let started = Instant::now();
    let waited = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            server
                .delete(
                    &server.admin_key,
                    &format!("/v1/api/loops/{loop_id}?force=true"),
                )
                .data(200);
        });
        server.get(&server.admin_key, &format!("/v1/api/requests/{id}?wait=30"))
    });
    assert_eq!(waited.error(404), "Request not found");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the waiter slept {:?}",
        started.elapsed()
    );
}

on_every_backend!(
    a_long_poll_ends_with_404_when_its_loop_is_deleted,
    a_long_poll_returns_as_soon_as_the_request_is_answered,
    a_long_poll_on_an_open_request_returns_it_when_the_wait_is_over,
    the_event_stream_delivers_completions_and_resumes_after_the_last_event,
);
