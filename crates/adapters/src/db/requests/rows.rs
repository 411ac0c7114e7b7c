//! A request's rows: read with its broadcast entries, written back only
//! if nobody changed it since it was read.

use std::collections::{HashMap, HashSet};

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text};
use reviewloop_domain::{AuditRecord, BroadcastEntry, ReviewRequest};

use super::queries::OPEN_CONDITION;
use super::Backend;
use crate::db::audit::NewEntries;
use crate::db::convert::corrupt;
use crate::db::fixed::{text_query, update};
use crate::db::models::RequestDiff;
use crate::db::models::{BroadcastRow, RequestRow};
use crate::db::outbox::NewEvents;
use crate::db::schema::{request_broadcasts, requests};
use crate::db::{changes, native, outbox, set_based, Conn, DbConnection, DbError};

/// One request with its broadcast entries.
pub(super) fn one_request(conn: &mut Conn, id: &str) -> Result<Option<ReviewRequest>, DbError> {
    // No `LIMIT`: the primary key yields one row at most.
    let rows: Vec<RequestRow> = native!(conn, |c| requests::table
        .find(id)
        .select(RequestRow::as_select())
        .load(c)?);
    Ok(with_broadcasts(conn, rows)?.pop())
}

/// A request's row, its broadcast entries as a JSON array, and whether
/// the viewer is an active member of its loop or of the loop it was
/// escalated to.
#[derive(QueryableByName)]
struct ViewedRow {
    #[diesel(embed)]
    request: RequestRow,
    #[diesel(sql_type = Nullable<Text>)]
    broadcasts: Option<String>,
    #[diesel(sql_type = Bool)]
    viewer_active: bool,
}

/// The statement of [`one_request_for_viewer`] up to its first parameter.
/// It names the row's columns rather than `r.*`: a connection keeps the
/// statement prepared, and PostgreSQL refuses to run a kept statement
/// whose result gained a column (a migration while instances run).
static VIEWER_READ: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let columns: Vec<String> = ["id", "version", "reminded_at"]
        .iter()
        .chain(RequestDiff::COLUMNS)
        .map(|column| format!("r.{column}"))
        .collect();
    format!(
        "SELECT {},
           (SELECT json_agg(b ORDER BY b.position)::text
            FROM request_broadcasts b WHERE b.request_id = r.id) AS broadcasts,
           EXISTS (SELECT 1 FROM loop_members m
                   WHERE m.user_id = ",
        columns.join(", ")
    )
});
const VIEWER_READ_ID: &str = " AND m.status = 'active'
                 AND (m.loop_id = r.loop_id OR m.loop_id = r.escalated_to))
         AS viewer_active
     FROM requests r WHERE r.id = ";

/// Request `id` with whether `viewer` is an active member of a loop it
/// reached, in one statement: on PostgreSQL each statement is a round
/// trip, and a requester polling for the answer reads this more than
/// anything else.
pub(super) fn one_request_for_viewer(
    pg: &mut diesel::PgConnection,
    id: &str,
    viewer: &str,
) -> Result<Option<(ReviewRequest, bool)>, DbError> {
    let rows: Vec<ViewedRow> =
        text_query([VIEWER_READ.as_str(), VIEWER_READ_ID, ""], vec![viewer, id]).load(pg)?;
    let Some(row) = rows.into_iter().next() else {
        return Ok(None);
    };
    let entries: Vec<BroadcastRow> = match &row.broadcasts {
        Some(json) => serde_json::from_str(json).map_err(|_| corrupt("broadcast entries", json))?,
        None => Vec::new(),
    };
    let entries = entries
        .into_iter()
        .map(BroadcastRow::into_domain)
        .collect::<Result<_, _>>()?;
    Ok(Some((row.request.into_domain(entries)?, row.viewer_active)))
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
    write_answers(conn, answers)?;
    changes::request_changed(conn, &row.id)?;
    outbox::append_change(conn, events, silent_change.as_ref())?;
    Ok(true)
}

/// A change to one request as the store writes it: its row and quorum
/// answers, its events, and its audit entry if it has no event.
pub(super) type Change = (
    (RequestRow, Vec<BroadcastRow>),
    NewEvents,
    Option<NewEntries>,
);

/// Writes each change whose request nobody changed since it was read, and
/// says which did. On PostgreSQL a batch (a sweep's pass) is written with
/// a few set-based statements, not five round trips per request: the rows
/// under their version checks, the announcements, the events, the audit
/// entries.
pub(super) fn write_all(conn: &mut Conn, changes: &[Change]) -> Result<Vec<bool>, DbError> {
    let ids: Vec<&str> = changes
        .iter()
        .map(|((row, _), _, _)| row.id.as_str())
        .collect();
    // Two changes to one request: the second must see the first's version,
    // which only writing them one after the other does.
    let distinct = ids.iter().collect::<HashSet<_>>().len() == ids.len();
    let landed: HashSet<String> = match conn {
        DbConnection::Postgres(pg) if distinct && changes.len() > 1 => {
            let rows = changes
                .iter()
                .map(|((row, _), _, _)| RequestDiff::json_of(row))
                .collect();
            set_based::update_requests(pg, RequestDiff::COLUMNS, rows)?
        }
        _ => {
            return changes
                .iter()
                .map(|(row, events, silent)| write_if_unchanged(conn, row, events, silent))
                .collect()
        }
    };
    let written: Vec<&Change> = changes
        .iter()
        .filter(|((row, _), _, _)| landed.contains(&row.id))
        .collect();
    for ((_, answers), _, _) in &written {
        write_answers(conn, answers)?;
    }
    if let DbConnection::Postgres(pg) = conn {
        let ids: Vec<&str> = written
            .iter()
            .map(|((row, _), _, _)| row.id.as_str())
            .collect();
        changes::requests_changed(pg, &ids)?;
        let logged: Vec<_> = written
            .iter()
            .map(|(_, events, silent)| (events, silent.as_ref()))
            .collect();
        outbox::append_all(pg, &logged)?;
    }
    Ok(ids.iter().map(|id| landed.contains(*id)).collect())
}

/// Writes reviewers' quorum answers of a change that landed.
fn write_answers(conn: &mut Conn, answers: &[BroadcastRow]) -> Result<(), DbError> {
    // A reviewer's answer is written once; the version check of the change
    // already makes sure it was given to the state now stored.
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
    Ok(())
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
