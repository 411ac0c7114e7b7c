//! Writes of many rows in one statement on PostgreSQL, where every
//! statement is a round trip. The rows travel as one JSON document that
//! `jsonb_populate_recordset` turns back into rows of the table's type, so
//! the statement's text is the same for any number of rows.

use std::collections::HashSet;

use diesel::sql_types::{Array, Text};
use diesel::{PgConnection, QueryableByName, RunQueryDsl};
use serde::Serialize;
use serde_json::Value;

use super::convert::to_json_text;
use super::{DbError, StoreError};

/// Inserts `rows` into `table`, in their order, naming the columns their
/// serialized fields name (the table's defaults fill the others).
pub(crate) fn insert<T: Serialize>(
    pg: &mut PgConnection,
    table: &'static str,
    rows: &[T],
) -> Result<(), DbError> {
    let Some(first) = rows.first() else {
        return Ok(());
    };
    let columns = match serde_json::to_value(first) {
        Ok(Value::Object(object)) => object.keys().cloned().collect::<Vec<_>>().join(", "),
        _ => return Err(unserializable(table)),
    };
    let document = serde_json::to_value(rows).map_err(|_| unserializable(table))?;
    // The names are this crate's own (a table's and its row struct's
    // fields), never a caller's text.
    diesel::sql_query(format!(
        "INSERT INTO {table} ({columns})
         SELECT {columns} FROM jsonb_populate_recordset(NULL::{table}, $1::jsonb)
           WITH ORDINALITY AS v
         ORDER BY v.ordinality"
    ))
    .bind::<Text, _>(to_json_text(&document))
    .execute(pg)?;
    Ok(())
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = Text)]
    id: String,
}

/// Sets `columns` of the `requests` rows `changes` name (JSON objects with
/// `id`, `version` and those columns) where the stored version is still
/// the object's `version`, and bumps it. Returns the ids it changed.
pub(crate) fn update_requests(
    pg: &mut PgConnection,
    columns: &[&str],
    changes: Vec<Value>,
) -> Result<HashSet<String>, DbError> {
    let set: Vec<String> = columns.iter().map(|c| format!("{c} = v.{c}")).collect();
    let rows: Vec<Id> = diesel::sql_query(format!(
        "UPDATE requests AS r SET {}, version = r.version + 1
         FROM jsonb_populate_recordset(NULL::requests, $1::jsonb) AS v
         WHERE r.id = v.id AND r.version = v.version
         RETURNING r.id",
        set.join(", ")
    ))
    .bind::<Text, _>(to_json_text(&Value::Array(changes)))
    .load(pg)?;
    Ok(rows.into_iter().map(|row| row.id).collect())
}

/// Runs `SELECT pg_notify(channel, payload)` for each payload in one
/// statement.
pub(crate) fn notify_each(
    pg: &mut PgConnection,
    channel: &str,
    payloads: &[&str],
) -> Result<(), DbError> {
    if payloads.is_empty() {
        return Ok(());
    }
    diesel::sql_query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS t(p)")
        .bind::<Text, _>(channel)
        .bind::<Array<Text>, _>(payloads)
        .execute(pg)?;
    Ok(())
}

fn unserializable(table: &str) -> DbError {
    StoreError::Internal(format!("rows of {table} did not serialize as JSON objects")).into()
}
