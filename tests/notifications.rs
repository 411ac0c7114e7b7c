//! Black-box: reviewers hear of new requests by email (through a real SMTP
//! conversation) and in the loop's Slack channel (a local receiver plays
//! Slack); a dead mail server is retried and the broadcast entry says why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::smtp::{free_port, SmtpSink};
use common::{id_of, request_body, Server};
use serde_json::{json, Value};

/// The loop "Refunds", with one reviewer who joined; (loop id, reviewer key).
fn loop_with_reviewer(server: &Server) -> (String, String) {
    let created = server.create_loop(&server.admin_key, "Refunds");
    let reviewer = server.key("rev@example.com");
    server.join(&reviewer, &created);
    (id_of(&created["loop"]), reviewer)
}

fn create(server: &Server, loop_id: &str, text: &str) -> Value {
    let mut body = request_body();
    body["request_text"] = json!(text);
    server
        .post(
            &server.admin_key,
            &format!("/v1/loops/{loop_id}/requests"),
            body,
        )
        .data(201)["request"]
        .clone()
}

/// The broadcast entries of request `id` as (email, sent, error).
fn entries(server: &Server, id: &str) -> Vec<(String, bool, Option<String>)> {
    let reply = server.get(&server.admin_key, &format!("/v1/requests/{id}"));
    reply.data(200)["request"]["broadcasted_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["email"].as_str().unwrap().to_owned(),
                b["notification_sent"].as_bool().unwrap(),
                b["notification_error"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// Polls the entries of `id` until `pred` holds, or fails.
fn wait_for_entries(
    server: &Server,
    id: &str,
    pred: impl Fn(&[(String, bool, Option<String>)]) -> bool,
) -> Vec<(String, bool, Option<String>)> {
    let started = Instant::now();
    loop {
        let got = entries(server, id);
        if pred(&got) {
            return got;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "entries never got there: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn a_new_request_is_emailed_to_members_and_posted_to_slack() {
    let sink = SmtpSink::start();
    let slack = Receiver::start();
    let server = Server::start_with(&[
        ("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true"),
        ("REVIEWLOOP_SMTP_URL", &sink.url()),
        ("REVIEWLOOP_SMTP_FROM", "Reviews <reviews@example.com>"),
    ]);
    let (loop_id, _) = loop_with_reviewer(&server);
    let slack_url = format!("{}/services/T1/B2", slack.base);
    let updated = server.put(
        &server.admin_key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({"slack_webhook_url": slack_url}),
    );
    let shown = &updated.data(200)["loop"];
    assert_eq!(shown["slack_configured"], true);
    assert!(
        !shown.to_string().contains("/services/T1"),
        "the Slack URL is a secret"
    );

    let request = create(&server, &loop_id, "Refund <b>order</b> #1042?\nAmount: $40");
    let id = id_of(&request);
    for entry in request["broadcasted_to"].as_array().unwrap() {
        assert_eq!(entry["notification_sent"], false, "not sent yet: {entry}");
        assert_eq!(entry["notification_error"], Value::Null);
    }

    let mails = sink.wait_until(Duration::from_secs(15), |m| m.len() >= 2);
    let mut to: Vec<String> = mails.iter().flat_map(|m| m.to.clone()).collect();
    to.sort();
    assert_eq!(to, ["<admin@localhost>", "<rev@example.com>"]);
    let mail = mails
        .iter()
        .find(|m| m.to == ["<rev@example.com>"])
        .unwrap()
        .readable();
    assert!(
        mail.contains("From: Reviews <reviews@example.com>"),
        "{mail}"
    );
    assert!(
        mail.contains("Subject: [Refunds] New high request: Refund <b>order</b> #1042?"),
        "{mail}"
    );
    let link = format!("{}/app/requests/{id}", server.base);
    assert!(mail.contains(&format!("Review it: {link}")), "{mail}");
    assert!(mail.contains("Priority: high"));
    assert!(
        mail.contains("Content-Type: text/html"),
        "an HTML part: {mail}"
    );
    assert!(
        mail.contains("Refund &lt;b&gt;order&lt;/b&gt; #1042?"),
        "the HTML part escapes the automation's text: {mail}"
    );

    let posted = slack.wait_until(Duration::from_secs(15), |r| !r.is_empty());
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].path, "/services/T1/B2");
    let text = posted[0].json()["text"].as_str().unwrap().to_owned();
    assert!(text.starts_with("*New high request in Refunds*"), "{text}");
    assert!(
        text.contains("> Refund &lt;b&gt;order&lt;/b&gt; #1042?"),
        "{text}"
    );
    assert!(text.contains(&format!("<{link}|Review it>")), "{text}");

    wait_for_entries(&server, &id, |e| {
        e.iter().all(|(_, sent, err)| *sent && err.is_none())
    });
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(sink.mails().len(), 2, "each member is emailed once");
    assert_eq!(slack.received().len(), 1);

    // A blank URL stops the posts.
    let cleared = server.put(
        &server.admin_key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({"slack_webhook_url": ""}),
    );
    assert_eq!(cleared.data(200)["loop"]["slack_configured"], false);
}

fn a_dead_mail_server_is_retried_and_the_entry_says_why() {
    let port = free_port();
    let server = Server::start_with(&[
        ("REVIEWLOOP_SMTP_URL", &format!("smtp://127.0.0.1:{port}")),
        ("REVIEWLOOP_NOTIFY_RETRY_SCHEDULE", "1,1,1,1,1,1,1,1,1,1"),
    ]);
    let (loop_id, _) = loop_with_reviewer(&server);
    let id = id_of(&create(&server, &loop_id, "Approve the invoice?"));
    let failing = wait_for_entries(&server, &id, |e| e.iter().all(|(_, _, err)| err.is_some()));
    for (email, sent, error) in &failing {
        assert!(!sent, "{email}");
        let error = error.as_deref().unwrap();
        assert!(
            error.starts_with("the mail server refused or could not be reached"),
            "{error}"
        );
        assert!(error.chars().count() <= 200);
    }
    let sink = SmtpSink::start_on(port);
    sink.wait_until(Duration::from_secs(15), |m| m.len() >= 2);
    wait_for_entries(&server, &id, |e| {
        e.iter().all(|(_, sent, err)| *sent && err.is_none())
    });
}

fn without_smtp_every_entry_says_email_is_not_configured() {
    let server = Server::start();
    let (loop_id, _) = loop_with_reviewer(&server);
    let request = create(&server, &loop_id, "Ship it?");
    for entry in request["broadcasted_to"].as_array().unwrap() {
        assert_eq!(entry["notification_sent"], false);
        assert_eq!(
            entry["notification_error"],
            "not notified: email is not configured"
        );
    }
}

fn slack_urls_are_checked_like_webhook_targets() {
    let server = Server::start();
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    let path = format!("/v1/api/loops/{loop_id}");
    for (url, says) in [
        (
            "ftp://hooks.example.com/x",
            "slack_webhook_url must be an http or https URL",
        ),
        ("http://127.0.0.1:9/x", "slack_webhook_url is not allowed"),
    ] {
        let reply = server.put(&server.admin_key, &path, json!({"slack_webhook_url": url}));
        let message = reply.error(400).to_owned();
        assert!(message.contains(says), "{url}: {message}");
    }
    let reply = server.put(&server.admin_key, &path, json!({"slack_webhook_url": 42}));
    reply.error(400);
    let reply = server.put(
        &reviewer,
        &path,
        json!({"slack_webhook_url": "https://hooks.example.com/x"}),
    );
    reply.error(403);
}

on_every_backend!(
    a_new_request_is_emailed_to_members_and_posted_to_slack,
    a_dead_mail_server_is_retried_and_the_entry_says_why,
    without_smtp_every_entry_says_email_is_not_configured,
    slack_urls_are_checked_like_webhook_targets,
);
