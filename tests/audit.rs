//! Black-box: the audit chain through the API and `reviewloop audit
//! verify`, which must name the exact entry a hand edit of the database
//! changed, removed or inserted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{id_of, Server};
use diesel::connection::SimpleConnection;
use diesel::Connection;
use serde_json::{json, Value};

/// Runs `statements` on the server's database behind its back.
fn by_hand(server: &Server, statements: &str) {
    if let Some(path) = server.db_url.strip_prefix("sqlite://") {
        let mut conn = diesel::SqliteConnection::establish(path).expect("open the SQLite file");
        conn.batch_execute("PRAGMA busy_timeout = 5000;").unwrap();
        conn.batch_execute(statements).expect("the hand edit");
    } else {
        let mut conn = diesel::PgConnection::establish(&server.db_url).expect("connect");
        conn.batch_execute(statements).expect("the hand edit");
    }
}

/// `reviewloop audit verify --json` for the admin account: its exit
/// status and what it said.
fn verify(server: &Server) -> (bool, Value) {
    let out = server.cli_raw(&["audit", "verify", "--email", "admin@localhost", "--json"]);
    let said: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "JSON from audit verify: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), said)
}

/// A loop with a reviewer and one request claimed, released and answered:
/// a log of several kinds of change. Returns the server and the reviewer's key.
fn a_history() -> (Server, String) {
    let server = Server::start();
    let admin = server.admin_key.clone();
    let created = server.create_loop(&admin, "Refunds");
    let reviewer = server.key("reviewer@example.com");
    server.join(&reviewer, &created);
    let id = server.create_request(&admin, &id_of(&created["loop"]));
    for step in ["claim", "release"] {
        server
            .post(
                &reviewer,
                &format!("/v1/api/requests/{id}/{step}"),
                json!({}),
            )
            .data(200);
    }
    server
        .post(
            &reviewer,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "approve"}),
        )
        .data(200);
    // Reading the log links every entry written so far into the chain
    // (the server's linking pass does the same within a moment).
    server.get(&admin, "/v1/api/audit").data(200);
    (server, reviewer)
}

fn the_log_records_every_change_as_a_chain() {
    let (server, reviewer) = a_history();
    let admin = server.admin_key.clone();
    let page = server.get(&admin, "/v1/api/audit").data(200).clone();
    let entries = page["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "loop.created",
            "loop.member_joined",
            "request.created",
            "request.claimed",
            "request.changed",
            "request.completed"
        ]
    );
    assert_eq!(page["total"], 6);
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(entry["seq"], i + 1);
        let before = if i == 0 {
            "0".repeat(64)
        } else {
            entries[i - 1]["hash"].as_str().unwrap().to_owned()
        };
        assert_eq!(entry["prev_hash"], before.as_str());
    }
    let completed = &entries[5];
    assert_eq!(completed["data"]["response_data"], "approve");
    assert_eq!(completed["data"]["status"], "completed");
    assert!(completed["request_id"].is_string());
    assert_eq!(entries[4]["data"]["status"], "pending", "the release");

    // Both path forms; pages; JSON Lines.
    let alias = server
        .get(&admin, "/v1/audit?limit=2&offset=3")
        .data(200)
        .clone();
    let seqs: Vec<&Value> = alias["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["seq"])
        .collect();
    assert_eq!(seqs, [&json!(4), &json!(5)]);
    let lines = server
        .http()
        .get(format!("{}/v1/api/audit", server.base))
        .bearer_auth(&admin)
        .header("Accept", "application/x-ndjson")
        .send()
        .unwrap();
    assert_eq!(
        lines.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    let text = lines.text().unwrap();
    let parsed: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(&parsed, entries);
    assert_eq!(
        server.get(&admin, "/v1/api/audit?limit=0").error(400),
        "limit must be a whole number from 1 to 1000"
    );

    // The reviewer's own log holds none of the admin's account.
    let theirs = server.get(&reviewer, "/v1/api/audit").data(200).clone();
    assert_eq!(theirs["entries"], json!([]));

    let (ok, said) = verify(&server);
    assert!(ok, "{said}");
    assert_eq!(said["intact"], true);
    assert_eq!(said["accounts"][0]["entries"], 6);
    assert_eq!(said["accounts"][0]["head"], entries[5]["hash"]);
}

const ADMIN: &str = "(SELECT id FROM users WHERE email = 'admin@localhost')";

fn a_changed_entry_is_named() {
    let (server, _) = a_history();
    by_hand(
        &server,
        &format!(
            "UPDATE audit_entries SET data = '{{\"status\":\"completed\",\"response_data\":\"reject\"}}' \
             WHERE account_id = {ADMIN} AND seq = 6"
        ),
    );
    let (ok, said) = verify(&server);
    assert!(!ok, "a broken chain fails the command");
    assert_eq!(said["intact"], false);
    let broken = &said["accounts"][0]["broken"];
    assert_eq!(broken["seq"], 6);
    assert_eq!(
        broken["problem"],
        "entry 6 was changed: its content does not match its hash"
    );
}

fn a_removed_entry_is_named() {
    let (server, _) = a_history();
    by_hand(
        &server,
        &format!("DELETE FROM audit_entries WHERE account_id = {ADMIN} AND seq = 4"),
    );
    let (ok, said) = verify(&server);
    assert!(!ok);
    assert_eq!(
        said["accounts"][0]["broken"]["problem"],
        "entry 4 was removed"
    );
    assert_eq!(said["accounts"][0]["entries"], 3, "the three before it fit");
}

fn an_inserted_entry_is_named() {
    let (server, _) = a_history();
    // Make room after entry 2 (in two steps, so no number is used twice on
    // the way) and put in an approval nobody gave.
    by_hand(
        &server,
        &format!(
            "UPDATE audit_entries SET seq = seq + 1000 WHERE account_id = {ADMIN} AND seq >= 3;
             UPDATE audit_entries SET seq = seq - 999 WHERE account_id = {ADMIN} AND seq >= 1000;
             INSERT INTO audit_entries (account_id, seq, at, action, loop_id, request_id, data, prev_hash, hash)
             SELECT account_id, 3, at, 'request.completed', loop_id, NULL,
                    '{{\"status\":\"completed\",\"response_data\":\"approve\"}}', hash,
                    '{}'
             FROM audit_entries WHERE account_id = {ADMIN} AND seq = 2;",
            "a".repeat(64)
        ),
    );
    let (ok, said) = verify(&server);
    assert!(!ok);
    assert_eq!(
        said["accounts"][0]["broken"]["problem"],
        "entry 3 was inserted"
    );
}

on_every_backend!(
    the_log_records_every_change_as_a_chain,
    a_changed_entry_is_named,
    a_removed_entry_is_named,
    an_inserted_entry_is_named,
);
