//! Black-box: databases made by earlier releases (fixtures under
//! tests/fixtures/, made by `scripts/make-schema-fixture` with the binary
//! of that release) are migrated forward at start, served, and their
//! audit chains verify.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{id_of, Server};
use serde_json::{json, Value};

/// Puts fixture `name` in the (empty) database at `url`.
fn load(name: &str, url: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    if let Some(path) = url.strip_prefix("sqlite://") {
        std::fs::copy(dir.join("reviewloop.db"), path).expect("the SQLite fixture");
    } else {
        let loaded = std::process::Command::new("psql")
            .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f"])
            .arg(dir.join("postgres.sql"))
            .output()
            .expect("psql (Debian: postgresql-client)");
        assert!(
            loaded.status.success(),
            "{}",
            String::from_utf8_lossy(&loaded.stderr)
        );
    }
}

/// Schema 20 (migrations up to `dispatch_order`, release e6d2dba): an
/// owner, a reviewer, a loop, an answered and a pending request, a
/// webhook. Today's binary migrates it, serves all of it, and what came
/// since (comments with answers) works on its old requests.
fn a_database_of_schema_20_is_migrated_served_and_verified() {
    let server = Server::start_loaded(|url| load("schema-20", url));
    let owner = server.key("owner@example.com");
    let ana = server.key("ana@example.com");
    let loops = server.get(&owner, "/v1/api/loops").data(200).clone();
    let lp = loops["loops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "Upgrades")
        .cloned()
        .unwrap_or_else(|| panic!("{loops}"));
    let loop_id = id_of(&lp);
    let listed = server
        .get(
            &owner,
            &format!("/v1/loops/{loop_id}/requests?limit=10&scope=account"),
        )
        .data(200)
        .clone();
    let requests: Vec<Value> = listed["requests"].as_array().unwrap().clone();
    assert_eq!(requests.len(), 2, "{listed}");
    let answered = requests
        .iter()
        .find(|r| r["status"] == "completed")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(answered["response_data"], "approve");
    let pending = requests.iter().find(|r| r["status"] == "pending").unwrap();
    let webhooks = server.get(&owner, "/v1/api/webhooks").data(200).clone();
    assert_eq!(
        webhooks["webhooks"][0]["url"], "https://hooks.example.com/reviewloop",
        "{webhooks}"
    );

    // The old pending request is answered today, with a comment (a column
    // added since), and reads back whole.
    let id = id_of(pending);
    server
        .post(
            &ana,
            &format!("/v1/api/requests/{id}/respond"),
            json!({"response_data": "reject", "comment": "Not this week"}),
        )
        .data(200);
    let read = server
        .get(&owner, &format!("/v1/api/requests/{id}"))
        .data(200)
        .clone();
    assert_eq!(
        read["request"]["response_comment"], "Not this week",
        "{read}"
    );

    server.assert_audit_verifies();
}

on_every_backend!(a_database_of_schema_20_is_migrated_served_and_verified,);
