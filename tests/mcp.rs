//! The MCP server at `/mcp`, driven end to end by the official TypeScript
//! SDK (`tests/mcp/agent.cjs`): an agent's tool call creates a request, a
//! reviewer answers it over the API, and the agent's waiting call returns
//! the answer. Needs Node and `@modelcontextprotocol/sdk` (scripts/test
//! installs it into target/ci-node).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{id_of, Server};
use serde_json::{json, Value};

fn node_modules() -> String {
    std::env::var("REVIEWLOOP_NODE_MODULES").unwrap_or_else(|_| {
        format!(
            "{}{}",
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/ci-node/node_modules"
        )
    })
}

#[test]
fn an_agent_asks_people_and_waits_for_their_answer() {
    let server = Server::start();
    let created = server.create_loop(&server.admin_key, "Releases");
    let loop_id = id_of(&created["loop"]);
    let reviewer = server.key("reviewer@example.com");
    server.join(&reviewer, &created);

    let script = format!("{}/../../tests/mcp/agent.cjs", env!("CARGO_MANIFEST_DIR"));
    let mut agent = Command::new("node")
        .arg(&script)
        .env("MCP_URL", format!("{}/mcp", server.base))
        .env("MCP_KEY", &server.admin_key)
        .env("LOOP_ID", &loop_id)
        .env("NODE_PATH", node_modules())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node is needed for this test: {e}"));
    let stdout = agent.stdout.take().unwrap();
    let mut transcript: Vec<Value> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|_| json!({"raw": line}));
        if let Some(id) = value["created"].as_str() {
            // The person: the request is in their inbox; they answer it.
            let inbox = server.get(&reviewer, "/v1/api/inbox").data(200).clone();
            assert_eq!(
                inbox["requests"][0]["id"], id,
                "the agent's request reached the inbox"
            );
            server
                .post(
                    &reviewer,
                    &format!("/v1/api/requests/{id}/claim"),
                    json!({}),
                )
                .data(200);
            server
                .post(
                    &reviewer,
                    &format!("/v1/api/requests/{id}/respond"),
                    json!({"response_data": "ship", "comment": "after the 3pm deploy"}),
                )
                .data(200);
        }
        transcript.push(value);
    }
    let status = agent.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut agent.stderr.take().unwrap(), &mut stderr).unwrap();
    let text: Vec<String> = transcript.iter().map(Value::to_string).collect();
    eprintln!("MCP session transcript:\n{}", text.join("\n"));
    assert!(status.success(), "the agent failed: {stderr}");

    let find =
        |name: &str| -> Vec<&Value> { transcript.iter().filter(|v| v["result"] == name).collect() };
    let tools = transcript
        .iter()
        .find_map(|v| v["tools"].as_array())
        .unwrap();
    for tool in [
        "list_loops",
        "create_request",
        "wait_for_response",
        "get_request",
        "list_requests",
        "cancel_request",
    ] {
        assert!(tools.iter().any(|t| t == tool), "{tool} is offered");
    }
    let loops = find("list_loops")[0];
    assert_eq!(loops["structured"]["loops"][0]["id"], loop_id.as_str());

    let creates = find("create_request");
    assert_eq!(creates[0]["isError"], false);
    assert_eq!(creates[0]["structured"]["status"], "pending");
    // Both active members: the owner and the reviewer.
    assert_eq!(creates[0]["structured"]["broadcasted_to"], 2);

    // The waiting call came back with the person's answer.
    let waited = find("wait_for_response")[0];
    assert_eq!(waited["isError"], false);
    assert_eq!(waited["structured"]["status"], "completed");
    assert_eq!(waited["structured"]["response_data"], "ship");
    assert_eq!(
        waited["structured"]["response_comment"],
        "after the 3pm deploy"
    );
    let text: Value = serde_json::from_str(waited["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text["response_data"], "ship",
        "the text content is the same JSON"
    );

    assert_eq!(find("get_request")[0]["structured"]["status"], "completed");
    assert_eq!(find("list_requests")[0]["structured"]["count"], 1);

    // Errors are tool errors with the API's message.
    let cancel = find("cancel_request")[0];
    assert_eq!(cancel["isError"], true);
    let message = cancel["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("completed"), "{message}");
    let bad = creates[1];
    assert_eq!(bad["isError"], true);
    let message = bad["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("request_text"), "{message}");
}

#[test]
fn mcp_needs_a_key() {
    let server = Server::start();
    let reply = server
        .http()
        .post(format!("{}/mcp", server.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .unwrap();
    assert_eq!(reply.status(), 401);
    let body: Value = reply.json().unwrap();
    assert_eq!(body["error"], true);
}

#[test]
fn an_agent_sees_only_its_own_account() {
    let server = Server::start();
    let created = server.create_loop(&server.admin_key, "Private");
    let request = server.create_request(&server.admin_key, &id_of(&created["loop"]));
    let stranger = server.key("stranger@example.com");
    let call = |body: Value| -> Value {
        server
            .http()
            .post(format!("{}/mcp", server.base))
            .bearer_auth(&stranger)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    let loops = call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_loops", "arguments": {}}}));
    assert_eq!(loops["result"]["structuredContent"]["count"], 0);
    for tool in ["get_request", "cancel_request", "wait_for_response"] {
        let answer = call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": {"request_id": request, "wait_seconds": 1}}}));
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("not found"), "{tool}: {text}");
    }
    // The owner's request is untouched.
    let status = server.get(&server.admin_key, &format!("/v1/api/requests/{request}"));
    assert_eq!(status.data(200)["request"]["status"], "pending");
}

#[test]
fn a_reviewer_reads_a_request_as_the_api_shows_it_to_reviewers() {
    let server = Server::start();
    let created = server.create_loop(&server.admin_key, "Shared");
    let reviewer = server.key("reviewer@example.com");
    server.join(&reviewer, &created);
    let mut body = common::request_body();
    body["metadata"] = json!({"customer": "secret-co"});
    body["callback_url"] = json!("https://example.com/hook");
    let request = id_of(
        &server
            .post(
                &server.admin_key,
                &format!("/v1/api/loops/{}/requests", id_of(&created["loop"])),
                body,
            )
            .data(201)["request"],
    );
    let answer: Value = server
        .http()
        .post(format!("{}/mcp", server.base))
        .bearer_auth(&reviewer)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_request", "arguments": {"request_id": request}}}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let seen = &answer["result"]["structuredContent"]["request"];
    assert_eq!(seen["id"], request.as_str(), "{answer}");
    for private in ["metadata", "callback_url", "api_key_id", "tags"] {
        assert!(
            seen.get(private).is_none(),
            "a reviewer sees {private}: {seen}"
        );
    }
    assert!(!answer.to_string().contains("secret-co"));
    // GET is not a way in: the stateless server keeps no stream.
    let get = server
        .http()
        .get(format!("{}/mcp", server.base))
        .bearer_auth(&reviewer)
        .send()
        .unwrap();
    assert_eq!(get.status(), 405);
}
