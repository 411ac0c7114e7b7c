//! The OpenAPI document against the running binary: served without a key,
//! and checked by schemathesis (from PyPI; `scripts/test` installs it),
//! which sends thousands of generated requests to every documented
//! operation and checks each answer against the document.

mod common;

use std::process::Command;

use common::Server;
use serde_json::Value;

#[test]
fn the_document_is_public_and_describes_both_surfaces() {
    let server = Server::start();
    let reply = server
        .http()
        .get(format!("{}/v1/openapi.json", server.base))
        .send()
        .expect("GET /v1/openapi.json");
    assert_eq!(reply.status(), 200);
    assert!(reply.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let doc: Value = reply.json().expect("JSON");
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/v1/api/requests",
        "/v1/requests",
        "/v1/api/loops/{id}",
        "/v1/reviews",
        "/v1/templates/{id}",
        "/v1/teams/{id}/members",
        "/v1/webhooks",
        "/metrics",
    ] {
        assert!(paths.contains_key(path), "{path} is not documented");
    }
    // The request surface's envelope on one side, the alternate's on the other.
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["CreatedRequestAnswer"]["required"],
        serde_json::json!(["error", "msg", "data"])
    );
    assert_eq!(
        schemas["ReviewAnswerB"]["required"],
        serde_json::json!(["success", "data", "meta"])
    );
    let example = &schemas["NewRequest"]["example"];
    assert_eq!(example["response_type"], "single_select");
}

/// What schemathesis is told beyond the command line: long-polls wait one
/// second (each waits up to 60 s on a real request otherwise, and the run
/// would take minutes of sleeping).
const CONFIG: &str = r#"
[[operations]]
include-path-regex = "/requests/\\{id\\}$"
include-method = "GET"
parameters = { "query.wait" = 1 }
"#;

#[test]
fn schemathesis_finds_no_server_error_and_no_answer_outside_the_document() {
    let server = Server::start();
    let key = server.key_with(
        "fuzz@example.com",
        &["--rate-limit", "10000000", "--plan", "enterprise"],
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("schemathesis.toml");
    std::fs::write(&config, CONFIG).expect("write config");
    let output = Command::new("schemathesis")
        .arg("--config-file")
        .arg(&config)
        .args(["run", &format!("{}/v1/openapi.json", server.base)])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        ])
        .args(["--header", &format!("Authorization: Bearer {key}")])
        // The event stream stays open for minutes by design; it has its
        // own black-box tests (tests/listening.rs).
        .args(["--exclude-path", "/v1/api/events", "--exclude-path", "/v1/events"])
        // One worker: Python's `ast` is not safe across threads, and
        // hypothesis parses lambdas with it (two workers once failed with
        // "AST constructor recursion depth mismatch" inside schemathesis).
        .args(["--max-examples", "25", "--workers", "1", "--seed", "20261124"])
        .args(["--request-timeout", "20", "--continue-on-failure"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| {
            panic!("schemathesis is needed for this test (pip install schemathesis): {e}")
        });
    let report = String::from_utf8_lossy(&output.stdout);
    let summary = report
        .find("SUMMARY")
        .map_or(report.as_ref(), |at| &report[at..]);
    eprintln!("{summary}");
    // What went wrong, without the tool's tracebacks running to pages.
    let problems = ["FAILURES", "ERRORS"]
        .iter()
        .filter_map(|heading| report.find(heading).map(|at| &report[at..]))
        .next()
        .unwrap_or(&report);
    let problems: String = problems.chars().take(6000).collect();
    assert!(
        output.status.success(),
        "schemathesis found problems:\n{problems}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        report.contains("Tested: "),
        "schemathesis ran no operation:\n{report}"
    );
    // Nothing the server logged as unexpected while it was being fuzzed.
    let log = server.stderr.lock().unwrap().join("\n");
    assert!(
        !log.contains("request failed unexpectedly"),
        "the server logged a failure:\n{log}"
    );
}

#[test]
fn the_reference_page_renders_the_document_for_people() {
    let server = Server::start();
    let reply = server
        .http()
        .get(format!("{}/docs/api", server.base))
        .send()
        .expect("GET /docs/api");
    assert_eq!(reply.status(), 200);
    assert!(reply.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(reply.headers().contains_key("content-security-policy"));
    let html = reply.text().unwrap();
    // Operations by tag, each with its twin path form, and the shapes.
    assert!(html.contains("API reference"));
    assert!(
        html.contains(r#"id="op-createRequest""#),
        "create is listed"
    );
    assert!(html.contains("/v1/api/requests/{id}/respond"));
    assert!(html.contains("Also at <code>/v1/requests</code>"));
    assert!(html.contains(r#"id="schema-Request""#));
    assert!(html.contains(r##"href="#schema-NewRequest""##));
    // Examples are shown as escaped text, and descriptions as markup.
    assert!(html.contains("&quot;single_select&quot;") || html.contains("\"single_select\""));
    assert!(html.contains("<code>Idempotency-Key</code>"));
    assert!(!html.contains("`/v1/api/...`"), "CommonMark is rendered");
    // Every documented operation of /v1/api or the root has its entry.
    let doc: Value = server
        .http()
        .get(format!("{}/v1/openapi.json", server.base))
        .send()
        .unwrap()
        .json()
        .unwrap();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            let id = op["operationId"].as_str().unwrap();
            if id.ends_with("V1") {
                continue;
            }
            assert!(
                html.contains(&format!(r#"id="op-{id}""#)),
                "{id} is not on the page"
            );
        }
    }
}
