//! Decision receipts, checked as a third party would: the Python code of
//! `docs/receipts.md`, run as written there with the `cryptography`
//! package, on receipts of answered and timed-out requests, across a key
//! rotation, and on forged ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{id_of, request_body, Server};
use serde_json::{json, Value};

/// The first Python block of `docs/receipts.md`: the verifier users copy.
fn documented_verifier() -> String {
    let doc = include_str!("../docs/receipts.md");
    let start = doc
        .find("```python\n")
        .expect("a Python block in docs/receipts.md")
        + 10;
    let end = start + doc[start..].find("```").expect("the block ends");
    doc[start..end].to_owned()
}

/// Runs the documented verifier on `request` with `keys`; the statement it
/// returns, or the Python error it raised.
fn verify(request: &Value, keys: &Value) -> Result<Value, String> {
    let script = format!(
        "{}\nimport sys\ndata = json.load(sys.stdin)\n\
         print(json.dumps(verify_receipt(data['request'], data['keys'])))\n",
        documented_verifier()
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 is needed for this test: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            json!({"request": request, "keys": keys})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !said.contains("ModuleNotFoundError"),
        "the cryptography package is not installed (pip install cryptography==48.0.0): {said}"
    );
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).expect("the statement as JSON"))
    } else {
        Err(said)
    }
}

fn keys(server: &Server) -> Value {
    let reply = server.call(reqwest::Method::GET, None, "/v1/receipts/keys", None);
    reply.data(200)["keys"].clone()
}

fn get_request(server: &Server, key: &str, id: &str) -> Value {
    server.get(key, &format!("/v1/api/requests/{id}")).data(200)["request"].clone()
}

struct Setup {
    server: Server,
    requester: String,
    reviewer: String,
    reviewer_id: String,
    loop_id: String,
}

fn setup() -> Setup {
    let server = Server::start();
    let requester = server.admin_key.clone();
    let created = server.create_loop(&requester, "Payouts");
    let reviewer = server.key("reviewer@example.com");
    server.join(&reviewer, &created);
    let reviewer_id = server.get(&reviewer, "/v1/api/test").data(200)["user_id"]
        .as_str()
        .unwrap()
        .to_owned();
    Setup {
        loop_id: id_of(&created["loop"]),
        server,
        requester,
        reviewer,
        reviewer_id,
    }
}

/// A request answered `approve` by the reviewer, as its requester reads it.
fn answered(s: &Setup) -> Value {
    let id = s.server.create_request(&s.requester, &s.loop_id);
    let done = s
        .server
        .post(
            &s.reviewer,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200)["request"]
        .clone();
    assert_eq!(done["status"], "completed");
    assert!(done["receipt"].is_object(), "the answer already carries it");
    let read = get_request(&s.server, &s.requester, &id);
    assert_eq!(read["receipt"], done["receipt"], "kept as it was made");
    read
}

fn receipts_verify_with_the_documented_python_code() {
    let s = setup();
    let keys = keys(&s.server);
    assert_eq!(keys.as_array().unwrap().len(), 1, "made at the first start");
    assert_eq!(keys[0]["alg"], "Ed25519");
    assert_eq!(keys[0]["retired_at"], Value::Null);

    // An open request has no receipt.
    let open = s.server.create_request(&s.requester, &s.loop_id);
    assert_eq!(
        get_request(&s.server, &s.requester, &open)["receipt"],
        Value::Null
    );

    let request = answered(&s);
    let receipt = &request["receipt"];
    assert_eq!(receipt["alg"], "Ed25519");
    assert_eq!(receipt["key_id"], keys[0]["key_id"]);
    let statement = verify(&request, &keys).expect("a genuine receipt verifies");
    assert_eq!(statement["request_id"], request["id"]);
    assert_eq!(statement["loop_id"], s.loop_id.as_str());
    assert_eq!(statement["status"], "completed");
    assert_eq!(statement["response_data"], "approve");
    assert_eq!(statement["response_by"], s.reviewer_id.as_str());
    assert_eq!(statement["response_at"], request["response_at"]);

    // The reviewer sees the same receipt.
    let seen = get_request(&s.server, &s.reviewer, request["id"].as_str().unwrap());
    assert_eq!(seen["receipt"], request["receipt"]);

    // Feedback afterwards leaves the receipt alone.
    let id = request["id"].as_str().unwrap();
    s.server
        .post(
            &s.requester,
            &format!("/v1/api/requests/{id}/feedback"),
            json!({"rating": 2}),
        )
        .data(200);
    assert_eq!(
        get_request(&s.server, &s.requester, id)["receipt"],
        request["receipt"]
    );

    // Forgeries: another answer claimed for the same receipt; the statement
    // rewritten; a signature of another request's statement.
    for (field, forged) in [
        ("response_data", json!("reject")),
        ("response_by", json!("0123456789abcdef01234567")),
        ("response_at", json!("2020-01-01T00:00:00Z")),
        ("loop_id", json!("0123456789abcdef01234567")),
    ] {
        let mut claimed = request.clone();
        claimed[field] = forged;
        assert!(
            verify(&claimed, &keys)
                .unwrap_err()
                .contains("states another decision"),
            "a forged {field} is caught"
        );
    }
    let mut rewritten = request.clone();
    let signed = receipt["signed"].as_str().unwrap();
    let text = String::from_utf8(base64_url_decode(signed)).unwrap();
    rewritten["receipt"]["signed"] = json!(base64_url_encode(
        text.replace("\"approve\"", "\"reject\"").as_bytes()
    ));
    rewritten["response_data"] = json!("reject");
    assert!(verify(&rewritten, &keys)
        .unwrap_err()
        .contains("InvalidSignature"));
    let other = answered(&s);
    let mut swapped = request.clone();
    swapped["receipt"]["signature"] = other["receipt"]["signature"].clone();
    assert!(verify(&swapped, &keys)
        .unwrap_err()
        .contains("InvalidSignature"));
}

