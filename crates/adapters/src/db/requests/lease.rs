//! Leases on due requests, so that two instances do not sweep one request
//! at once.

use diesel::prelude::*;

use crate::db::{Conn, DbError};

#[derive(diesel::QueryableByName)]
pub(super) struct Leased {
    #[diesel(sql_type = diesel::sql_types::Text)]
    request_id: String,
}

/// Leases the sweeps of `ids` (in that order, so two sweepers lock rows in
/// one order) until `until`, where no lease is held or it ran out before
/// `now`; returns the ids leased. One statement for them all: a lease lost
/// to another instance is a row not returned, never an error that would
/// abort the transaction.
pub(super) fn lease_all(
    conn: &mut Conn,
    ids: &[String],
    now: chrono::NaiveDateTime,
    until: chrono::NaiveDateTime,
) -> Result<Vec<String>, DbError> {
    use diesel::sql_types::{Array, Text, Timestamp};
    match conn {
        // One instance serves an SQLite file: nobody to share them with.
        crate::db::DbConnection::Sqlite(_) => Ok(ids.to_vec()),
        crate::db::DbConnection::Postgres(pg) => Ok(diesel::sql_query(
            "INSERT INTO request_sweeps (request_id, leased_until) \
             SELECT id, $2 FROM unnest($1::text[]) WITH ORDINALITY AS c(id, n) ORDER BY n \
             ON CONFLICT (request_id) DO UPDATE SET leased_until = EXCLUDED.leased_until \
             WHERE request_sweeps.leased_until < $3 \
             RETURNING request_id",
        )
        .bind::<Array<Text>, _>(ids)
        .bind::<Timestamp, _>(until)
        .bind::<Timestamp, _>(now)
        .load::<Leased>(pg)?
        .into_iter()
        .map(|l| l.request_id)
        .collect()),
    }
}
