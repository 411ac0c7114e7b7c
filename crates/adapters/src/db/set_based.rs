//! Writes of many rows in one statement on PostgreSQL, where every
//! statement is a round trip. The rows travel as one JSON document that
//! `json_populate_recordset` turns back into rows of the table's type, so
//! the statement's text is the same for any number of rows.

use std::collections::HashSet;

use diesel::sql_types::{Array, BigInt, Text};
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
         SELECT {columns} FROM json_populate_recordset(NULL::{table}, $1::json)
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
    let ids: Vec<String> = changes
        .iter()
        .filter_map(|c| c["id"].as_str().map(str::to_owned))
        .collect();
    let rows: Vec<Id> = diesel::sql_query(format!(
        // Rows are locked in `id` order first: two passes (a timeout sweep
        // and an escalation sweep, on two instances) that read overlapping
        // requests in different orders would otherwise deadlock.
        "UPDATE requests AS r SET {}, version = r.version + 1
         FROM json_populate_recordset(NULL::requests, $1::json) AS v,
              (SELECT id FROM requests WHERE id = ANY($2::text[])
               ORDER BY id FOR UPDATE) AS locked
         WHERE r.id = v.id AND r.id = locked.id AND r.version = v.version
         RETURNING r.id",
        set.join(", ")
    ))
    .bind::<Text, _>(to_json_text(&Value::Array(changes)))
    .bind::<Array<Text>, _>(ids)
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

/// Gives the outbox events `seqs`, in their order, the stream positions
/// from `first` on.
pub(crate) fn number_events(
    pg: &mut PgConnection,
    seqs: &[i64],
    first: i64,
) -> Result<(), DbError> {
    diesel::sql_query(
        // Locked in `seq` order first (see `mark_dispatched`).
        "WITH locked AS (SELECT seq FROM outbox_events WHERE seq = ANY($1::bigint[])
                         ORDER BY seq FOR UPDATE)
         UPDATE outbox_events AS o SET position = $2 + v.n - 1
         FROM unnest($1::bigint[]) WITH ORDINALITY AS v(seq, n), locked
         WHERE o.seq = v.seq AND locked.seq = v.seq",
    )
    .bind::<Array<BigInt>, _>(seqs)
    .bind::<BigInt, _>(first)
    .execute(pg)?;
    Ok(())
}

/// Links audit entries into their chains: each `(id, seq, prev_hash,
/// hash)` sets those columns of entry `id`.
pub(crate) fn link_audit_entries(
    pg: &mut PgConnection,
    links: &[(i64, i64, &str, &str)],
) -> Result<(), DbError> {
    if links.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = links.iter().map(|l| l.0).collect();
    let seqs: Vec<i64> = links.iter().map(|l| l.1).collect();
    let previous: Vec<&str> = links.iter().map(|l| l.2).collect();
    let hashes: Vec<&str> = links.iter().map(|l| l.3).collect();
    diesel::sql_query(
        "UPDATE audit_entries AS a SET seq = v.seq, prev_hash = v.prev_hash, hash = v.hash
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
           AS v(id, seq, prev_hash, hash)
         WHERE a.id = v.id",
    )
    .bind::<Array<BigInt>, _>(ids)
    .bind::<Array<BigInt>, _>(seqs)
    .bind::<Array<Text>, _>(previous)
    .bind::<Array<Text>, _>(hashes)
    .execute(pg)?;
    Ok(())
}

/// Leases the deliveries `ids` (each with the `attempts` it was read
/// with) until `until`, those still pending, due at `now`, unleased and
/// unattempted since; returns which it leased. Rows another transaction
/// holds are passed over: that one is leasing or recording them.
pub(crate) fn lease_deliveries(
    pg: &mut PgConnection,
    ids: &[(&str, i32)],
    now: chrono::NaiveDateTime,
    until: chrono::NaiveDateTime,
) -> Result<HashSet<String>, DbError> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let (names, attempts): (Vec<&str>, Vec<i32>) = ids.iter().copied().unzip();
    let rows: Vec<Id> = diesel::sql_query(
        // Locked in `id` order, whichever instance leases.
        "UPDATE deliveries AS d SET leased_until = $1
         FROM (SELECT id FROM deliveries WHERE id = ANY($2::text[])
               ORDER BY id FOR UPDATE SKIP LOCKED) AS locked,
              unnest($2::text[], $3::int[]) AS v(id, attempts)
         WHERE d.id = locked.id AND d.id = v.id AND d.attempts = v.attempts
           AND d.status = 'pending' AND d.next_attempt_at <= $4
           AND (d.leased_until IS NULL OR d.leased_until < $4)
         RETURNING d.id AS id",
    )
    .bind::<diesel::sql_types::Timestamp, _>(until)
    .bind::<Array<Text>, _>(names)
    .bind::<Array<diesel::sql_types::Integer>, _>(attempts)
    .bind::<diesel::sql_types::Timestamp, _>(now)
    .load(pg)?;
    Ok(rows.into_iter().map(|row| row.id).collect())
}

/// Deletes up to `limit` dispatched outbox events older than `before`
/// and before position `newest`, oldest first; returns how many. Rows
/// are locked in `seq` order, as the numbering and dispatch passes lock
/// them, and rows another transaction holds are left for a later purge
/// rather than waited for.
pub(crate) fn purge_events(
    pg: &mut PgConnection,
    before: chrono::NaiveDateTime,
    newest: i64,
    limit: i64,
) -> Result<usize, DbError> {
    Ok(diesel::sql_query(
        "DELETE FROM outbox_events WHERE seq IN (
           SELECT seq FROM outbox_events
           WHERE created_at < $1 AND dispatched_at IS NOT NULL AND position < $2
           ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)",
    )
    .bind::<diesel::sql_types::Timestamp, _>(before)
    .bind::<BigInt, _>(newest)
    .bind::<BigInt, _>(limit)
    .execute(pg)?)
}

/// Marks the outbox events `ids` dispatched at `now`, those nobody marked
/// yet, and returns which it marked.
pub(crate) fn mark_dispatched(
    pg: &mut PgConnection,
    ids: &[&str],
    now: chrono::NaiveDateTime,
) -> Result<HashSet<String>, DbError> {
    let rows: Vec<Id> = diesel::sql_query(
        // Rows are locked in `seq` order, as the numbering pass locks
        // them: two transactions that lock rows in different orders
        // deadlock.
        "UPDATE outbox_events AS o SET dispatched_at = $1
         FROM (SELECT seq FROM outbox_events
               WHERE id = ANY($2::text[]) AND dispatched_at IS NULL
               ORDER BY seq FOR UPDATE) AS locked
         WHERE o.seq = locked.seq
         RETURNING o.id AS id",
    )
    .bind::<diesel::sql_types::Timestamp, _>(now)
    .bind::<Array<Text>, _>(ids)
    .load(pg)?;
    Ok(rows.into_iter().map(|row| row.id).collect())
}