fn a_timed_out_request_carries_the_default_as_its_decision() {
    let s = setup();
    let mut body = request_body();
    body["timeout_seconds"] = json!(1);
    let id = id_of(
        &s.server
            .post(
                &s.requester,
                &format!("/v1/loops/{}/requests", s.loop_id),
                body,
            )
            .data(201)["request"],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let request = loop {
        let request = get_request(&s.server, &s.requester, &id);
        if request["status"] == "timeout" {
            break request;
        }
        assert!(Instant::now() < deadline, "the request did not time out");
        std::thread::sleep(Duration::from_millis(200));
    };
    let statement = verify(&request, &keys(&s.server)).expect("verifies");
    assert_eq!(statement["status"], "timeout");
    assert_eq!(statement["response_data"], "reject");
    assert_eq!(statement["response_by"], Value::Null);

    // A cancelled request has no decision, so no receipt.
    let cancelled = s.server.create_request(&s.requester, &s.loop_id);
    s.server
        .delete(&s.requester, &format!("/v1/api/requests/{cancelled}"))
        .data(200);
    let read = get_request(&s.server, &s.requester, &cancelled);
    assert_eq!(read["status"], "cancelled");
    assert_eq!(read["receipt"], Value::Null);
}

fn a_rotated_key_signs_anew_and_old_receipts_still_verify() {
    let mut s = setup();
    let before = answered(&s);
    let old_key = before["receipt"]["key_id"].clone();

    s.server.kill();
    let rotated = s.server.cli(&["receipt-key", "rotate", "--json"]);
    let new_key = rotated["key_id"].clone();
    assert_ne!(new_key, old_key);
    s.server.relaunch();

    let keys = keys(&s.server);
    let listed: Vec<&Value> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["key_id"])
        .collect();
    assert_eq!(
        listed,
        [&new_key, &old_key],
        "the newest first, the old kept"
    );
    assert_eq!(keys[0]["retired_at"], Value::Null);
    assert!(keys[1]["retired_at"].is_string());
    let cli_listed = s.server.cli(&["receipt-key", "list", "--json"]);
    assert_eq!(cli_listed["keys"], keys);

    let after = answered(&s);
    assert_eq!(after["receipt"]["key_id"], new_key);
    verify(&after, &keys).expect("the new receipt verifies");
    verify(&before, &keys).expect("the old receipt still verifies");
    // Each verifies only with its own key: the old receipt against the new
    // public key under the old id fails on the signature itself.
    let mut wrong = keys[1].clone();
    wrong["public_key"] = keys[0]["public_key"].clone();
    assert!(verify(&before, &json!([wrong]))
        .unwrap_err()
        .contains("InvalidSignature"));
}

fn base64_url_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .expect("base64url")
}

fn base64_url_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

on_every_backend!(
    receipts_verify_with_the_documented_python_code,
    a_timed_out_request_carries_the_default_as_its_decision,
    a_rotated_key_signs_anew_and_old_receipts_still_verify,
);
