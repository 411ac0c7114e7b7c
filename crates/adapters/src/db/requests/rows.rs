//! A request's rows: read with its broadcast entries, written back only
//! if nobody changed it since it was read.

use std::collections::HashMap;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use reviewloop_domain::{AuditRecord, BroadcastEntry, ReviewRequest};

use super::queries::OPEN_CONDITION;
use super::Backend;
use crate::db::audit::NewEntries;
use crate::db::fixed::update;
use crate::db::models::RequestDiff;
use crate::db::models::{BroadcastRow, RequestRow};
use crate::db::outbox::NewEvents;
use crate::db::schema::{request_broadcasts, requests};
use crate::db::{changes, native, outbox, Conn, DbError};

/// One request with its broadcast entries.
pub(super) fn one_request(conn: &mut Conn, id: &str) -> Result<Option<ReviewRequest>, DbError> {
    // No `LIMIT`: the primary key yields one row at most.
    let rows: Vec<RequestRow> = native!(conn, |c| requests::table
        .find(id)
        .select(RequestRow::as_select())
        .load(c)?);
    Ok(with_broadcasts(conn, rows)?.pop())
}

/// Writes a changed request, with its events and its change announcement,
/// if the stored version is still the one it was read at (then bumps it).
/// Returns whether it landed: a lost race changes no row and raises no
/// error, so it cannot spoil the rest of a transaction.
pub(super) fn write_if_unchanged(
    conn: &mut Conn,
    (row, answers): &(RequestRow, Vec<BroadcastRow>),
    events: &NewEvents,
    silent_change: &Option<NewEntries>,
) -> Result<bool, DbError> {
    let expected = row.version;
    // The row as stored, if it is still at the version the change was
    // read at: what the change sets differently is all that is written.
    let stored: Option<RequestRow> = native!(conn, |c| requests::table
        .find(&row.id)
        .select(RequestRow::as_select())
        .load(c)?)
    .pop()
    .filter(|stored| stored.version == expected);
    let Some(stored) = stored else {
        return Ok(false);
    };
    // The version check stays in the statement: on PostgreSQL another
    // transaction may change the row between the read and the write.
    let changed = native!(conn, |c| update(
        requests::table,
        requests::id.eq(&row.id).and(requests::version.eq(expected)),
        (
            RequestDiff::between(&stored, row),
            requests::version.eq(expected + 1),
        ),
    )
    .execute(c)?);
    if changed == 0 {
        return Ok(false);
    }
    // A reviewer's answer is written once; the version check above already
    // makes sure it was given to the state now stored.
    for answer in answers {
        native!(conn, |c| update(
            request_broadcasts::table,
            request_broadcasts::request_id
                .eq(&answer.request_id)
                .and(request_broadcasts::user_id.eq(&answer.user_id))
                .and(request_broadcasts::answered_at.is_null()),
            (
                request_broadcasts::answer.eq(&answer.answer),
                request_broadcasts::answered_at.eq(answer.answered_at),
                request_broadcasts::comment.eq(&answer.comment),
            ),
        )
        .execute(c)?);
    }
    changes::request_changed(conn, &row.id)?;
    outbox::append(conn, events)?;
    // A change without an event (a release, an edit, feedback) is logged
    // all the same; one with events is logged by the outbox.
    if let (true, Some(entry)) = (events.is_empty(), silent_change) {
        crate::db::audit::append(conn, entry)?;
    }
    Ok(true)
}

/// The audit entry of a change to `request` that emits no event; none for
/// test data, which stays out of the log of real decisions.
pub(super) fn silent_change_of(request: &ReviewRequest) -> Option<NewEntries> {
    (!request.test).then(|| NewEntries::of(&[AuditRecord::of_request_change(request)]))
}

/// A request's row, and the broadcast entries that hold quorum answers.
pub(super) fn rows_of(request: &ReviewRequest) -> (RequestRow, Vec<BroadcastRow>) {
    let answers = if request.quorum.is_some() {
        BroadcastRow::from_domain(request)
            .into_iter()
            .filter(|b| b.answer.is_some())
            .collect()
    } else {
        Vec::new()
    };
    (RequestRow::from_domain(request), answers)
}

/// Attaches each request's broadcast entries, in the order they were sent.
pub(crate) fn with_broadcasts(
    conn: &mut Conn,
    rows: Vec<RequestRow>,
) -> Result<Vec<ReviewRequest>, DbError> {
    let entries = match rows.as_slice() {
        [] => Vec::new(),
        // One request (the common case): `=` keeps the statement the same
        // every time, so it is prepared once; `IN` with a varying number of
        // values is prepared again on every call.
        [row] => native!(conn, |c| request_broadcasts::table
            .filter(request_broadcasts::request_id.eq(&row.id))
            .order(request_broadcasts::position.asc())
            .select(BroadcastRow::as_select())
            .load(c)?),
        _ => {
            let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            request_broadcasts::table
                .filter(request_broadcasts::request_id.eq_any(&ids))
                .order((
                    request_broadcasts::request_id.asc(),
                    request_broadcasts::position.asc(),
                ))
                .select(BroadcastRow::as_select())
                .load(conn)?
        }
    };
    let mut by_request: HashMap<String, Vec<BroadcastEntry>> = HashMap::new();
    for entry in entries {
        let request_id = entry.request_id.clone();
        by_request
            .entry(request_id)
            .or_default()
            .push(entry.into_domain()?);
    }
    rows.into_iter()
        .map(|row| {
            let entries = by_request.remove(&row.id).unwrap_or_default();
            row.into_domain(entries)
        })
        .collect()
}

/// The open requests among `these`, oldest first, with their broadcasts.
pub(super) fn open_requests(
    conn: &mut Conn,
    these: requests::BoxedQuery<'static, Backend>,
) -> Result<Vec<ReviewRequest>, DbError> {
    let rows = these
        .filter(sql::<Bool>(OPEN_CONDITION))
        .order(requests::created_at.asc())
        .select(RequestRow::as_select())
        .load(conn)?;
    with_broadcasts(conn, rows)
}
