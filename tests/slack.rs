//! Black-box: a loop's Slack app. New requests are posted with a button
//! per answer through a stand-in for Slack's Web API; clicks, signed as
//! Slack signs them, answer as the member whose email Slack gives, and the
//! message is changed to say how the request ended.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use common::slack::FakeSlack;
use common::{id_of, request_body, Server};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

const TOKEN: &str = "xoxb-1111-2222-secretbot";
const SECRET: &str = "0123456789abcdef0123456789abcdef";

/// A server that calls `slack`, with a loop "Refunds" that posts through a
/// Slack app and has rev@example.com as an active member.
fn setup(slack: &FakeSlack) -> (Server, String) {
    let server = Server::start_with(&[("REVIEWLOOP_SLACK_API_URL", &slack.base)]);
    let created = server.create_loop(&server.admin_key, "Refunds");
    server.join(&server.key("rev@example.com"), &created);
    let loop_id = id_of(&created["loop"]);
    (server, loop_id)
}

/// Sets the loop's Slack app up as its owner does: signed in, on the
/// loop's page (an API key may not). Returns the loop as the API shows it.
fn configure(server: &Server, loop_id: &str) -> Value {
    server.set_password("admin@localhost", "correct horse battery");
    let owner = common::people::Person::new(server);
    owner.sign_in("admin@localhost", "correct horse battery");
    let page = format!("/app/loops/{loop_id}");
    let saved = owner.submit(
        &page,
        &format!("{page}/edit"),
        &[
            ("name", "Refunds"),
            ("slack_bot_token", TOKEN),
            ("slack_signing_secret", SECRET),
            ("slack_channel", "#refunds"),
        ],
    );
    assert!(
        saved.url().as_str().contains("done=saved"),
        "{}",
        saved.url()
    );
    let (_, html) = owner.page(&page);
    assert!(
        !html.contains(TOKEN) && !html.contains(SECRET),
        "the page never shows them"
    );
    server
        .get(&server.admin_key, &format!("/v1/api/loops/{loop_id}"))
        .data(200)["loop"]
        .clone()
}

fn now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// Slack's signature of `body` at `timestamp`.
fn sign(secret: &str, timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{timestamp}:{body}").as_bytes());
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

/// Slack's form body of a click on `value` by `user`.
fn click_body(user: &str, action_id: &str, value: &str) -> String {
    let payload = json!({
        "type": "block_actions",
        "user": {"id": user},
        "channel": {"id": "C0SLACK"},
        "actions": [{"action_id": action_id, "value": value}],
    });
    let encoded: String = payload
        .to_string()
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("payload={encoded}")
}

/// POSTs `body` to the interactions endpoint with the given headers.
fn post(
    server: &Server,
    body: &str,
    timestamp: Option<i64>,
    signature: Option<&str>,
) -> (u16, String) {
    let client = reqwest::blocking::Client::new();
    let mut request = client
        .post(format!("{}/slack/interactions", server.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned());
    if let Some(at) = timestamp {
        request = request.header("x-slack-request-timestamp", at.to_string());
    }
    if let Some(signature) = signature {
        request = request.header("x-slack-signature", signature);
    }
    let reply = request.send().unwrap();
    (reply.status().as_u16(), reply.text().unwrap())
}

fn click(server: &Server, user: &str, value: &str) -> (u16, String) {
    let body = click_body(user, "answer:0", value);
    let at = now();
    post(server, &body, Some(at), Some(&sign(SECRET, at, &body)))
}

/// The signature Slack's own SDK (`slack_sdk`, from PyPI) makes of `body`.
fn sign_with_slack_sdk(secret: &str, timestamp: i64, body: &str) -> String {
    let script = "import sys\nfrom slack_sdk.signature import SignatureVerifier\n\
        secret, stamp = sys.argv[1], sys.argv[2]\n\
        body = sys.stdin.read()\n\
        print(SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body), end='')\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script, secret, &timestamp.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 is needed for this test: {e}"));
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), body.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "slack_sdk comes from PyPI (scripts/test installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn request_of(server: &Server, id: &str) -> Value {
    server
        .get(&server.admin_key, &format!("/v1/api/requests/{id}"))
        .data(200)["request"]
        .clone()
}

fn a_slack_app_is_configured_without_showing_its_secrets() {
    let slack = FakeSlack::start();
    let (server, loop_id) = setup(&slack);
    let shown = configure(&server, &loop_id);
    assert_eq!(shown["slack_app_configured"], true);
    let text = shown.to_string();
    assert!(text.contains("slack_app_configured"));
    assert!(!text.contains(TOKEN) && !text.contains(SECRET), "{text}");
    let read = server
        .get(&server.admin_key, &format!("/v1/api/loops/{loop_id}"))
        .data(200)
        .to_string();
    assert!(!read.contains(TOKEN) && !read.contains(SECRET));

    // An automation's key may not: the signing secret speaks for members.
    let refused = server.put(
        &server.admin_key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({"slack_app": {"bot_token": TOKEN, "signing_secret": SECRET, "channel": "#x"}}),
    );
    assert_eq!(
        refused.error(403),
        "A Slack app is set up by a person signed in to the web application"
    );
    let owner = common::people::Person::new(&server);
    owner.sign_in("admin@localhost", "correct horse battery");
    let page = format!("/app/loops/{loop_id}");
    let bad = owner.submit(
        &page,
        &format!("{page}/edit"),
        &[
            ("name", "Refunds"),
            ("slack_bot_token", "xoxp-user-token"),
            ("slack_channel", "#ok"),
        ],
    );
    assert_eq!(bad.status().as_u16(), 400);
    let bad = bad.text().unwrap();
    // Named as the form labels it, not by the API's field.
    assert!(
        bad.contains("“Bot token” must be the app&#39;s bot token (xoxb-...)")
            || bad.contains("“Bot token” must be the app's bot token (xoxb-...)"),
        "{bad}"
    );
    let removed = server.put(
        &server.admin_key,
        &format!("/v1/api/loops/{loop_id}"),
        json!({"slack_app": null}),
    );
    assert_eq!(removed.data(200)["loop"]["slack_app_configured"], false);
}

