//! Writing events to the outbox, and each to its account's audit log,
//! inside the caller's transaction.

use diesel::prelude::*;
use reviewloop_domain::{AuditRecord, Event};

use super::convert::{to_db_time, to_json_text};
use super::schema::outbox_events;
use super::{native, Conn, DbError};

#[derive(Insertable, serde::Serialize)]
#[diesel(table_name = outbox_events, treat_none_as_default_value = false)]
struct EventRow {
    id: String,
    event_type: String,
    account_id: String,
    request_id: Option<String>,
    loop_id: Option<String>,
    payload: String,
    #[serde(serialize_with = "super::convert::serialize_db_time")]
    created_at: chrono::NaiveDateTime,
    test: bool,
}

/// Events made ready to write: their rows and their audit entries, with
/// every payload already serialized, so that the transaction (on SQLite,
/// the one writer thread) only writes.
pub(crate) struct NewEvents {
    rows: Vec<EventRow>,
    entries: super::audit::NewEntries,
}

impl NewEvents {
    /// The rows of `events` and of the audit entries they make.
    pub(crate) fn of(events: &[Event]) -> Self {
        let rows = events
            .iter()
            .map(|e| EventRow {
                id: e.id.to_string(),
                event_type: e.event_type.as_str().to_owned(),
                account_id: e.account_id.to_string(),
                request_id: e.request_id.map(|r| r.to_string()),
                loop_id: e.loop_id.map(|l| l.to_string()),
                payload: to_json_text(&e.data),
                created_at: to_db_time(e.created_at),
                test: e.test,
            })
            .collect();
        // Every live event is a change its account's audit log records;
        // test data stays out of the log of real decisions.
        let records: Vec<AuditRecord> = events
            .iter()
            .filter(|e| !e.test)
            .map(AuditRecord::of_event)
            .collect();
        Self {
            rows,
            entries: super::audit::NewEntries::of(&records),
        }
    }

    /// Whether there is no event to write.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Appends `events`; call it inside the transaction of the change they describe.
pub(crate) fn append(conn: &mut Conn, events: &NewEvents) -> Result<(), DbError> {
    append_rows(conn, events)?;
    super::audit::append(conn, &events.entries)
}

fn append_rows(conn: &mut Conn, events: &NewEvents) -> Result<(), DbError> {
    // One statement (cached once) per row: a batch insert's statement
    // differs with its number of rows.
    native!(conn, |c| for row in &events.rows {
        diesel::insert_into(outbox_events::table)
            .values(row)
            .execute(c)?;
    });
    Ok(())
}

/// What a change logs in its account's audit trail: its events' entries,
/// or, for a change without events (a release, an edit, feedback), its
/// own entry (`silent`), if it has one.
fn logged<'a>(
    events: &'a NewEvents,
    silent: Option<&'a super::audit::NewEntries>,
) -> Option<&'a super::audit::NewEntries> {
    if events.is_empty() {
        silent
    } else {
        Some(&events.entries)
    }
}

/// Appends one change's events and what it logs (see [`logged`]).
pub(crate) fn append_change(
    conn: &mut Conn,
    events: &NewEvents,
    silent: Option<&super::audit::NewEntries>,
) -> Result<(), DbError> {
    append_rows(conn, events)?;
    match logged(events, silent) {
        Some(entries) => super::audit::append(conn, entries),
        None => Ok(()),
    }
}

/// Appends the events of many changes on PostgreSQL, with what each logs
/// in change order (see [`logged`]). One statement for all events and one
/// for all entries, where [`append_change`] is one per row.
pub(crate) fn append_all(
    pg: &mut diesel::PgConnection,
    changes: &[(&NewEvents, Option<&super::audit::NewEntries>)],
) -> Result<(), DbError> {
    let rows: Vec<&EventRow> = changes.iter().flat_map(|(e, _)| &e.rows).collect();
    super::set_based::insert(pg, "outbox_events", &rows)?;
    let entries = changes
        .iter()
        .filter_map(|(events, silent)| logged(events, *silent));
    super::audit::append_all(pg, entries)
}
