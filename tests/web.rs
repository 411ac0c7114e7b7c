//! The web application over plain HTTP, as a person's browser speaks it:
//! sign-in and its throttle, the first-start link, sign-up through a join
//! link, answering through a widget, keys made in the dashboard, forged
//! forms refused, and one account's pages closed to another.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::people::{csrf_of, Person};
use common::{id_of, Server};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

fn first_start_link_sets_the_admin_password_once() {
    let server = Server::start();
    let link = server.setup_link();
    let path = link
        .strip_prefix(&server.base)
        .expect("a link to this server");
    let admin = Person::new(&server);
    let (status, html) = admin.page(path);
    assert_eq!(status, 200);
    assert!(html.contains("admin@localhost"));

    let short = admin.submit(path, path, &[("password", "short")]);
    assert_eq!(short.status(), 400);
    assert!(short
        .text()
        .unwrap()
        .contains("password must be at least 8 characters"));

    let done = admin.submit(path, path, &[("password", PASSWORD)]);
    assert_eq!(done.url().path(), "/app");
    assert!(done.text().unwrap().contains("<h1>Inbox</h1>"));

    let again = Person::new(&server);
    let (status, html) = again.page(path);
    assert_eq!(status, 404, "the link works once");
    assert!(html.contains("invalid, expired or already used"));
    again.sign_in("admin@localhost", PASSWORD);
}

fn a_wrong_password_and_an_unknown_email_read_the_same_and_are_throttled() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let person = Person::new(&server);
    let wrong = person.submit(
        "/login",
        "/login",
        &[("email", "admin@localhost"), ("password", "not the one")],
    );
    assert_eq!(wrong.status(), 401);
    let wrong = wrong.text().unwrap();
    let unknown = person.submit(
        "/login",
        "/login",
        &[("email", "nobody@example.com"), ("password", "not the one")],
    );
    assert_eq!(unknown.status(), 401);
    let unknown = unknown.text().unwrap();
    assert!(wrong.contains("Email or password is incorrect"));
    assert!(unknown.contains("Email or password is incorrect"));
    assert!(
        wrong.contains("value=\"admin@localhost\""),
        "the email is kept"
    );

    for _ in 0..4 {
        person.submit(
            "/login",
            "/login",
            &[("email", "admin@localhost"), ("password", "x")],
        );
    }
    let locked = person.submit(
        "/login",
        "/login",
        &[("email", "admin@localhost"), ("password", PASSWORD)],
    );
    assert_eq!(
        locked.status(),
        429,
        "five failures lock the email for a while"
    );
    assert!(locked.text().unwrap().contains("Too many attempts"));
}

fn forged_forms_are_refused_and_pages_carry_a_strict_policy() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);
    let (_, html) = admin.page("/app/loops");
    let token = csrf_of(&html);

    let no_token = admin.post_raw("/app/loops", &[("name", "A")], Some(&server.base));
    assert_eq!(no_token.status(), 403);
    let other_site = admin.post_raw(
        "/app/loops",
        &[("csrf", &token), ("name", "A")],
        Some("https://evil.example"),
    );
    assert_eq!(other_site.status(), 403);
    let ok = admin.post_raw(
        "/app/loops",
        &[("csrf", &token), ("name", "A")],
        Some(&server.base),
    );
    assert_eq!(ok.status(), 200);
    assert!(ok.url().path().starts_with("/app/loops/"), "{}", ok.url());

    let page = admin.get("/app");
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    // What the framework refuses on its own is a page here too.
    let wrong_method = admin
        .client
        .put(format!("{}/login", server.base))
        .send()
        .unwrap();
    assert_eq!(wrong_method.status(), 405);
    assert!(wrong_method.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let huge = "x".repeat(2 * 1024 * 1024);
    let too_big = admin.post_raw(
        "/app/loops",
        &[("csrf", &token), ("name", &huge)],
        Some(&server.base),
    );
    assert_eq!(too_big.status(), 413);
    assert!(too_big.text().unwrap().contains("too large"));
    let (status, _) = Person::new(&server).page("/app");
    assert_eq!(status, 200, "signed out: the sign-in page");
    assert!(Person::new(&server)
        .get("/app")
        .url()
        .path()
        .starts_with("/login"));
}