/// The usual request, with words for its first answer: buttons and the
/// message after the answer say them.
fn labelled_request() -> Value {
    let mut body = request_body();
    body["response_config"] =
        json!({"options": [{"value": "approve", "label": "Publish it"}, "reject"]});
    body
}

fn a_click_in_slack_answers_as_the_member_and_the_message_says_so() {
    let slack = FakeSlack::start();
    slack.user("U_REV", "rev@example.com");
    slack.user("U_STRANGER", "stranger@example.com");
    let (server, loop_id) = setup(&slack);
    configure(&server, &loop_id);
    let id = id_of(
        &server
            .post(
                &server.admin_key,
                &format!("/v1/loops/{loop_id}/requests"),
                labelled_request(),
            )
            .data(201)["request"],
    );

    let posted = slack.wait_for("chat.postMessage", 1);
    let message = &posted[0];
    assert_eq!(message.token, TOKEN);
    assert_eq!(message.body["channel"], "#refunds");
    let buttons = message.body["blocks"][2]["elements"].as_array().unwrap();
    let values: Vec<String> = buttons
        .iter()
        .filter_map(|b| b["value"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(values.len(), 2, "{values:?}");
    assert!(
        values[0].starts_with(&format!("{id}:0:")) && values[1].starts_with(&format!("{id}:1:"))
    );
    assert_eq!(buttons[0]["text"]["text"], "Publish it");
    assert_eq!(
        buttons[2]["url"],
        format!("{}/app/requests/{id}", server.base).as_str()
    );

    // Unsigned, forged, replayed or unreadable: refused, nothing changes.
    let body = click_body("U_REV", "answer:0", &values[0]);
    let at = now();
    assert_eq!(post(&server, &body, None, None).0, 401);
    assert_eq!(
        post(
            &server,
            &body,
            Some(at),
            Some(&sign("not the secret at all!", at, &body))
        )
        .0,
        401
    );
    let old = at - 600;
    assert_eq!(
        post(&server, &body, Some(old), Some(&sign(SECRET, old, &body))).0,
        401
    );
    let junk = "payload=not-json";
    let (status, text) = post(&server, junk, Some(at), Some(&sign(SECRET, at, junk)));
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("payload must be JSON"), "{text}");
    assert_eq!(request_of(&server, &id)["status"], "pending");

    // Someone who is no member is told so, alone, and nothing changes.
    assert_eq!(click(&server, "U_STRANGER", &values[0]).0, 200);
    let told = slack.wait_for("chat.postEphemeral", 1);
    assert_eq!(told[0].body["user"], "U_STRANGER");
    assert!(told[0].body["text"]
        .as_str()
        .unwrap()
        .contains("Only active members"));
    assert_eq!(request_of(&server, &id)["status"], "pending");

    // The member's click answers, as them: signed by Slack's own SDK,
    // as Slack signs it (the test's signing above agrees with it).
    let body = click_body("U_REV", "answer:0", &values[0]);
    let at = now();
    let signed = sign_with_slack_sdk(SECRET, at, &body);
    assert_eq!(signed, sign(SECRET, at, &body));
    assert_eq!(post(&server, &body, Some(at), Some(&signed)).0, 200);
    let answered = request_of(&server, &id);
    assert_eq!(answered["status"], "completed");
    assert_eq!(answered["response_data"], "approve");
    assert_eq!(answered["responses"][0]["email"], "rev@example.com");
    let updated = slack.wait_for("chat.update", 1);
    // The stand-in numbers its posts: the first is this one.
    assert_eq!(updated[0].body["ts"], "1700000000.000001");
    assert_eq!(updated[0].body["channel"], "C0SLACK");
    assert!(
        updated[0].body["text"]
            .as_str()
            .unwrap()
            .contains("Answered *Publish it* by rev@example.com"),
        "{:?}",
        updated[0].body
    );

    // A second click finds it answered: told, and nothing changes.
    assert_eq!(click(&server, "U_REV", &values[1]).0, 200);
    let told = slack.wait_for("chat.postEphemeral", 2);
    assert!(
        told[1].body["text"].as_str().unwrap().contains("not open"),
        "{:?}",
        told[1].body
    );
    assert_eq!(request_of(&server, &id)["response_data"], "approve");

    // A cancelled request's message says so too.
    let other = server.create_request(&server.admin_key, &loop_id);
    slack.wait_for("chat.postMessage", 2);
    server
        .delete(&server.admin_key, &format!("/v1/api/requests/{other}"))
        .data(200);
    let updated = slack.wait_for("chat.update", 2);
    assert!(updated[1].body["text"]
        .as_str()
        .unwrap()
        .contains("Cancelled"));
}

on_every_backend!(
    a_slack_app_is_configured_without_showing_its_secrets,
    a_click_in_slack_answers_as_the_member_and_the_message_says_so,
);
