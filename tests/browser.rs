//! The web application in a real browser: Debian's headless Chromium,
//! driven through chromedriver from `cargo test`. An owner signs in,
//! makes a loop and sees its QR code; a new reviewer opens the join link,
//! signs up and lands in the inbox; the API sends one request of each
//! response type and each appears without a reload; the reviewer answers
//! each through its widget and the API reads exactly those answers; a key
//! made in the dashboard works; a stranger sees none of it. Screenshots
//! at phone and desktop sizes go to `target/screenshots/`.
//!
//! A missing browser fails this test: it never passes by skipping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::Future;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{id_of, Server};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";
const SIZES: [(u32, u32, &str); 2] = [(390, 844, "phone"), (1280, 800, "desktop")];

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// Runs one browser step to completion (the rest of the test is blocking).
fn b<F: Future>(step: F) -> F::Output {
    runtime().block_on(step)
}

/// chromedriver on a free port, stopped when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Self {
        let chromedriver = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {chromedriver} (install Debian's chromium and chromium-driver): {e}")
            });
        // Dropped (killed and waited for) on every path from here.
        let driver = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return driver;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("chromedriver did not listen on {}", driver.url);
    }

    fn browser(&self) -> Client {
        let mut caps = serde_json::Map::new();
        let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": binary,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,800"]
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        b(ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&self.url))
        .expect("a Chromium session through chromedriver")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn shots_dir() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Screenshots of the current page at both sizes.
fn screenshot(c: &Client, name: &str) {
    for (w, h, size) in SIZES {
        b(c.set_window_size(w, h)).unwrap();
        let png = b(c.screenshot()).unwrap();
        std::fs::write(shots_dir().join(format!("{name}-{size}.png")), png).unwrap();
    }
    b(c.set_window_size(1280, 800)).unwrap();
}

fn goto(c: &Client, base: &str, path: &str) {
    b(c.goto(&format!("{base}{path}"))).unwrap();
}

fn fill(c: &Client, css: &str, text: &str) {
    let field = b(c.find(Locator::Css(css))).unwrap_or_else(|e| panic!("{css}: {e}"));
    b(field.clear()).unwrap();
    b(field.send_keys(text)).unwrap();
}

fn click(c: &Client, css: &str) {
    b(b(c.find(Locator::Css(css)))
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click())
    .unwrap();
}

