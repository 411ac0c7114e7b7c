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

/// One column of a table, as a release that reads and writes it sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, diesel::QueryableByName)]
struct Column {
    #[diesel(sql_type = diesel::sql_types::Text)]
    table_name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    column_name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    data_type: String,
    /// `YES` or `NO`.
    #[diesel(sql_type = diesel::sql_types::Text)]
    nullable: String,
    /// `YES` or `NO`.
    #[diesel(sql_type = diesel::sql_types::Text)]
    has_default: String,
}

/// Every column of every table of the database at `url` (diesel's own
/// bookkeeping left out).
fn columns(url: &str) -> Vec<Column> {
    use diesel::{Connection, RunQueryDsl};
    let mut found: Vec<Column> = if let Some(path) = url.strip_prefix("sqlite://") {
        let mut conn = diesel::SqliteConnection::establish(path).unwrap();
        diesel::sql_query(
            "SELECT m.name AS table_name, p.name AS column_name, lower(p.type) AS data_type, \
             CASE WHEN p.\"notnull\" = 1 OR p.pk > 0 THEN 'NO' ELSE 'YES' END AS nullable, \
             CASE WHEN p.dflt_value IS NULL THEN 'NO' ELSE 'YES' END AS has_default \
             FROM sqlite_master m JOIN pragma_table_info(m.name) p \
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' \
             AND m.name <> '__diesel_schema_migrations'",
        )
        .load(&mut conn)
        .unwrap()
    } else {
        let mut conn = diesel::PgConnection::establish(url).unwrap();
        diesel::sql_query(
            "SELECT table_name::text AS table_name, column_name::text AS column_name, \
             data_type::text AS data_type, is_nullable::text AS nullable, \
             CASE WHEN column_default IS NULL THEN 'NO' ELSE 'YES' END AS has_default \
             FROM information_schema.columns WHERE table_schema = 'public' \
             AND table_name <> '__diesel_schema_migrations'",
        )
        .load(&mut conn)
        .unwrap()
    };
    found.sort();
    found
}

/// Migrations only add, so that the previous release keeps working on a
/// database today's binary migrated (two versions side by side in a
/// rolling upgrade): every table and column schema 20 had is still there
/// with its type and nullability, and every column added to one of its
/// tables can be left out of an insert (it is nullable or has a default).
/// The previous binary itself was run on such a database by hand (see
/// docs/operations.md); the suite holds no binary of an earlier release.
fn migrations_since_schema_20_only_add() {
    let mut before = Vec::new();
    let server = Server::start_loaded(|url| {
        load("schema-20", url);
        before = columns(url);
    });
    assert!(
        before.len() > 50,
        "the fixture's schema was read: {before:?}"
    );
    server
        .get(&server.key("owner@example.com"), "/v1/test")
        .data(200);
    let after = columns(&server.db_url);
    for old in &before {
        assert!(
            after.contains(old),
            "{}.{} was changed or removed: {:?}",
            old.table_name,
            old.column_name,
            after
                .iter()
                .find(|c| c.table_name == old.table_name && c.column_name == old.column_name)
        );
    }
    let old_tables: std::collections::BTreeSet<&str> =
        before.iter().map(|c| c.table_name.as_str()).collect();
    for added in after
        .iter()
        .filter(|c| old_tables.contains(c.table_name.as_str()) && !before.contains(c))
    {
        assert!(
            added.nullable == "YES" || added.has_default == "YES",
            "{}.{} was added NOT NULL without a default: an earlier release's inserts would fail",
            added.table_name,
            added.column_name
        );
    }
}

on_every_backend!(
    a_database_of_schema_20_is_migrated_served_and_verified,
    migrations_since_schema_20_only_add,
);