/// Owner makes a loop through the API; a new person opens its join link,
/// signs up, lands in the inbox as an active member, sees a request and
/// answers it through the widget; the API reads the exact answer.
fn a_new_reviewer_signs_up_from_the_join_link_and_answers_in_the_browser() {
    let server = Server::start();
    let owner = &server.admin_key;
    let created = server.create_loop(owner, "Refunds");
    let loop_id = id_of(&created["loop"]);
    let code = created["invite_code"].as_str().unwrap().to_owned();

    let reviewer = Person::new(&server);
    let (status, join) = reviewer.page(&format!("/join/{code}"));
    assert_eq!(status, 200);
    assert!(join.contains("Refunds") && join.contains("Create an account and join"));
    let signup = format!("/signup?code={code}");
    let bad = reviewer.submit(
        &signup,
        "/signup",
        &[("email", "nope"), ("password", "short"), ("code", &code)],
    );
    assert_eq!(bad.status(), 400);
    let bad = bad.text().unwrap();
    assert!(bad.contains("email must be a valid email address"));
    assert!(bad.contains("password must be at least 8 characters"));
    assert!(bad.contains("value=\"nope\""), "what was typed is kept");

    let landed = reviewer.submit(
        &signup,
        "/signup",
        &[
            ("email", "rita@example.com"),
            ("password", PASSWORD),
            ("code", &code),
        ],
    );
    assert_eq!(landed.url().path(), "/app");
    assert!(landed
        .text()
        .unwrap()
        .contains("You joined <strong>Refunds</strong>"));
    let members = server.get(owner, &format!("/v1/api/loops/{loop_id}/members"));
    let rita = members.data(200)["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "rita@example.com")
        .cloned()
        .expect("rita is a member");
    assert_eq!(rita["status"], "active");

    let body = json!({
        "processing_type": "time-sensitive", "type": "markdown", "priority": "high",
        "request_text": "Refund **$40**?\n\n<script>alert(1)</script>",
        "response_type": "multi_select",
        "response_config": {"options": ["Refund", "Apologise", "<b>Escalate</b>"]},
        "timeout_seconds": 600, "platform": "api"
    });
    let id = id_of(
        &server
            .post(owner, &format!("/v1/api/loops/{loop_id}/requests"), body)
            .data(201)["request"],
    );
    let (_, inbox) = reviewer.page("/app");
    assert!(
        inbox.contains(&format!("/app/requests/{id}")),
        "the request is in the inbox"
    );
    let (_, review) = reviewer.page(&format!("/app/requests/{id}"));
    assert!(
        review.contains("<strong>$40</strong>"),
        "Markdown is rendered"
    );
    assert!(!review.contains("<script>alert"), "raw HTML is not");
    assert!(!review.contains("<b>Escalate</b>") && review.contains("&lt;b&gt;Escalate&lt;/b&gt;"));

    let page = format!("/app/requests/{id}");
    let action = format!("/app/requests/{id}/respond");
    let refused = reviewer.submit(&page, &action, &[]);
    assert_eq!(refused.status(), 400);
    let refused = refused.text().unwrap();
    assert!(
        refused.contains("response_data"),
        "the API's own message: {refused}"
    );

    let answered = reviewer.submit(
        &page,
        &action,
        &[
            ("answer", "Refund"),
            ("answer", "<b>Escalate</b>"),
            ("_comment", "Refunded <i>once</i>"),
        ],
    );
    assert!(
        answered.url().as_str().contains("done=answered"),
        "{}",
        answered.url()
    );
    let seen = server.get(owner, &format!("/v1/api/requests/{id}"));
    assert_eq!(seen.data(200)["request"]["status"], "completed");
    assert_eq!(
        seen.data(200)["request"]["response_data"],
        json!(["Refund", "<b>Escalate</b>"])
    );
    assert_eq!(
        seen.data(200)["request"]["response_comment"],
        "Refunded <i>once</i>"
    );
    let (_, shown) = reviewer.page(&page);
    assert!(
        shown.contains("Refunded &lt;i&gt;once&lt;/i&gt;") && !shown.contains("<i>once"),
        "the comment is shown, escaped"
    );
    assert!(
        shown.contains("Answered <time") && !shown.contains("Deadline was"),
        "an answered request says when it was answered, not a past deadline"
    );
    assert!(
        shown.contains(" before its deadline"),
        "and how long before its deadline"
    );
    let (_, done) = reviewer.page("/app?tab=done");
    assert!(done.contains(&format!("/app/requests/{id}")));

    // Signed in, another loop is joined from the inbox's box by pasting
    // its link; a wrong code is said beside the box, and nothing changes.
    let second = server.create_loop(owner, "Chargebacks");
    let second_id = id_of(&second["loop"]);
    let link = second["join_url"].as_str().unwrap().to_owned();
    assert!(link.ends_with(second["invite_code"].as_str().unwrap()));
    let (_, inbox) = reviewer.page("/app");
    assert!(inbox.contains("Join another loop"), "{inbox}");
    let wrong = reviewer.submit("/app", "/app/join", &[("code", "not-a-code")]);
    assert_eq!(wrong.status(), 400);
    let wrong = wrong.text().unwrap();
    assert!(wrong.contains("This invite code is not valid"), "{wrong}");
    assert!(
        wrong.contains(r#"value="not-a-code""#),
        "what was typed is kept"
    );
    let joined = reviewer.submit("/app", "/app/join", &[("code", &format!(" {link} "))]);
    assert_eq!(joined.url().path(), "/app");
    assert!(joined
        .text()
        .unwrap()
        .contains("You joined <strong>Chargebacks</strong>"));
    let members = server.get(owner, &format!("/v1/api/loops/{second_id}/members"));
    assert!(members.data(200)["members"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["email"] == "rita@example.com" && m["status"] == "active"));
}

fn a_key_made_in_the_dashboard_works_until_revoked_there() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);
    let made = admin.submit(
        "/app/keys",
        "/app/keys",
        &[
            ("name", "n8n"),
            ("permissions", "requests:read"),
            ("rate_limit", "50"),
        ],
    );
    assert_eq!(made.status(), 200);
    let html = made.text().unwrap();
    let marker = "id=\"new-key\" type=\"text\" readonly value=\"";
    let start = html.find(marker).expect("the new key is shown") + marker.len();
    let key = html[start..].split('"').next().unwrap().to_owned();
    let check = server.get(&key, "/v1/test");
    assert_eq!(check.data(200)["permissions"], json!(["requests:read"]));
    assert_eq!(check.data(200)["rate_limit"]["limit"], 50);
    assert_eq!(check.data(200)["email"], "admin@localhost");

    let bad = admin.submit(
        "/app/keys",
        "/app/keys",
        &[("name", "x"), ("rate_limit", "lots")],
    );
    assert_eq!(bad.status(), 400);
    assert!(bad
        .text()
        .unwrap()
        .contains("rate_limit must be a whole number"));

    let key_id = check.data(200)["api_key_id"].as_str().unwrap().to_owned();
    // One click asks first, and changes nothing.
    let asked = admin.submit("/app/keys", &format!("/app/keys/{key_id}/revoke"), &[]);
    assert_eq!(asked.status(), 200);
    let question = asked.text().unwrap();
    assert!(question.contains("Revoke this key?"), "{question}");
    assert_eq!(server.get(&key, "/v1/test").status, 200, "not yet");
    let revoked = admin.post_raw(
        &format!("/app/keys/{key_id}/revoke"),
        &[("csrf", csrf_of(&question).as_str()), ("confirmed", "yes")],
        Some(&server.base),
    );
    assert_eq!(revoked.status(), 200);
    assert!(revoked.url().as_str().ends_with("/app/keys?done=revoked"));
    assert!(revoked.text().unwrap().contains("The key was revoked"));
    assert_eq!(server.get(&key, "/v1/test").status, 401, "revoked at once");
}