/// Clicks something that leads to another address, and waits until the
/// browser is there (a click returns before the navigation it starts ends).
fn click_through(c: &Client, css: &str) {
    let before = b(c.current_url()).unwrap();
    click(c, css);
    for _ in 0..150 {
        if b(c.current_url()).unwrap() != before {
            let ready = b(c.execute("return document.readyState", vec![])).unwrap();
            if ready == "complete" {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("clicking {css} on {before} led nowhere");
}

fn text_of(c: &Client, css: &str) -> String {
    b(b(c.find(Locator::Css(css)))
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text())
    .unwrap()
}

fn path_of(c: &Client) -> String {
    b(c.current_url()).unwrap().path().to_owned()
}

fn wait_for(c: &Client, css: &str) {
    b(c.wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(css)))
    .unwrap_or_else(|e| panic!("{css} never appeared: {e}"));
}

fn sign_in(c: &Client, base: &str, email: &str) {
    goto(c, base, "/login");
    fill(c, "input[name=email]", email);
    fill(c, "input[name=password]", PASSWORD);
    click_through(c, "button.primary");
    assert_eq!(path_of(c), "/app");
}

/// One request of each response type, and what the reviewer does with it.
fn requests() -> Vec<(&'static str, Value, Value)> {
    vec![
        ("boolean", json!({}), json!(true)),
        (
            "single_select",
            json!({"options": ["Approve", "Reject", "Escalate"]}),
            json!("Reject"),
        ),
        (
            "multi_select",
            json!({"options": ["Spam", "Harassment", "Off-topic"]}),
            json!(["Spam", "Off-topic"]),
        ),
        ("rating", json!({"scale_min": 1, "scale_max": 5}), json!(4)),
        ("number", json!({"min": 0, "max": 500}), json!(42.5)),
        (
            "text",
            json!({"max_length": 200}),
            json!("Looks fine.\nShip it."),
        ),
    ]
}

fn answer(c: &Client, kind: &str) {
    match kind {
        // The shortcut, as a reviewer triaging with the keyboard would.
        "boolean" => b(b(c.find(Locator::Css("body"))).unwrap().send_keys("a")).unwrap(),
        "single_select" => click(c, "button.choice[value=Reject]"),
        "multi_select" => {
            click(c, "input[value=Spam]");
            click(c, "input[value=Off-topic]");
            click(c, "form.widget button.primary");
        }
        "rating" => click(c, "button.choice[value='4']"),
        "number" => {
            fill(c, "#answer", "42.5");
            click(c, "form.widget button.primary");
        }
        "text" => {
            fill(c, "#answer", "Looks fine.\nShip it.");
            assert_eq!(
                text_of(c, "#answer-count"),
                "20",
                "the counter follows typing"
            );
            click(c, "form.widget button.primary");
        }
        other => panic!("no widget for {other}"),
    }
    // The page after answering says so.
    for _ in 0..100 {
        if b(c.current_url())
            .unwrap()
            .query()
            .is_some_and(|q| q.contains("done=answered"))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "{kind}: the answer was not taken; the page says: {}",
        text_of(c, "main")
    );
}

#[test]
fn people_use_reviewloop_in_a_real_browser() {
    let server = Server::start_with(&[("REVIEWLOOP_SIGNUP", "open")]);
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let driver = Driver::start();

    // The owner makes a loop and sees its QR code.
    let owner = driver.browser();
    sign_in(&owner, &base, "admin@localhost");
    goto(&owner, &base, "/app/loops");
    fill(&owner, "#new-loop input[name=name]", "Content moderation");
    fill(
        &owner,
        "#new-loop textarea[name=description]",
        "Posts the classifier flagged",
    );
    click_through(&owner, "#new-loop button.primary");
    assert!(path_of(&owner).starts_with("/app/loops/"));
    let loop_id = path_of(&owner).rsplit('/').next().unwrap().to_owned();
    let qr_width = b(owner.execute(
        "return document.querySelector('img.qr').naturalWidth",
        vec![],
    ))
    .unwrap();
    assert!(
        qr_width.as_u64().unwrap() > 100,
        "the QR code is an image: {qr_width}"
    );
    let code = text_of(&owner, ".invite-code");
    screenshot(&owner, "loop");

    // A new reviewer opens the join link, signs up, lands in the inbox.
    let reviewer = driver.browser();
    goto(&reviewer, &base, &format!("/join/{code}"));
    click_through(&reviewer, "a.button.primary");
    fill(&reviewer, "input[name=email]", "rita@example.com");
    fill(&reviewer, "input[name=password]", PASSWORD);
    click_through(&reviewer, "button.primary");
    assert_eq!(path_of(&reviewer), "/app");
    assert!(text_of(&reviewer, ".notice").contains("You joined Content moderation"));

    // Requests sent by the API appear in the open inbox without a reload.
    let mut sent = Vec::new();
    for (kind, config, expected) in requests() {
        let body = json!({
            "processing_type": "time-sensitive", "type": "markdown",
            "priority": if kind == "boolean" { "critical" } else { "medium" },
            "request_text": format!("## Check post ({kind})\n\nA user wrote: *great product*, see [the post](https://example.com/p/1)."),
            "response_type": kind, "response_config": config,
            "context": {"author": "jane", "score": 0.82},
            "timeout_seconds": 3600, "platform": "api"
        });
        let reply = server.post(
            &server.admin_key,
            &format!("/v1/api/loops/{loop_id}/requests"),
            body,
        );
        let id = id_of(&reply.data(201)["request"]);
        wait_for(
            &reviewer,
            &format!("#live-list a[href='/app/requests/{id}']"),
        );
        sent.push((kind, id, expected));
    }
    assert_eq!(path_of(&reviewer), "/app", "no navigation happened");
    screenshot(&reviewer, "inbox");

    // Each is answered through its widget; the API reads exactly that.
    for (kind, id, expected) in &sent {
        goto(&reviewer, &base, &format!("/app/requests/{id}"));
        screenshot(&reviewer, &format!("review-{kind}"));
        answer(&reviewer, kind);
        let seen = server.get(&server.admin_key, &format!("/v1/api/requests/{id}"));
        let request = &seen.data(200)["request"];
        assert_eq!(request["status"], "completed", "{kind}");
        assert_eq!(&request["response_data"], expected, "{kind}");
    }

    // The owner's analytics count the six answers, all Rita's.
    goto(&owner, &base, "/app/analytics");
    let figures = text_of(&owner, ".figures");
    assert!(figures.starts_with('6'), "{figures}");
    assert!(text_of(&owner, "main").contains("rita@example.com"));
    screenshot(&owner, "analytics");

    // A key made in the dashboard works on /v1/test.
    goto(&owner, &base, "/app/keys");
    fill(&owner, "input[name=name]", "n8n");
    click(&owner, "form[action='/app/keys'] button.primary");
    wait_for(&owner, "#new-key");
    let key = b(b(owner.find(Locator::Css("#new-key")))
        .unwrap()
        .prop("value"))
    .unwrap()
    .expect("the new key");
    assert_eq!(
        server.get(&key, "/v1/test").data(200)["email"],
        "admin@localhost"
    );

    // A stranger's session sees none of it.
    let stranger = driver.browser();
    goto(&stranger, &base, "/signup");
    fill(&stranger, "input[name=email]", "eve@example.com");
    fill(&stranger, "input[name=password]", PASSWORD);
    click_through(&stranger, "button.primary");
    assert_eq!(path_of(&stranger), "/app");
    assert!(text_of(&stranger, "#live-list").contains("Nothing to review"));
    for path in [
        format!("/app/requests/{}", sent[0].1),
        format!("/app/loops/{loop_id}"),
    ] {
        goto(&stranger, &base, &path);
        let page = text_of(&stranger, "main");
        assert!(page.contains("Not found"), "{path}: {page}");
        assert!(!page.contains("Content moderation"), "{path}");
    }
    goto(&stranger, &base, "/app/requests");
    assert!(text_of(&stranger, "main").contains("No requests match"));

    for c in [owner, reviewer, stranger] {
        let _ = b(c.close());
    }
}

/// A review of three fields (a yes/no, a choice and an editable draft),
/// sent by the API and answered in the browser; the API reads exactly
/// what the reviewer chose and typed.
#[test]
fn a_review_form_is_answered_in_a_real_browser() {
    let server = Server::start();
    server.cli(&["user", "create", "--email", "rita@example.com", "--json"]);
    server.set_password("rita@example.com", PASSWORD);
    let base = server.base.clone();
    let driver = Driver::start();

    let template = server.post(
        &server.admin_key,
        "/v1/templates",
        json!({
            "name": "Blog post",
            "fields": [
                {"name": "post", "type": "content_display", "label": "The post"},
                {"name": "approve", "type": "boolean", "label": "Publish it?", "required": true},
                {"name": "tone", "type": "single_select", "label": "Tone", "options": ["calm", "sharp"]},
                {"name": "reply", "type": "text", "label": "Reply to the author", "editable": true, "max_length": 200}
            ]
        }),
    );
    let template_id = id_of(template.data_b(201));

    // The reviewer has the Reviews tab open when the review is sent.
    let reviewer = driver.browser();
    sign_in(&reviewer, &base, "rita@example.com");
    click_through(&reviewer, "nav.tabs a[href='/app/reviews']");
    assert!(text_of(&reviewer, "#live-list").contains("No review is waiting for you"));
    let sent = server.post(
        &server.admin_key,
        "/v1/reviews",
        json!({
            "template_id": template_id,
            "content": {"text": "## Launch\n\nWe ship on **Monday**. <script>alert(1)</script>",
                        "metadata": {"reply": "Thanks for the post!"}},
            "assignees": ["rita@example.com"],
            "priority": "high",
            "due_date": "2030-01-01T12:00:00Z"
        }),
    );
    let id = id_of(sent.data_b(201));
    wait_for(
        &reviewer,
        &format!("#live-list a[href='/app/reviews/{id}']"),
    );
    assert_eq!(
        path_of(&reviewer),
        "/app/reviews",
        "it arrived without navigation"
    );
    screenshot(&reviewer, "reviews");
    click_through(&reviewer, &format!("a[href='/app/reviews/{id}']"));

    // The content is shown as Markdown, its script as text; the draft is
    // in the editable field.
    let shown = text_of(&reviewer, "section.display");
    assert!(shown.contains("We ship on Monday."), "{shown}");
    let scripts = b(reviewer.execute(
        "return document.querySelectorAll('main script').length",
        vec![],
    ))
    .unwrap();
    assert_eq!(scripts, json!(0), "untrusted HTML is not run");
    let draft = b(b(reviewer.find(Locator::Css("#field-reply")))
        .unwrap()
        .prop("value"))
    .unwrap();
    assert_eq!(draft.as_deref(), Some("Thanks for the post!"));
    screenshot(&reviewer, "review-form");

    click(&reviewer, "input[name=approve][value=true]");
    click(&reviewer, "input[name=tone][value=calm]");
    fill(&reviewer, "#field-reply", "Thanks, edited.");
    click_through(&reviewer, "form.review-form button.primary");
    assert!(
        b(reviewer.current_url())
            .unwrap()
            .query()
            .is_some_and(|q| q.contains("done=completed")),
        "the page says: {}",
        text_of(&reviewer, "main")
    );
    assert!(text_of(&reviewer, "#answer-box").contains("Thanks, edited."));
    screenshot(&reviewer, "review-done");

    let review = server.get(&server.admin_key, &format!("/v1/reviews/{id}"));
    let review = review.data_b(200);
    assert_eq!(review["status"], "completed");
    assert_eq!(
        review["result"],
        json!({"approve": true, "tone": "calm", "reply": "Thanks, edited."})
    );
    assert_eq!(review["reviewer"]["email"], "rita@example.com");
    let _ = b(reviewer.close());
}

/// The four-eyes principle as people meet it: the owner sets a loop's
/// quorum in its edit form; each reviewer sees "N of 2 approvals" and
/// whether they have answered; the owner, who may not answer, sees every
/// answer; the second agreeing answer decides.
#[test]
fn a_quorum_is_set_and_answered_in_a_real_browser() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let created = server.create_loop(&server.admin_key, "Payouts");
    let loop_id = id_of(&created["loop"]);
    for email in ["ana@example.com", "ben@example.com"] {
        let key = server.key(email);
        server.join(&key, &created);
        server.set_password(email, PASSWORD);
    }
    let driver = Driver::start();

    let owner = driver.browser();
    sign_in(&owner, &base, "admin@localhost");
    goto(&owner, &base, &format!("/app/loops/{loop_id}"));
    click_through(&owner, "nav.tabs a[href$='/settings']");
    fill(&owner, "input[name=quorum_count]", "3");
    click_through(&owner, "fieldset.quorum-policy ~ button.primary");
    // Said beside the form, in the form's own words.
    assert!(
        text_of(&owner, "#settings .problems")
            .contains("“Answers needed” is 3 but the loop has only 2"),
        "a quorum its members cannot reach is named: {}",
        text_of(&owner, "main")
    );
    assert_eq!(path_of(&owner), format!("/app/loops/{loop_id}/edit"));
    fill(&owner, "input[name=quorum_count]", "2");
    click_through(&owner, "fieldset.quorum-policy ~ button.primary");
    assert_eq!(path_of(&owner), format!("/app/loops/{loop_id}/settings"));
    assert_eq!(text_of(&owner, "p.notice"), "Settings saved.");
    let lp = server.get(&server.admin_key, &format!("/v1/api/loops/{loop_id}"));
    assert_eq!(
        lp.data(200)["loop"]["quorum"],
        json!({"count": 2, "rule": "all_agree", "exclude_requester": true})
    );
    screenshot(&owner, "loop-quorum");

    let id = server.create_request(&server.admin_key, &loop_id);
    let page = format!("/app/requests/{id}");
    let ana = driver.browser();
    sign_in(&ana, &base, "ana@example.com");
    goto(&ana, &base, &page);
    assert!(text_of(&ana, "#quorum").contains("0 of 2 approvals"));
    assert!(text_of(&ana, "#quorum").contains("You have not answered yet."));
    let claims = b(ana.execute(
        "return document.querySelectorAll('form[action$=claim]').length",
        vec![],
    ))
    .unwrap();
    assert_eq!(claims, json!(0), "a quorum request is not claimed");
    click_through(&ana, "button.choice[value=approve]");
    let quorum = text_of(&ana, "#quorum");
    assert!(quorum.contains("1 of 2 approvals"), "{quorum}");
    assert!(quorum.contains("You answered approve"), "{quorum}");
    let forms = b(ana.execute(
        "return document.querySelectorAll('form.widget').length",
        vec![],
    ))
    .unwrap();
    assert_eq!(forms, json!(0), "nobody answers twice");
    screenshot(&ana, "quorum-answered");

    goto(&owner, &base, &page);
    let quorum = text_of(&owner, "#quorum");
    assert!(quorum.contains("You sent this request, so you may not answer it."));
    assert!(quorum.contains("ana@example.com: approve"), "{quorum}");
    screenshot(&owner, "quorum-requester");

    let ben = driver.browser();
    sign_in(&ben, &base, "ben@example.com");
    goto(&ben, &base, &page);
    click_through(&ben, "button.choice[value=approve]");
    assert!(text_of(&ben, "#quorum").contains("2 of 2 approvals"));
    assert!(text_of(&ben, "#answer-box").contains("approve"));
    let request = server.get(&server.admin_key, &format!("/v1/api/requests/{id}"));
    let request = request.data(200)["request"].clone();
    assert_eq!(request["status"], "completed");
    assert_eq!(request["responses"].as_array().unwrap().len(), 2);
    for c in [owner, ana, ben] {
        let _ = b(c.close());
    }
}

/// Fewer questions, as an owner sets them up and meets them: repeated
/// questions, reused answers and who is asked are set in the loop's
/// settings; a request's page says it was answered together with others,
/// or that its answer was reused.
#[test]
fn fewer_questions_are_set_and_seen_in_a_real_browser() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let created = server.create_loop(&server.admin_key, "Deploys");
    let loop_id = id_of(&created["loop"]);
    let ana = server.key("ana@example.com");
    server.join(&ana, &created);
    let driver = Driver::start();
    let owner = driver.browser();
    sign_in(&owner, &base, "admin@localhost");
    goto(&owner, &base, &format!("/app/loops/{loop_id}/settings"));
    fill(&owner, "input[name=coalesce_minutes]", "10");
    fill(&owner, "input[name=reuse_minutes]", "60");
    b(owner.execute(
        "document.querySelector('select[name=assignment_strategy]').value = 'round_robin'",
        vec![],
    ))
    .unwrap();
    fill(&owner, "input[name=assignment_per_request]", "1");
    fill(&owner, "input[name=assignment_reassign_minutes]", "15");
    click_through(&owner, "fieldset.assignment-policy ~ button.primary");
    assert_eq!(text_of(&owner, "p.notice"), "Settings saved.");
    let lp = server
        .get(&server.admin_key, &format!("/v1/api/loops/{loop_id}"))
        .data(200)["loop"]
        .clone();
    assert_eq!(lp["coalesce"], json!({"window_seconds": 600}));
    assert_eq!(lp["reuse_answers"], json!({"window_seconds": 3600}));
    assert_eq!(
        lp["assignment"],
        json!({"strategy": "round_robin", "per_request": 1, "reassign_after_seconds": 900})
    );
    b(owner.execute(
        "document.querySelector('fieldset.repeats-policy').scrollIntoView()",
        vec![],
    ))
    .unwrap();
    screenshot(&owner, "loop-fewer-questions");

    let first = server.create_request(&server.admin_key, &loop_id);
    server.create_request(&server.admin_key, &loop_id);
    server.create_request(&server.admin_key, &loop_id);
    let offered: Value = server
        .get(&server.admin_key, &format!("/v1/api/requests/{first}"))
        .data(200)["request"]["broadcasted_to"][0]["email"]
        .clone();
    let key = if offered == "ana@example.com" {
        &ana
    } else {
        &server.admin_key
    };
    server
        .post(
            key,
            &format!("/v1/api/requests/{first}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200);
    goto(&owner, &base, &format!("/app/requests/{first}"));
    let timeline = text_of(&owner, "ol.timeline");
    assert!(
        timeline.contains("Answered together with 2 other requests"),
        "{timeline}"
    );
    screenshot(&owner, "request-answered-together");
    let reused = server.create_request(&server.admin_key, &loop_id);
    goto(&owner, &base, &format!("/app/requests/{reused}"));
    assert!(text_of(&owner, "ol.timeline").contains("Answer reused from"));
    screenshot(&owner, "request-answer-reused");
    let _ = b(owner.close());
}

fn base64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A DevTools command, sent through chromedriver's own endpoint.
#[derive(Debug)]
struct DevTools(&'static str, Value);

impl fantoccini::wd::WebDriverCompatibleCommand for DevTools {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({"cmd": self.0, "params": self.1});
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Runs `script` (which calls `done(value)`) in the page and returns the value.
fn run_async(c: &Client, script: &str) -> Value {
    let wrapped = format!("const done = arguments[arguments.length - 1]; {script}");
    b(c.execute_async(&wrapped, vec![])).unwrap_or_else(|e| panic!("{script}: {e}"))
}

#[test]
fn a_pushed_request_is_shown_by_the_service_worker() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let created = server.create_loop(&server.admin_key, "Payouts");
    let loop_id = id_of(&created["loop"]);
    let request_id = server.create_request(&server.admin_key, &loop_id);
    let driver = Driver::start();
    let c = driver.browser();
    sign_in(&c, &base, "admin@localhost");
    b(c.issue_cmd(DevTools(
        "Browser.grantPermissions",
        json!({"origin": base, "permissions": ["notifications"]}),
    )))
    .expect("notifications allowed for the site");
    // A device subscribed before, at a push service that cannot exist
    // (nothing here may reach a real one).
    let mut key = vec![4u8];
    key.extend_from_slice(
        &p256::SecretKey::random(&mut p256::elliptic_curve::rand_core::OsRng)
            .public_key()
            .to_sec1_bytes()[1..],
    );
    server
        .post(
            &server.admin_key,
            "/v1/api/push/subscriptions",
            json!({"endpoint": "https://push.invalid/send/abc", "device": "Work phone",
                   "keys": {"p256dh": base64url(&key), "auth": base64url(&[7u8; 16])}}),
        )
        .data(201);
    goto(&c, &base, "/app/account");
    // The page registers the worker; under the pages' CSP it must load.
    let scope = run_async(
        &c,
        "navigator.serviceWorker.ready.then(r => done(r.scope)).catch(e => done('failed: ' + e));",
    );
    assert_eq!(scope, json!(format!("{base}/app/")));
    let enable = b(c.find(Locator::Css("#push-enable"))).unwrap();
    assert!(
        b(enable.is_displayed()).unwrap(),
        "the button shows where pushes work"
    );
    screenshot(&c, "account-devices");

    // A push as the server sends it, delivered to the worker by DevTools
    // (Chromium cannot reach a push service here, and must not try).
    let url = format!("{base}/app/requests/{request_id}");
    let payload = json!({
        "title": "New critical request in Payouts",
        "body": "Stop the payout <b>now</b>?",
        "url": url,
        "request_id": request_id,
        "priority": "critical",
    });
    // DevTools finds registrations only once its ServiceWorker domain is
    // on, and says nothing of a push it could not deliver: the push is
    // sent again until the worker shows it. The worker's registration is
    // the first of a new profile (id 0); the tag keeps it one notification.
    b(c.issue_cmd(DevTools("ServiceWorker.enable", json!({})))).unwrap();
    let mut shown = Value::Null;
    'delivery: for _ in 0..10 {
        b(c.issue_cmd(DevTools(
            "ServiceWorker.deliverPushMessage",
            json!({"origin": base, "registrationId": "0", "data": payload.to_string()}),
        )))
        .expect("DevTools takes the push");
        for _ in 0..10 {
            shown = run_async(
                &c,
                "navigator.serviceWorker.ready.then(r => r.getNotifications()).then(ns => done(ns.map(n => ({title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url, sticky: n.requireInteraction})))).catch(e => done('failed: ' + e));",
            );
            if shown.as_array().is_some_and(|n| !n.is_empty()) {
                break 'delivery;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    assert_eq!(
        shown,
        json!([{
            "title": "New critical request in Payouts",
            "body": "Stop the payout <b>now</b>?",
            "tag": format!("request-{request_id}"),
            "url": url,
            "sticky": true,
        }]),
        "shown as text, one per request, opening the request's page"
    );
    let _ = b(c.close());
}

#[test]
fn countdowns_tick_in_the_browser() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let created = server.create_loop(&server.admin_key, "Payouts");
    let loop_id = id_of(&created["loop"]);
    let id = server.create_request_with(
        &server.admin_key,
        &loop_id,
        json!({"processing_type": "time-sensitive", "timeout_seconds": 50}),
    );
    let driver = Driver::start();
    let c = driver.browser();
    sign_in(&c, &base, "admin@localhost");
    goto(&c, &base, &format!("/app/requests/{id}"));
    let read = || {
        b(c.execute(
            "return [...document.querySelectorAll('time[data-relative]')].map(t => t.textContent)",
            vec![],
        ))
        .unwrap()
    };
    let seconds_left = |shown: &Value| -> Vec<i64> {
        shown
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| {
                t.as_str()?
                    .strip_prefix("in ")?
                    .strip_suffix(" s")?
                    .parse()
                    .ok()
            })
            .collect()
    };
    let before = seconds_left(&read());
    assert!(!before.is_empty(), "a countdown in seconds: {:?}", read());
    std::thread::sleep(Duration::from_millis(2500));
    let after = seconds_left(&read());
    assert!(
        after[0] <= before[0] - 2,
        "it ticks down: {before:?} then {after:?}"
    );
    // The exact time is there for those without the script.
    let (_, html) = {
        let person = common::people::Person::new(&server);
        person.sign_in("admin@localhost", PASSWORD);
        person.page(&format!("/app/requests/{id}"))
    };
    assert!(html.contains("<noscript> ("), "{html}");
    let _ = b(c.close());
}

/// Deque's axe-core, from npm (scripts/test installs it into target/ci-node).
fn axe_source() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/ci-node/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}): scripts/test installs axe-core from npm",
            path.display()
        )
    })
}

