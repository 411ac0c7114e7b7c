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
    create_with(server, loop_id, json!({ "request_text": text }))
}

/// Creates the usual request with `changes` laid over its fields.
fn create_with(server: &Server, loop_id: &str, changes: Value) -> Value {
    let mut body = request_body();
    for (field, value) in changes.as_object().unwrap() {
        body[field] = value.clone();
    }
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

/// Who got mail so far, sorted, without angle brackets.
fn recipients(mails: &[common::smtp::Mail]) -> Vec<String> {
    let mut to: Vec<String> = mails
        .iter()
        .flat_map(|m| m.to.iter().map(|t| t.trim_matches(['<', '>']).to_owned()))
        .collect();
    to.sort();
    to
}

/// The first line of `mail` that starts with `prefix`, without it.
fn line_after(mail: &str, prefix: &str) -> String {
    mail.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in {mail}"))
        .trim()
        .to_owned()
}

fn each_member_chooses_what_they_hear_of() {
    let sink = SmtpSink::start();
    let server = Server::start_with(&[("REVIEWLOOP_SMTP_URL", &sink.url())]);
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    let path = format!("/v1/api/loops/{loop_id}/notifications");

    // The reviewer turns them off through the API.
    let saved = server.put(&reviewer, &path, json!({"notify": "none"}));
    let member = &saved.data(200)["member"];
    assert_eq!(
        (member["email"].as_str(), member["notify"].as_str()),
        (Some("rev@example.com"), Some("none"))
    );
    let bad = server.put(&reviewer, &path, json!({"notify": "sometimes"}));
    assert_eq!(bad.error(400), "notify must be one of all, urgent, none");
    let stranger = server.key("stranger@example.com");
    server
        .put(&stranger, &path, json!({"notify": "all"}))
        .error(404);

    // The owner picks "high and critical only" on the loop page.
    server.set_password("admin@localhost", "owner password 1");
    let owner = common::people::Person::new(&server);
    owner.sign_in("admin@localhost", "owner password 1");
    let page = format!("/app/loops/{loop_id}");
    let (_, html) = owner.page(&page);
    assert!(html.contains("Your notifications"), "{html}");
    let saved = owner.submit(
        &page,
        &format!("/app/loops/{loop_id}/notify"),
        &[("notify", "urgent")],
    );
    let html = saved.text().unwrap();
    assert!(html.contains("Notification preference saved."), "{html}");
    assert!(
        html.contains(r#"value="urgent" checked"#),
        "the page shows the choice: {html}"
    );

    let low = id_of(&create_with(
        &server,
        &loop_id,
        json!({"priority": "low", "request_text": "Tag this photo?"}),
    ));
    let told = entries(&server, &low);
    assert_eq!(
        told,
        [
            (
                "admin@localhost".to_owned(),
                false,
                Some(
                    "not notified: the member asked for high and critical requests only".to_owned()
                )
            ),
            (
                "rev@example.com".to_owned(),
                false,
                Some("not notified: the member turned notifications off for this loop".to_owned())
            ),
        ]
    );
    let critical = id_of(&create_with(
        &server,
        &loop_id,
        json!({"priority": "critical", "request_text": "Stop the release?"}),
    ));
    sink.wait_until(Duration::from_secs(15), |m| !m.is_empty());
    wait_for_entries(&server, &critical, |e| e[0].1);
    std::thread::sleep(Duration::from_millis(800));
    let mails = sink.mails();
    assert_eq!(
        recipients(&mails),
        ["admin@localhost"],
        "only the owner, only the critical one"
    );
    assert!(mails[0]
        .readable()
        .contains("Subject: [Refunds] New critical request: Stop the release?"));
}

fn invitations_and_password_resets_are_emailed() {
    let sink = SmtpSink::start();
    let server = Server::start_with(&[("REVIEWLOOP_SMTP_URL", &sink.url())]);
    let created = server.create_loop(&server.admin_key, "Refunds");
    let loop_id = id_of(&created["loop"]);
    server
        .post(
            &server.admin_key,
            &format!("/v1/api/loops/{loop_id}/members"),
            json!({"email": "new@example.com"}),
        )
        .data(201);
    let mails = sink.wait_until(Duration::from_secs(15), |m| !m.is_empty());
    assert_eq!(recipients(&mails), ["new@example.com"]);
    let invitation = mails[0].readable();
    assert!(
        invitation.contains("Subject: You are invited to review in Refunds"),
        "{invitation}"
    );
    let join = line_after(&invitation, "Join the loop: ");
    assert_eq!(join, created["join_url"].as_str().unwrap());
    let newcomer = common::people::Person::new(&server);
    let (status, html) = newcomer.page(join.strip_prefix(&server.base).unwrap());
    assert_eq!(status, 200);
    assert!(html.contains("Refunds"));

    // Forgotten password: the same answer for a known and an unknown email.
    let person = common::people::Person::new(&server);
    let (status, html) = person.page("/login");
    assert_eq!(status, 200);
    assert!(html.contains(r#"href="/forgot""#));
    let answer = |email: &str| -> String {
        let reply = person.submit("/forgot", "/forgot", &[("email", email)]);
        assert_eq!(reply.status().as_u16(), 200);
        reply.text().unwrap()
    };
    let known = answer("admin@localhost");
    let unknown = answer("nobody@example.com");
    let said = |html: &str, email: &str| {
        html.contains(&format!("If <strong>{email}</strong> has an account here, a link to set a new password is on its way."))
    };
    assert!(said(&known, "admin@localhost"), "{known}");
    assert!(said(&unknown, "nobody@example.com"), "{unknown}");
    let mails = sink.wait_until(Duration::from_secs(15), |m| m.len() >= 2);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        recipients(&sink.mails()),
        ["admin@localhost", "new@example.com"],
        "nothing goes to an address without an account"
    );
    let reset = mails
        .iter()
        .find(|m| m.to == ["<admin@localhost>"])
        .unwrap()
        .readable();
    assert!(
        reset.contains("Subject: Reset your reviewloop password"),
        "{reset}"
    );
    let link = line_after(&reset, "Set a new password: ");
    let link = link.strip_prefix(&server.base).unwrap().to_owned();
    let (status, html) = person.page(&link);
    assert_eq!(status, 200, "{html}");
    let done = person.submit(&link, &link, &[("password", "a brand new one")]);
    assert_eq!(done.url().path(), "/app", "signed in with the new password");
    let (status, _) = person.page(&link);
    assert_eq!(status, 404, "the link works once");
    common::people::Person::new(&server).sign_in("admin@localhost", "a brand new one");
}

fn a_member_is_reminded_once_near_the_deadline() {
    let sink = SmtpSink::start();
    let server = Server::start_with(&[("REVIEWLOOP_SMTP_URL", &sink.url())]);
    let (loop_id, _) = loop_with_reviewer(&server);
    let updated = server.put(
        &server.admin_key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({"reminders": true}),
    );
    assert_eq!(updated.data(200)["loop"]["reminders"], true);
    let started = Instant::now();
    create_with(
        &server,
        &loop_id,
        json!({"timeout_seconds": 8, "request_text": "Approve the refund?"}),
    );
    let mails = sink.wait_until(Duration::from_secs(20), |m| m.len() >= 4);
    let reminders: Vec<String> = mails
        .iter()
        .map(|m| m.readable())
        .filter(|m| m.contains("Subject: [Refunds] Reminder, answer by "))
        .collect();
    assert_eq!(reminders.len(), 2, "one each");
    assert!(
        started.elapsed() >= Duration::from_secs(5),
        "not before a quarter of the time is left"
    );
    assert!(reminders[0].contains("is still waiting for an answer"));
    assert!(reminders[0].contains("If nobody answers by then, the default answer is used."));
    // Past the timeout: nobody is reminded again.
    std::thread::sleep(
        Duration::from_secs(8).saturating_sub(started.elapsed()) + Duration::from_secs(2),
    );
    assert_eq!(sink.mails().len(), 4);
}

fn a_crash_between_the_change_and_the_send_loses_no_email() {
    let port = free_port();
    let mut server = Server::start_with(&[
        ("REVIEWLOOP_SMTP_URL", &format!("smtp://127.0.0.1:{port}")),
        ("REVIEWLOOP_NOTIFY_RETRY_SCHEDULE", "1,1,1,1,1,1,1,1,1,1"),
    ]);
    let (loop_id, _) = loop_with_reviewer(&server);
    let id = id_of(&create(&server, &loop_id, "Approve the invoice?"));
    // SIGKILL right after the answer: the mail server was down, so nothing
    // can have been sent yet.
    server.kill();
    let sink = SmtpSink::start_on(port);
    server.relaunch();
    // A kill in the middle of an attempt leaves that notice leased for its
    // 60 s; the new process sends it once the lease runs out.
    sink.wait_until(Duration::from_secs(90), |m| m.len() >= 2);
    wait_for_entries(&server, &id, |e| {
        e.iter().all(|(_, sent, err)| *sent && err.is_none())
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        recipients(&sink.mails()),
        ["admin@localhost", "rev@example.com"],
        "each member once"
    );
}

fn reviews_are_emailed_to_assignees_and_their_team() {
    let sink = SmtpSink::start();
    let server = Server::start_with(&[("REVIEWLOOP_SMTP_URL", &sink.url())]);
    let key = &server.admin_key;
    let team = server
        .post(key, "/v1/teams", json!({"name": "Editors"}))
        .data_b(201)
        .clone();
    let team_id = id_of(&team);
    let member = server.key("member@example.com");
    let code = server
        .get(key, &format!("/v1/api/loops/{team_id}"))
        .data(200)["loop"]["invite_code"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .post(&member, "/v1/api/loops/join", json!({"invite_code": code}))
        .data(200);
    let template = id_of(
        server
            .post(
                key,
                "/v1/templates",
                json!({"name": "Post", "fields": [{"name": "ok", "type": "boolean", "required": true}]}),
            )
            .data_b(201),
    );
    let review = server
        .post(
            key,
            "/v1/reviews",
            json!({
                "template_id": template,
                "content": {"text": "Launch <script>alert(1)</script> post"},
                "assignees": ["ana@example.com"],
                "team_id": team_id,
                "priority": "high",
            }),
        )
        .data_b(201)
        .clone();
    let id = id_of(&review);
    let mails = sink.wait_until(Duration::from_secs(15), |m| m.len() >= 3);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        recipients(&sink.mails()),
        ["admin@localhost", "ana@example.com", "member@example.com"],
        "the assignee once, and each team member once"
    );
    let to = |who: &str| {
        mails
            .iter()
            .find(|m| m.to == [format!("<{who}>")])
            .unwrap()
            .readable()
    };
    let assigned = to("ana@example.com");
    assert!(
        assigned
            .contains("Subject: New high review for you: Launch <script>alert(1)</script> post"),
        "{assigned}"
    );
    assert!(assigned.contains(&format!("Review it: {}/app/reviews/{id}", server.base)));
    assert!(
        assigned.contains("Launch &lt;script&gt;alert(1)&lt;/script&gt; post"),
        "escaped in HTML: {assigned}"
    );
    assert!(to("member@example.com").contains("Subject: [Editors] New high review: Launch"));
}

/// The one-click link of `label` in the text part of `mail`.
fn one_click(mail: &str, label: &str) -> String {
    let url = line_after(mail, &format!("  {label}: "));
    let at = url.find("/answer/").expect("an answer link");
    url[at..].to_owned()
}

fn an_email_answers_in_one_click_after_a_confirmation() {
    let sink = SmtpSink::start();
    let server = Server::start_with(&[("REVIEWLOOP_SMTP_URL", &sink.url())]);
    let created = server.create_loop(&server.admin_key, "Refunds");
    for who in ["rev@example.com", "second@example.com"] {
        server.join(&server.key(who), &created);
    }
    let loop_id = id_of(&created["loop"]);
    let request = create(&server, &loop_id, "Refund order #1042?");
    let id = id_of(&request);
    let mails = sink.wait_until(Duration::from_secs(15), |m| {
        recipients(m).contains(&"second@example.com".to_owned())
            && recipients(m).contains(&"rev@example.com".to_owned())
    });
    let mail_of = |who: &str| {
        mails
            .iter()
            .find(|m| m.to == [format!("<{who}>")])
            .unwrap()
            .readable()
    };
    let rev_mail = mail_of("rev@example.com");
    assert!(
        rev_mail.contains("Answer in one click"),
        "the text part offers each answer: {rev_mail}"
    );
    let (approve, reject) = (
        one_click(&rev_mail, "approve"),
        one_click(&rev_mail, "reject"),
    );
    assert!(
        rev_mail.contains(&format!("href=\"{}{approve}\"", server.base)),
        "and the HTML part: {rev_mail}"
    );
    assert_ne!(approve, reject);

    let visitor = common::people::Person::new(&server);
    // Following a link (as a mail scanner does) answers nothing.
    let (status, page) = visitor.page(&approve);
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("Answer <strong>approve</strong> as rev@example.com?"),
        "{page}"
    );
    let (status, _) = visitor.page(&approve);
    assert_eq!(status, 200);
    let status_of = || {
        server
            .get(&server.admin_key, &format!("/v1/api/requests/{id}"))
            .data(200)["request"]
            .clone()
    };
    assert_eq!(status_of()["status"], "pending");

    // A form posted from another site is refused.
    let forged = visitor.post_raw(&approve, &[], Some("https://evil.example"));
    assert_eq!(forged.status().as_u16(), 403);
    assert_eq!(status_of()["status"], "pending");

    // Confirming answers as the member, who claims it first.
    let done = visitor.post_raw(&approve, &[], Some(&server.base));
    assert_eq!(done.status().as_u16(), 200);
    let done = done.text().unwrap();
    assert!(
        done.contains("Done: you answered <strong>approve</strong>"),
        "{done}"
    );
    let answered = status_of();
    assert_eq!(answered["status"], "completed");
    assert_eq!(answered["response_data"], "approve");
    assert_eq!(answered["responses"][0]["email"], "rev@example.com");
    assert!(answered["claimed_at"].is_string());

    // A used link is gone; the other answer's link says what happened.
    assert_eq!(visitor.page(&approve).0, 404);
    assert_eq!(
        visitor
            .post_raw(&approve, &[], Some(&server.base))
            .status()
            .as_u16(),
        404
    );
    let (status, page) = visitor.page(&reject);
    assert_eq!(status, 200);
    assert!(
        page.contains("You answered this request already."),
        "{page}"
    );
    let other = one_click(&mail_of("second@example.com"), "reject");
    let late = visitor.post_raw(&other, &[], Some(&server.base));
    assert_eq!(late.status().as_u16(), 200);
    let late = late.text().unwrap();
    assert!(
        late.contains("rev@example.com answered this request already."),
        "{late}"
    );
    assert!(late.contains("Nothing was changed."));
    assert_eq!(status_of()["response_data"], "approve");

    // A token that is not real is a 404 page.
    let (status, page) = visitor.page(&format!("/answer/{}", "0".repeat(64)));
    assert_eq!(status, 404);
    assert!(page.contains("This answer link is not valid"), "{page}");
    assert_eq!(visitor.page("/answer/nonsense").0, 404);
}

fn a_quorum_counts_a_one_click_answer_and_long_lists_get_no_links() {
    let sink = SmtpSink::start();
    let server = Server::start_with(&[("REVIEWLOOP_SMTP_URL", &sink.url())]);
    let (loop_id, reviewer) = loop_with_reviewer(&server);
    let request = create_with(
        &server,
        &loop_id,
        json!({"quorum": {"count": 1, "rule": "majority"}, "exclude_requester": true}),
    );
    let id = id_of(&request);
    let mails = sink.wait_until(Duration::from_secs(15), |m| {
        recipients(m).contains(&"rev@example.com".to_owned())
    });
    let mail = mails
        .iter()
        .find(|m| m.to == ["<rev@example.com>"])
        .unwrap()
        .readable();
    let visitor = common::people::Person::new(&server);
    let done = visitor.post_raw(&one_click(&mail, "reject"), &[], Some(&server.base));
    assert_eq!(done.status().as_u16(), 200);
    let seen = server.get(&reviewer, &format!("/v1/api/requests/{id}"));
    let seen = &seen.data(200)["request"];
    assert_eq!(seen["quorum"]["answered"], 1, "{seen}");
    assert_eq!(seen["status"], "completed");
    assert_eq!(seen["response_data"], "reject");

    let options: Vec<String> = (1..=7).map(|n| format!("option {n}")).collect();
    let long = create_with(
        &server,
        &loop_id,
        json!({"response_config": {"options": options}, "default_response": "option 1"}),
    );
    assert_eq!(long["status"], "pending");
    let mails = sink.wait_until(Duration::from_secs(15), |m| {
        m.iter().filter(|m| m.to == ["<rev@example.com>"]).count() >= 2
    });
    let last = mails
        .iter()
        .rfind(|m| m.to == ["<rev@example.com>"])
        .unwrap()
        .readable();
    assert!(
        !last.contains("/answer/"),
        "seven options: no one-click links: {last}"
    );
    assert!(last.contains("Review it: "));
}

on_every_backend!(
    an_email_answers_in_one_click_after_a_confirmation,
    a_quorum_counts_a_one_click_answer_and_long_lists_get_no_links,
    reviews_are_emailed_to_assignees_and_their_team,
    a_new_request_is_emailed_to_members_and_posted_to_slack,
    a_dead_mail_server_is_retried_and_the_entry_says_why,
    without_smtp_every_entry_says_email_is_not_configured,
    slack_urls_are_checked_like_webhook_targets,
    each_member_chooses_what_they_hear_of,
    invitations_and_password_resets_are_emailed,
    a_member_is_reminded_once_near_the_deadline,
    a_crash_between_the_change_and_the_send_loses_no_email,
);