/// A stranger signed in to another account sees none of it: every page of
/// another account's loop and request is a 404, and so is every action.
fn a_strangers_session_sees_none_of_another_accounts_pages() {
    let server = Server::start_with(&[("REVIEWLOOP_SIGNUP", "open")]);
    let owner = &server.admin_key;
    let created = server.create_loop(owner, "Private");
    let loop_id = id_of(&created["loop"]);
    let request = server.create_request(owner, &loop_id);

    let stranger = Person::new(&server);
    let landed = stranger.submit(
        "/signup",
        "/signup",
        &[("email", "eve@example.com"), ("password", PASSWORD)],
    );
    assert_eq!(landed.url().path(), "/app");
    let (_, inbox) = stranger.page("/app");
    assert!(!inbox.contains(&request));
    for path in [
        format!("/app/requests/{request}"),
        format!("/app/loops/{loop_id}"),
        format!("/app/loops/{loop_id}/settings"),
        format!("/app/loops/{loop_id}/rules"),
        format!("/app/loops/{loop_id}/delete"),
    ] {
        let (status, html) = stranger.page(&path);
        assert_eq!(status, 404, "{path}");
        assert!(!html.contains("Private"), "{path}");
    }
    for action in ["claim", "respond", "cancel", "feedback"] {
        let r = stranger.submit(
            "/app",
            &format!("/app/requests/{request}/{action}"),
            &[("answer", "x")],
        );
        assert_eq!(r.status(), 404, "{action}");
    }
    for action in ["edit", "regenerate", "invite", "delete"] {
        let r = stranger.submit(
            "/app",
            &format!("/app/loops/{loop_id}/{action}"),
            &[("name", "mine")],
        );
        assert_eq!(r.status(), 404, "{action}");
    }
    let key_id = server.get(owner, "/v1/test").data(200)["api_key_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = stranger.submit("/app/keys", &format!("/app/keys/{key_id}/revoke"), &[]);
    assert_eq!(r.status(), 404, "another account's key");
    assert_eq!(server.get(owner, "/v1/test").status, 200, "still works");
    let (_, requests) = stranger.page("/app/requests");
    assert!(!requests.contains(&request));
    let seen: Value = server
        .get(owner, &format!("/v1/api/loops/{loop_id}"))
        .data(200)
        .clone();
    assert_eq!(seen["loop"]["name"], "Private", "nothing changed");
}

/// The analytics page counts what happened, for the owner's loops only.
fn analytics_count_the_owners_requests() {
    let server = Server::start_with(&[("REVIEWLOOP_SIGNUP", "open")]);
    server.set_password("admin@localhost", PASSWORD);
    let owner = &server.admin_key;
    let loop_id = id_of(&server.create_loop(owner, "Counted")["loop"]);
    let answered = server.create_request(owner, &loop_id);
    server.create_request(owner, &loop_id);
    server
        .post(
            owner,
            &format!("/v1/api/requests/{answered}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200);
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);
    let (status, html) = admin.page("/app/analytics?days=30");
    assert_eq!(status, 200);
    assert!(
        html.contains("<span class=\"value\">2</span>"),
        "two requests: {html}"
    );
    assert!(
        html.contains("admin@localhost"),
        "the one answer is the admin's"
    );
    assert!(html.contains("<svg"), "charts are drawn on the server");
    let (status, html) = admin.page("/app/analytics?days=9");
    assert_eq!(status, 400);
    assert!(html.contains("days must be 7 or 30"));

    let stranger = Person::new(&server);
    stranger.submit(
        "/signup",
        "/signup",
        &[("email", "eve@example.com"), ("password", PASSWORD)],
    );
    let (status, _) = stranger.page(&format!("/app/analytics?loop={loop_id}"));
    assert_eq!(status, 404);
    let (_, html) = stranger.page("/app/analytics");
    assert!(html.contains("<span class=\"value\">0</span>"));
}

/// Webhooks are made in the dashboard; their deliveries, attempts and
/// response codes show there, and a delivery can be made again.
fn webhooks_are_managed_and_their_deliveries_seen_in_the_dashboard() {
    let server = Server::start_with(&[("REVIEWLOOP_ALLOW_PRIVATE_TARGETS", "true")]);
    server.set_password("admin@localhost", PASSWORD);
    let receiver = common::receiver::Receiver::start();
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);

    let bad = admin.submit(
        "/app/webhooks",
        "/app/webhooks",
        &[("url", "ftp://nope"), ("events", "*")],
    );
    assert_eq!(bad.status(), 400);
    let bad = bad.text().unwrap();
    assert!(bad.contains("url"), "{bad}");
    assert!(
        bad.contains("value=\"ftp://nope\""),
        "the URL typed is kept"
    );

    let url = receiver.url("/hook");
    let made = admin.submit(
        "/app/webhooks",
        "/app/webhooks",
        &[("url", &url), ("events", "request.created")],
    );
    assert_eq!(made.status(), 200);
    let html = made.text().unwrap();
    assert!(
        html.contains("id=\"webhook-secret\""),
        "the secret is shown once"
    );
    let marker = "href=\"/app/webhooks/";
    let start = html.find(marker).expect("the new webhook is listed") + marker.len();
    let id = html[start..start + 24].to_owned();

    let loop_id = id_of(&server.create_loop(&server.admin_key, "Hooked")["loop"]);
    server.create_request(&server.admin_key, &loop_id);
    receiver.wait_until(std::time::Duration::from_secs(15), |r| !r.is_empty());
    let page = format!("/app/webhooks/{id}");
    let mut seen = String::new();
    for _ in 0..50 {
        seen = admin.page(&page).1;
        if seen.contains("HTTP 200") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        seen.contains("request.created") && seen.contains("HTTP 200"),
        "{seen}"
    );
    assert!(
        !seen.contains("id=\"webhook-secret\""),
        "the secret is not shown again"
    );
    let again = admin.submit(
        &page,
        &format!("{page}/redeliver"),
        &[("delivery_id", &{
            let m = "name=\"delivery_id\" value=\"";
            let at = seen.find(m).expect("a delivery") + m.len();
            seen[at..at + 24].to_owned()
        })],
    );
    assert!(
        again.url().as_str().contains("done=redelivered"),
        "{}",
        again.url()
    );
    receiver.wait_until(std::time::Duration::from_secs(15), |r| r.len() >= 2);
    let tested = admin.submit(&page, &format!("{page}/test"), &[]);
    assert_eq!(tested.status(), 200);
    assert!(tested
        .text()
        .unwrap()
        .contains("The test event was answered HTTP 200"));
    let got = receiver.wait_until(std::time::Duration::from_secs(15), |r| r.len() >= 3);
    assert!(got.iter().any(|r| r.json()["event"] == "webhook.test"));

    let stranger = Person::new(&server);
    server.set_password(
        &{
            server.key("eve@example.com");
            "eve@example.com".to_owned()
        },
        PASSWORD,
    );
    stranger.sign_in("eve@example.com", PASSWORD);
    assert_eq!(stranger.page(&page).0, 404);
    assert_eq!(
        stranger
            .submit("/app", &format!("{page}/delete"), &[])
            .status(),
        404
    );
    assert_eq!(admin.page(&page).0, 200, "still there");
}

/// Sessions live in the database: a browser signed in on one instance is
/// signed in on the other, and signing out on one ends it on both. (Several
/// instances share PostgreSQL; an SQLite file takes one.)
#[test]
fn a_session_made_on_one_instance_works_on_another() {
    common::run_on(common::Backend::Postgres, session_across_instances);
}

fn session_across_instances() {
    let first = Server::start();
    first.set_password("admin@localhost", PASSWORD);
    let second = first.another_instance();
    let mut person = Person::new(&first);
    person.sign_in("admin@localhost", PASSWORD);
    person.base = second.base.clone();
    let (status, html) = person.page("/app/account");
    assert_eq!(status, 200);
    assert!(html.contains("admin@localhost"));
    let out = person.submit("/app/account", "/logout", &[]);
    assert_eq!(out.url().path(), "/login");
    person.base = first.base.clone();
    assert!(person.get("/app").url().path().starts_with("/login"));
}

/// An email invited to a loop claims its account by signing up with that
/// loop's code; an invited account that already has API keys is someone's
/// working account and cannot be taken that way.
fn an_invited_email_claims_its_account_but_a_working_account_is_not_taken() {
    let server = Server::start();
    let owner = &server.admin_key;
    let created = server.create_loop(owner, "Invites");
    let loop_id = id_of(&created["loop"]);
    let code = created["invite_code"].as_str().unwrap().to_owned();
    server.key("worker@example.com");
    for email in ["ivy@example.com", "worker@example.com"] {
        server
            .post(
                owner,
                &format!("/v1/api/loops/{loop_id}/members"),
                json!({"email": email}),
            )
            .data(201);
    }
    let signup = format!("/signup?code={code}");
    let ivy = Person::new(&server);
    let landed = ivy.submit(
        &signup,
        "/signup",
        &[
            ("email", "ivy@example.com"),
            ("password", PASSWORD),
            ("code", &code),
        ],
    );
    assert_eq!(landed.url().path(), "/app");
    let members = server.get(owner, &format!("/v1/api/loops/{loop_id}/members"));
    let status_of = |email: &str| {
        members.data(200)["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["email"] == email)
            .map(|m| m["status"].clone())
    };
    assert_eq!(status_of("ivy@example.com"), Some(json!("active")));

    let taker = Person::new(&server);
    let refused = taker.submit(
        &signup,
        "/signup",
        &[
            ("email", "worker@example.com"),
            ("password", PASSWORD),
            ("code", &code),
        ],
    );
    assert_eq!(refused.status(), 409);
    assert!(refused.text().unwrap().contains("already exists"));
    assert_eq!(status_of("worker@example.com"), Some(json!("pending")));
}

/// The page's feedback form sets the rating and comment; the parts an
/// automation gave through the API (accuracy, tags, ...) stay.
fn the_feedback_form_keeps_what_the_api_gave() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let owner = &server.admin_key;
    let loop_id = id_of(&server.create_loop(owner, "Rated")["loop"]);
    let id = server.create_request(owner, &loop_id);
    server
        .post(
            owner,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200);
    server
        .post(
            owner,
            &format!("/v1/api/requests/{id}/feedback"),
            json!({"rating": 2, "accuracy": 4, "tags": ["slow"], "category": "constructive"}),
        )
        .data(200);
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);
    let page = format!("/app/requests/{id}");
    let saved = admin.submit(
        &page,
        &format!("/app/requests/{id}/feedback"),
        &[("rating", "5"), ("comment", "Right after all")],
    );
    assert!(saved.status().is_success(), "{}", saved.status());
    let feedback = server
        .get(owner, &format!("/v1/api/requests/{id}"))
        .data(200)["request"]["feedback"]
        .clone();
    assert_eq!(feedback["rating"], 5.0);
    assert_eq!(feedback["comment"], "Right after all");
    assert_eq!(feedback["accuracy"], 4.0, "kept: {feedback}");
    assert_eq!(feedback["tags"], json!(["slow"]));
    assert_eq!(feedback["category"], "constructive");
}

