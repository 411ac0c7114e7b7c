//! Writing events to the outbox, and each to its account's audit log,
//! inside the caller's transaction.

use diesel::prelude::*;
use reviewloop_domain::{AuditRecord, Event};

use super::convert::{to_db_time, to_json_text};
use super::schema::outbox_events;
use super::{Conn, DbError};

#[derive(Insertable)]
#[diesel(table_name = outbox_events)]
struct EventRow {
    id: String,
    event_type: String,
    account_id: String,
    request_id: Option<String>,
    loop_id: Option<String>,
    payload: String,
    created_at: chrono::NaiveDateTime,
    test: bool,
}

/// Appends `events`; call it inside the transaction of the change they describe.
pub(crate) fn append(conn: &mut Conn, events: &[Event]) -> Result<(), DbError> {
    if events.is_empty() {
        return Ok(());
    }
    let rows: Vec<EventRow> = events
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
    // One row at a time: the multi-backend connection has no batch insert.
    for row in &rows {
        diesel::insert_into(outbox_events::table)
            .values(row)
            .execute(conn)?;
    }
    // Every live event is a change its account's audit log records; test
    // data stays out of the log of real decisions.
    let records: Vec<AuditRecord> = events
        .iter()
        .filter(|e| !e.test)
        .map(AuditRecord::of_event)
        .collect();
    super::audit::append(conn, &records)
}