/// axe-core's violations (of any impact) on the page the browser shows,
/// one line each: the rule, its impact and the first offending markup.
fn axe_violations(c: &Client, axe: &str) -> Vec<String> {
    b(c.execute(axe, vec![])).expect("axe-core loads");
    let found = run_async(
        c,
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map(v =>
            v.id + ' (' + v.impact + '): ' + v.help + ' at ' + v.nodes.map(n => n.html.slice(0, 160)).join(' | '))))
          .catch(e => done(['axe failed: ' + e]))",
    );
    found
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The main pages, signed out and signed in as an owner and as someone
/// who only reviews, pass axe-core with no violation of any impact; every
/// page has one `<h1>` and a title of its own; the phone's top bar is one
/// row of targets at least 44 px tall, and shows a reviewer no owner pages.
#[test]
fn the_main_pages_pass_axe_core_and_fit_a_phone() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let owner = &server.admin_key;
    let base = server.base.clone();
    let created = server.create_loop(owner, "Refunds");
    let loop_id = id_of(&created["loop"]);
    let code = created["invite_code"].as_str().unwrap().to_owned();
    let request = server.create_request_with(
        owner,
        &loop_id,
        json!({"request_text": "Refund **$200** to Ana?\n\nShe was charged twice.",
               "response_type": "boolean", "response_config": {"true_label": "Refund"}, "default_response": false}),
    );
    let answered = server.create_request(owner, &loop_id);
    server
        .post(
            owner,
            &format!("/v1/api/requests/{answered}/respond"),
            json!({"response_data": "approve", "comment": "Checked"}),
        )
        .data(200);
    let template = server.post(
        owner,
        "/v1/templates",
        json!({"name": "Post", "fields": [
            {"name": "ok", "type": "boolean", "label": "Publish it?", "required": true},
            {"name": "note", "type": "text", "label": "Note", "max_length": 200}
        ]}),
    );
    let template_id = id_of(template.data_b(201));
    let review = id_of(
        server
            .post(
                owner,
                "/v1/reviews",
                json!({"template_id": template_id, "content": {"text": "Launch post"},
                       "assignees": ["admin@localhost"]}),
            )
            .data_b(201),
    );
    let webhook = id_of(
        &server
            .post(
                owner,
                "/v1/api/webhooks",
                json!({"url": "https://hooks.example.com/in", "events": ["request.completed"]}),
            )
            .data(201)["webhook"],
    );
    let axe = axe_source();
    let driver = Driver::start();
    let c = driver.browser();

    let signed_out = ["/login", "/signup", "/forgot", &format!("/join/{code}")].map(String::from);
    let signed_in = [
        "/app".to_owned(),
        "/app?tab=done".to_owned(),
        "/app/join".to_owned(),
        format!("/app/requests/{request}"),
        format!("/app/requests/{answered}"),
        "/app/requests".to_owned(),
        "/app/reviews".to_owned(),
        format!("/app/reviews/{review}"),
        "/app/loops".to_owned(),
        format!("/app/loops/{loop_id}"),
        format!("/app/loops/{loop_id}/settings"),
        format!("/app/loops/{loop_id}/rules"),
        format!("/app/loops/{loop_id}/delete"),
        "/app/templates".to_owned(),
        "/app/templates/new".to_owned(),
        format!("/app/templates/{template_id}"),
        "/app/keys".to_owned(),
        "/app/webhooks".to_owned(),
        format!("/app/webhooks/{webhook}"),
        "/app/analytics".to_owned(),
        "/app/account".to_owned(),
    ];
    let mut problems = Vec::new();
    let mut titles = std::collections::HashMap::new();
    let mut check = |c: &Client, path: &str| {
        goto(c, &base, path);
        for v in axe_violations(c, &axe) {
            problems.push(format!("{path}: {v}"));
        }
        let h1s = b(c.execute("return document.querySelectorAll('h1').length", vec![])).unwrap();
        if h1s != json!(1) {
            problems.push(format!("{path}: {h1s} <h1> elements"));
        }
        let title = b(c.title()).unwrap();
        if let Some(other) = titles.insert(title.clone(), path.to_owned()) {
            problems.push(format!("{path} has the title of {other}: {title}"));
        }
    };
    for path in &signed_out {
        check(&c, path);
    }
    sign_in(&c, &base, "admin@localhost");
    for path in &signed_in {
        check(&c, path);
        if path.starts_with("/app/loops/") {
            let name = path
                .trim_start_matches("/app/loops/")
                .replace(&loop_id, "loop");
            screenshot(&c, &name.replace('/', "-"));
        }
        if path.starts_with("/app/templates/") {
            let name = path
                .trim_start_matches("/app/templates/")
                .replace(&template_id, "one");
            screenshot(&c, &format!("template-{name}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    screenshot(&c, "request-owner");

    // On a phone: one row, targets a finger can hit, the rest in a menu.
    b(c.set_window_size(390, 844)).unwrap();
    goto(&c, &base, &format!("/app/requests/{request}"));
    let bar = b(c.execute(
        "const bar = document.querySelector('header.top');
         const shown = [...bar.querySelectorAll('a, summary, button')].filter(e => e.checkVisibility());
         return {height: bar.getBoundingClientRect().height,
                 smallest: Math.min(...shown.map(e => e.getBoundingClientRect().height)),
                 shown: shown.map(e => e.textContent.trim())}",
        vec![],
    ))
    .unwrap();
    assert!(bar["height"].as_f64().unwrap() < 64.0, "one row: {bar}");
    assert!(bar["smallest"].as_f64().unwrap() >= 44.0, "{bar}");
    assert_eq!(
        bar["shown"],
        json!(["reviewloop", "Inbox", "Menu"]),
        "{bar}"
    );
    let crumbs = b(c.execute(
        "return Math.min(...[...document.querySelectorAll('nav.crumbs a, .tabs a')].map(a => a.getBoundingClientRect().height))",
        vec![],
    ))
    .unwrap();
    assert!(crumbs.as_f64().unwrap() >= 44.0, "{crumbs}");
    // The pager's links and the buttons drawn as links, too.
    for path in ["/app/requests?page=2", "/app/keys"] {
        goto(&c, &base, path);
        let targets = b(c.execute(
            "return [...document.querySelectorAll('main .pager a, main button.link')]
               .filter(e => e.checkVisibility()).map(e => e.getBoundingClientRect().height)",
            vec![],
        ))
        .unwrap();
        let heights: Vec<f64> = serde_json::from_value(targets).unwrap();
        assert!(
            !heights.is_empty(),
            "{path} has a pager link or a link button"
        );
        assert!(heights.iter().all(|h| *h >= 44.0), "{path}: {heights:?}");
    }
    goto(&c, &base, &format!("/app/requests/{request}"));
    click(&c, "details.menu summary");
    let menu = text_of(&c, "details.menu nav");
    assert!(
        menu.contains("API keys") && menu.contains("Sign out"),
        "{menu}"
    );
    screenshot(&c, "menu-open");
    b(c.set_window_size(1280, 800)).unwrap();

    // Someone who only reviews is shown the inbox and the account alone.
    let joined = common::people::Person::new(&server);
    let landed = joined.submit(
        &format!("/signup?code={code}"),
        "/signup",
        &[
            ("email", "rita@example.com"),
            ("password", PASSWORD),
            ("code", &code),
        ],
    );
    assert_eq!(landed.url().path(), "/app");
    let request = server.create_request_with(
        owner,
        &loop_id,
        json!({"response_type": "boolean", "response_config": {"true_label": "Refund"}, "default_response": false}),
    );
    let reviewer = driver.browser();
    sign_in(&reviewer, &base, "rita@example.com");
    let wide = text_of(&reviewer, "header.top nav.wide");
    for everyone in ["Inbox", "Loops", "Account"] {
        assert!(wide.contains(everyone), "{everyone} in {wide}");
    }
    for owner_page in ["Requests", "Templates", "Analytics", "API keys", "Webhooks"] {
        assert!(!wide.contains(owner_page), "{owner_page} in {wide}");
    }
    for path in ["/app", &format!("/app/requests/{request}")] {
        goto(&reviewer, &base, path);
        for v in axe_violations(&reviewer, &axe) {
            problems.push(format!("{path} (reviewer): {v}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    screenshot(&reviewer, "request-reviewer");

    // On a touch screen the key hints are gone; with a mouse they show.
    let hint_shown = |c: &Client| {
        b(c.execute(
            "const k = document.querySelector('kbd'); return k !== null && k.checkVisibility()",
            vec![],
        ))
        .unwrap()
    };
    assert_eq!(hint_shown(&reviewer), json!(true));
    b(reviewer.issue_cmd(DevTools(
        "Emulation.setTouchEmulationEnabled",
        json!({"enabled": true, "maxTouchPoints": 5}),
    )))
    .unwrap();
    b(reviewer.refresh()).unwrap();
    let touch = b(reviewer.execute(
        "return matchMedia('(hover: none) and (pointer: coarse)').matches",
        vec![],
    ))
    .unwrap();
    assert_eq!(touch, json!(true), "the browser plays a touch screen");
    assert_eq!(hint_shown(&reviewer), json!(false));
    let _ = b(reviewer.close());
    let _ = b(c.close());
}

/// The rules form in a real browser, without typing JSON: a rule added in
/// the form is tested, then saved, and the JSON beside it shows it.
#[test]
fn rules_are_built_in_the_form_in_a_real_browser() {
    let server = Server::start();
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let loop_id = id_of(&server.create_loop(&server.admin_key, "Refunds")["loop"]);
    let driver = Driver::start();
    let c = driver.browser();
    sign_in(&c, &base, "admin@localhost");
    goto(&c, &base, &format!("/app/loops/{loop_id}/rules"));
    fill(&c, "input[name='r0.id']", "small");
    click(&c, "input[name='r0.priority'][value=medium]");
    fill(&c, "input[name='r0.t0.pointer']", "/amount");
    b(b(c.find(Locator::Css("select[name='r0.t0.op']")))
        .unwrap()
        .select_by_value("lt"))
    .unwrap();
    fill(&c, "input[name='r0.t0.value']", "50");
    fill(&c, "input[name='r0.answer']", "true");
    // The page answers at the address it was posted to.
    click(&c, "button[value=test]");
    wait_for(&c, ".rules-result");
    assert!(
        text_of(&c, ".rules-result").contains("Rule small answers it at once with true"),
        "{}",
        text_of(&c, "main")
    );
    let json = b(b(c.find(Locator::Css("textarea[name=rules]")))
        .unwrap()
        .prop("value"))
    .unwrap()
    .unwrap_or_default();
    assert!(
        json.contains("\"small\"") && json.contains("\"lt\":50"),
        "{json}"
    );
    screenshot(&c, "rules-form");
    click_through(&c, "button[value=save]");
    assert_eq!(text_of(&c, "p.notice"), "Rules saved.");
    let saved = server
        .get(&server.admin_key, &format!("/v1/api/loops/{loop_id}"))
        .data(200)["loop"]["rules"]
        .clone();
    assert_eq!(
        saved,
        json!([{"id": "small", "when": {"priority": ["medium"], "context": [{"pointer": "/amount", "lt": 50}]},
                "then": {"answer": true}}])
    );
    let _ = b(c.close());
}

/// The rough edges a day of use found (issue 31), walked through as a
/// reviewer and an owner would in a browser: a join box for someone
/// already signed in, list rows that read Markdown as words, answers
/// shown by their labels with a comment, how long before its deadline a
/// request was answered, a confirmation before a key is revoked, and a
/// template built in the page and listing the review sent with it.
#[test]
fn a_reviewer_and_an_owner_get_through_their_day_in_a_real_browser() {
    let server = Server::start_with(&[("REVIEWLOOP_SIGNUP", "open")]);
    server.set_password("admin@localhost", PASSWORD);
    let base = server.base.clone();
    let owner_key = &server.admin_key;
    let refunds = server.create_loop(owner_key, "Refunds");
    let refunds_id = id_of(&refunds["loop"]);
    let escalations = server.create_loop(owner_key, "Escalations");
    let driver = Driver::start();

    // A reviewer signs up into one loop, then joins another from the inbox.
    let rita = driver.browser();
    let code = refunds["invite_code"].as_str().unwrap();
    goto(&rita, &base, &format!("/signup?code={code}"));
    fill(&rita, "input[name=email]", "rita@example.com");
    fill(&rita, "input[name=password]", PASSWORD);
    click_through(&rita, "form button.primary");
    assert_eq!(path_of(&rita), "/app");
    click(&rita, "details.join-more summary");
    fill(
        &rita,
        "#join-code",
        escalations["invite_code"].as_str().unwrap(),
    );
    click_through(&rita, "form.join-box button");
    assert!(
        text_of(&rita, "p.notice").contains("You joined Escalations"),
        "{}",
        text_of(&rita, "main")
    );

    // A row reads its Markdown as words.
    let request = server.create_request_with(
        owner_key,
        &refunds_id,
        json!({
            "request_text": "**$200** back for [order 7](https://shop.example/7)\n\nMore below.",
            "response_type": "single_select",
            "response_config": {"options": [
                {"value": "hold", "label": "Hold it"},
                {"value": "pay", "label": "Pay it"}
            ]},
            "default_response": "hold",
            "timeout_seconds": 3600
        }),
    );
    goto(&rita, &base, "/app");
    let row = text_of(&rita, &format!("a[href='/app/requests/{request}']"));
    assert!(
        row.contains("$200 back for order 7") && !row.contains("**") && !row.contains("]("),
        "{row}"
    );

    // The answer goes with a comment, and is shown by its label.
    click_through(&rita, &format!("a[href='/app/requests/{request}']"));
    fill(&rita, "#answer-comment", "Paid <b>twice</b> before");
    click(&rita, "button.choice[value=hold]");
    wait_for(&rita, "p.answer-value");
    assert_eq!(text_of(&rita, "p.answer-value"), "Hold it");
    assert_eq!(
        text_of(&rita, "#answer-box blockquote.comment"),
        "Paid <b>twice</b> before"
    );
    let deadline = text_of(&rita, "p.deadline");
    assert!(
        deadline.starts_with("Answered") && deadline.contains(" min before its deadline"),
        "{deadline}"
    );
    let given = server.get(owner_key, &format!("/v1/api/requests/{request}"));
    assert_eq!(given.data(200)["request"]["response_data"], "hold");
    screenshot(&rita, "answered-with-label");

    // The owner revokes a key: asked first, then told.
    let owner = driver.browser();
    sign_in(&owner, &base, "admin@localhost");
    let spare = server.key("admin@localhost");
    goto(&owner, &base, "/app/keys");
    let found = b(owner.execute(
        "const row = [...document.querySelectorAll('table.keys tbody tr')]
           .find(r => arguments[0].startsWith(r.querySelector('code').textContent.replace('…', '')));
         if (!row) return false;
         row.querySelector('button').click();
         return true;",
        vec![json!(spare)],
    ))
    .unwrap();
    assert_eq!(found, json!(true), "the new key has a row");
    wait_for(&owner, "section.danger-zone button.danger");
    assert_eq!(
        server.get(&spare, "/v1/api/loops").status,
        200,
        "nothing happens before the answer"
    );
    screenshot(&owner, "revoke-confirm");
    click_through(&owner, "section.danger-zone button.danger");
    assert_eq!(path_of(&owner), "/app/keys");
    assert!(
        text_of(&owner, "p.notice")
            .to_lowercase()
            .contains("revoked"),
        "{}",
        text_of(&owner, "main")
    );
    assert_eq!(server.get(&spare, "/v1/api/loops").status, 401);

    // A template built in the page, then the review sent with it.
    goto(&owner, &base, "/app/templates/new");
    fill(&owner, "input[name=name]", "Payout check");
    fill(&owner, "input[name='f0.name']", "decision");
    fill(&owner, "input[name='f0.label']", "Decision");
    b(b(owner.find(Locator::Css("select[name='f0.type']")))
        .unwrap()
        .select_by_value("single_select"))
    .unwrap();
    fill(
        &owner,
        "textarea[name='f0.options']",
        "hold | Hold it\npay | Pay it",
    );
    click_through(&owner, "button.primary[name=do][value=save]");
    let template = path_of(&owner)
        .strip_prefix("/app/templates/")
        .expect("the new template's page")
        .to_owned();
    let review = server.post(
        owner_key,
        "/v1/reviews",
        json!({"template_id": template, "content": {"text": "Week 48 payouts"},
               "assignees": ["rita@example.com"]}),
    );
    let review_id = id_of(review.data_b(201));
    goto(&owner, &base, &format!("/app/templates/{template}"));
    let listed = text_of(&owner, "#reviews");
    assert!(listed.contains("Week 48 payouts"), "{listed}");
    let link = format!("#reviews a[href='/app/reviews/{review_id}']");
    wait_for(&owner, &link);
    screenshot(&owner, "template-with-review");
    let _ = b(rita.close());
    let _ = b(owner.close());
}