/// The icon every browser asks for, compressed heavy pages, and a text
/// answer's limit stated for people without the script.
fn icons_compression_limits_without_the_script_and_confirmations() {
    let server = Server::start();
    // Without reqwest's gzip feature nothing is decompressed behind our back.
    let http = reqwest::blocking::Client::new();
    for path in ["/favicon.ico", "/favicon.svg"] {
        let icon = http.get(format!("{}{path}", server.base)).send().unwrap();
        assert_eq!(icon.status(), 200, "{path}");
        assert_eq!(icon.headers()["content-type"], "image/svg+xml");
        assert!(icon.text().unwrap().starts_with("<svg"));
    }
    let reference = http
        .get(format!("{}/docs/api", server.base))
        .header("accept-encoding", "gzip")
        .send()
        .unwrap();
    assert_eq!(reference.status(), 200);
    assert_eq!(reference.headers()["content-encoding"], "gzip");
    let plain = http
        .get(format!("{}/docs/api", server.base))
        .send()
        .unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    let size = plain.text().unwrap().len();
    assert!(
        reference.bytes().unwrap().len() * 4 < size,
        "compressed well"
    );

    server.set_password("admin@localhost", "correct horse battery");
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", "correct horse battery");
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Docs")["loop"]);
    let id = server.create_request_with(
        &server.admin_key,
        &loop_id,
        json!({"response_type": "text", "response_config": {"max_length": 500}, "default_response": null}),
    );
    let (_, html) = admin.page(&format!("/app/requests/{id}"));
    assert!(html.contains("Up to 500 characters"), "{html}");
    assert!(
        html.contains(r#"<span class="counter" hidden>"#),
        "the count waits for the script: {html}"
    );
    let js = admin.page("/app").1;
    assert!(js.contains(r#"<link rel="icon" href="/favicon.svg" type="image/svg+xml">"#));

    // Deleting a loop asks first (its open request would be cancelled),
    // then says it happened.
    let page = format!("/app/loops/{loop_id}");
    let asked = admin.submit(&page, &format!("{page}/delete"), &[("force", "true")]);
    let question = asked.text().unwrap();
    assert!(question.contains("Delete this loop?"), "{question}");
    assert!(question.contains("cancelled too"), "{question}");
    assert_eq!(admin.page(&page).0, 200, "still there");
    let deleted = admin.post_raw(
        &format!("{page}/delete"),
        &[
            ("csrf", csrf_of(&question).as_str()),
            ("confirmed", "yes"),
            ("force", "true"),
        ],
        Some(&server.base),
    );
    assert!(deleted.url().as_str().ends_with("/app/loops?done=deleted"));
    assert!(deleted.text().unwrap().contains("The loop was deleted."));
    assert_eq!(admin.page(&page).0, 404);
}

/// A page that needs signing in sends a person there, quietly: that is
/// no error of the service's, and logs say nothing of it above INFO.
fn a_signed_out_visit_is_redirected_without_an_error_in_the_log() {
    let server = Server::start();
    let person = Person::new(&server);
    for page in [
        "/app",
        "/app/requests/5f5e1000ab010203040506ff",
        "/app/account",
    ] {
        let reply = person
            .client
            .get(format!("{}{page}", server.base))
            .send()
            .unwrap();
        assert!(reply.url().path().starts_with("/login"), "{page}");
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let lines = server.stderr.lock().unwrap().clone();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("ERROR") || l.contains("WARN")),
        "{lines:#?}"
    );
}

/// Lists show a request's first line as words, not Markdown.
fn list_rows_read_markdown_as_plain_words() {
    let server = Server::start();
    server.set_password("admin@localhost", "correct horse battery");
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", "correct horse battery");
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Refunds")["loop"]);
    server.create_request_with(
        &server.admin_key,
        &loop_id,
        json!({"request_text": "Refund **$200** to [Ana](https://crm.example/ana)?\n\nMore below."}),
    );
    for page in ["/app", "/app/requests"] {
        let (_, html) = admin.page(page);
        assert!(html.contains("Refund $200 to Ana?"), "{page}: {html}");
        assert!(!html.contains("**$200**"), "{page}");
    }
}

/// An answer reads as the request named it, not as its value.
fn answers_are_shown_by_their_labels() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);
    let owner = &server.admin_key;
    let loop_id = id_of(&server.create_loop(owner, "Refunds")["loop"]);
    let cases = [
        (
            json!({"response_type": "boolean", "response_config": {"true_label": "Refund", "false_label": "Keep"}, "default_response": null}),
            json!(true),
            "Refund",
        ),
        (
            json!({"response_type": "single_select", "response_config": {"options": [{"value": "hold", "label": "Hold it"}, "ship"]}, "default_response": null}),
            json!("hold"),
            "Hold it",
        ),
        (
            json!({"response_type": "rating", "response_config": {"scale_max": 5, "labels": {"5": "Excellent"}}, "default_response": null}),
            json!(5),
            "5 (Excellent)",
        ),
    ];
    for (fields, answer, words) in cases {
        let id = server.create_request_with(owner, &loop_id, fields);
        server
            .post(
                owner,
                &format!("/v1/api/requests/{id}/respond"),
                json!({"response_data": answer}),
            )
            .data(200);
        let (_, html) = admin.page(&format!("/app/requests/{id}"));
        assert!(
            html.contains(&format!(r#"<p class="answer-value">{words}</p>"#)),
            "{words}: {html}"
        );
        assert!(!html.contains("Approved (true)"));
    }
}

/// The Templates page: a template built field by field without the
/// script, refused in the builder's words, changed, the reviews sent with
/// it listed, deleted after a question; another account sees none of it.
fn templates_are_built_edited_and_deleted_in_the_browser() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let admin = Person::new(&server);
    admin.sign_in("admin@localhost", PASSWORD);
    let (status, list) = admin.page("/app/templates");
    assert_eq!(status, 200);
    assert!(list.contains("You have no template yet."), "{list}");

    // Add a row: the form comes back with two rows and what was typed.
    let new = "/app/templates/new";
    let grown = admin.submit(
        new,
        new,
        &[
            ("name", "Blog post"),
            ("count", "1"),
            ("f0.name", "post"),
            ("f0.label", "The post"),
            ("f0.type", "content_display"),
            ("do", "add"),
        ],
    );
    assert_eq!(grown.status(), 200);
    let html = grown.text().unwrap();
    assert!(html.contains(r#"name="count" value="2""#), "{html}");
    assert!(html.contains(r#"value="Blog post""#));
    assert!(html.contains("Field 2"));
    // Enter in a field presses the form's first button: saving, never a
    // removal.
    let save = html.find(r#"name="do" value="save""#).unwrap();
    assert!(save < html.find(r#"value="remove:0""#).unwrap());

    // A select without options is refused, named by row and control.
    let base_fields = [
        ("name", "Blog post"),
        ("description", "Posts before they go out"),
        ("count", "2"),
        ("f0.name", "post"),
        ("f0.label", "The post"),
        ("f0.type", "content_display"),
        ("f1.name", "tone"),
        ("f1.label", "Tone <b>?</b>"),
        ("f1.type", "single_select"),
        ("f1.required", "true"),
        ("do", "save"),
    ];
    let refused = admin.submit(new, new, &base_fields);
    assert_eq!(refused.status(), 400);
    let html = refused.text().unwrap();
    assert!(html.contains("Field 2: “Options”"), "{html}");
    assert!(
        html.contains("Tone &lt;b&gt;?&lt;/b&gt;"),
        "typed text is kept, escaped"
    );
    let mut fields = base_fields.to_vec();
    fields.push(("f1.options", "calm\nsharp | Sharp words"));
    let made = admin.submit(new, new, &fields);
    assert!(
        made.url().as_str().contains("done=created"),
        "{}",
        made.url()
    );
    let path = made.url().path().to_owned();
    let id = path.trim_start_matches("/app/templates/").to_owned();
    let html = made.text().unwrap();
    assert!(html.contains("Template created."));
    assert!(html.contains("No review has been sent with this template yet."));
    let api = server
        .get(&server.admin_key, &format!("/v1/templates/{id}"))
        .data_b(200)
        .clone();
    assert_eq!(
        api["fields"][1]["options"][1]["label"], "Sharp words",
        "{api}"
    );
    assert_eq!(api["fields"][1]["required"], true);

    // A review sent with it is listed on its page.
    let review = server.post(
        &server.admin_key,
        "/v1/reviews",
        json!({"template_id": id, "content": {"text": "Launch **day**"}, "assignees": ["admin@localhost"]}),
    );
    let review_id = id_of(review.data_b(201));
    let (_, html) = admin.page(&path);
    assert!(
        html.contains(&format!("/app/reviews/{review_id}")),
        "{html}"
    );
    assert!(html.contains("Launch day"));

    // Changing it: a row removed, the name changed.
    let (_, page) = admin.page(&path);
    let token = csrf_of(&page);
    let saved = admin.post_raw(
        &path,
        &[
            ("csrf", token.as_str()),
            ("name", "Blog post v2"),
            ("count", "1"),
            ("f0.name", "ok"),
            ("f0.label", "Publish it?"),
            ("f0.type", "boolean"),
            ("do", "save"),
        ],
        Some(&server.base),
    );
    assert!(
        saved.url().as_str().ends_with("done=saved"),
        "{}",
        saved.url()
    );
    let api = server
        .get(&server.admin_key, &format!("/v1/templates/{id}"))
        .data_b(200)
        .clone();
    assert_eq!(api["name"], "Blog post v2");
    assert_eq!(api["fields"].as_array().unwrap().len(), 1);

    // Another account sees none of it.
    server.cli(&["user", "create", "--email", "eve@example.com", "--json"]);
    server.set_password("eve@example.com", PASSWORD);
    let eve = Person::new(&server);
    eve.sign_in("eve@example.com", PASSWORD);
    assert_eq!(eve.page(&path).0, 404);
    assert!(!eve.page("/app/templates").1.contains("Blog post"));
    let theirs = eve.submit(
        "/app/templates",
        &format!("{path}/delete"),
        &[("confirmed", "yes")],
    );
    assert_eq!(theirs.status(), 404);

    // Deleting asks first, then says it happened.
    let asked = admin.submit(&path, &format!("{path}/delete"), &[]);
    let question = asked.text().unwrap();
    assert!(question.contains("Delete this template?"), "{question}");
    let deleted = admin.post_raw(
        &format!("{path}/delete"),
        &[("csrf", csrf_of(&question).as_str()), ("confirmed", "yes")],
        Some(&server.base),
    );
    assert!(deleted
        .url()
        .as_str()
        .ends_with("/app/templates?done=deleted"));
    assert_eq!(admin.page(&path).0, 404);
    let (_, still) = admin.page(&format!("/app/reviews/{review_id}"));
    assert!(still.contains("Launch"), "the review keeps its form");
}

on_every_backend!(
    templates_are_built_edited_and_deleted_in_the_browser,
    answers_are_shown_by_their_labels,
    a_signed_out_visit_is_redirected_without_an_error_in_the_log,
    list_rows_read_markdown_as_plain_words,
    icons_compression_limits_without_the_script_and_confirmations,
    the_feedback_form_keeps_what_the_api_gave,
    an_invited_email_claims_its_account_but_a_working_account_is_not_taken,
    webhooks_are_managed_and_their_deliveries_seen_in_the_dashboard,
    analytics_count_the_owners_requests,
    first_start_link_sets_the_admin_password_once,
    a_wrong_password_and_an_unknown_email_read_the_same_and_are_throttled,
    forged_forms_are_refused_and_pages_carry_a_strict_policy,
    a_new_reviewer_signs_up_from_the_join_link_and_answers_in_the_browser,
    a_key_made_in_the_dashboard_works_until_revoked_there,
    a_strangers_session_sees_none_of_another_accounts_pages,
);
