//! The queries behind the lists, the inbox and the sweeps.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;

use chrono::{DateTime, Utc};
use diesel::expression::IntoSql;
use diesel::query_builder::QueryFragment;
use diesel::query_dsl::LoadQuery;
use reviewloop_ports::{InboxView, RequestQuery};

use super::Backend;
use crate::db::convert::to_db_time;
use crate::db::models::RequestRow;
use crate::db::schema::{loop_members, request_broadcasts, requests};
use crate::db::Conn;

/// Spelled exactly as in the `requests_due` partial index's WHERE clause:
/// a planner uses a partial index only when the query's condition matches
/// it literally, which bound parameters would not.
pub(crate) const OPEN_CONDITION: &str = "status IN ('pending', 'claimed')";
/// The same, for queries that join other tables with a `status` column.
pub(super) const OPEN_CONDITION_QUALIFIED: &str = "requests.status IN ('pending', 'claimed')";

pub(super) fn filtered(query: &RequestQuery) -> requests::BoxedQuery<'static, Backend> {
    let mut boxed = requests::table
        .into_boxed()
        .filter(requests::creator_id.eq(query.creator.to_string()))
        .filter(requests::test.eq(query.test));
    if let Some(key) = query.api_key {
        boxed = boxed.filter(requests::api_key_id.eq(key.to_string()));
    }
    if let Some(status) = query.status {
        boxed = boxed.filter(requests::status.eq(status.as_str()));
    }
    if let Some(priority) = query.priority {
        boxed = boxed.filter(requests::priority.eq(priority.as_str()));
    }
    if let Some(loop_id) = query.loop_id {
        boxed = boxed.filter(requests::loop_id.eq(loop_id.to_string()));
    }
    boxed
}

/// What a reviewer can still act on: open requests of the loops it is active
/// in (through `loop_members_by_user` and `requests_by_loop`), that were
/// sent to it (checked by primary key), pending or claimed by it. Its cost
/// follows the open work in those loops, not everything ever sent.
pub(super) fn inbox_query(
    user: String,
    view: InboxView,
    limit: u32,
    offset: u32,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    // One statement shape for every open view (so it is prepared once):
    // the view only switches its two halves on or off.
    let pending = matches!(view, InboxView::Actionable | InboxView::Available);
    let claimed = matches!(view, InboxView::Actionable | InboxView::Claimed);
    // A request that escalated is also the work of the other loop's
    // members it reached.
    loop_members::table
        .inner_join(
            requests::table.on(requests::loop_id
                .eq(loop_members::loop_id)
                .or(requests::escalated_to.eq(loop_members::loop_id.nullable()))),
        )
        .inner_join(
            request_broadcasts::table.on(request_broadcasts::request_id
                .eq(requests::id)
                .and(request_broadcasts::user_id.eq(loop_members::user_id))),
        )
        .filter(loop_members::user_id.eq(user.clone()))
        .filter(loop_members::status.eq("active"))
        .filter(sql::<Bool>(OPEN_CONDITION_QUALIFIED))
        // A quorum request the reviewer answered is no longer theirs to act on.
        .filter(request_broadcasts::answered_at.is_null())
        .filter(
            requests::status
                .eq("pending")
                .and(pending.into_sql::<Bool>())
                .or(requests::claimed_by
                    .eq(user)
                    .and(claimed.into_sql::<Bool>())),
        )
        .order((
            requests::priority_rank.desc(),
            requests::created_at.asc(),
            requests::id.asc(),
        ))
        .limit(i64::from(limit))
        .offset(i64::from(offset))
        .select(requests::all_columns)
        // A member of both loops would otherwise see it twice.
        .distinct()
}

/// What `user` answered in loops where it is still an active member, most
/// recent first (through `requests_by_responder`).
pub(super) fn answered_query(
    user: String,
    limit: u32,
    offset: u32,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    requests::table
        .inner_join(
            loop_members::table.on(loop_members::loop_id
                .eq(requests::loop_id)
                .or(loop_members::loop_id.nullable().eq(requests::escalated_to))
                .and(loop_members::user_id.eq(user.clone()))),
        )
        .filter(requests::response_by.eq(user))
        .filter(requests::status.eq("completed"))
        // Requests that took the reviewer's answer from another are not
        // answers it gave.
        .filter(requests::coalesced_into.is_null())
        .filter(requests::reused_from.is_null())
        .filter(loop_members::status.eq("active"))
        .order((requests::response_at.desc(), requests::id.desc()))
        .limit(i64::from(limit))
        .offset(i64::from(offset))
        .select(requests::all_columns)
        .distinct()
}

/// Open requests past their timeout, soonest first, through `requests_due`.
pub(super) fn due_query(
    now: DateTime<Utc>,
    limit: u32,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    requests::table
        .filter(sql::<Bool>(OPEN_CONDITION))
        .filter(requests::timeout_at.le(to_db_time(now)))
        // Test requests time out on their account's test clock, in the
        // test sweep.
        .filter(requests::test_due_at.is_null())
        // A request that joined another ends with it, not on its own.
        .filter(requests::coalesced_into.is_null())
        // The id breaks ties, so two sweepers lease rows in one order and
        // cannot deadlock on PostgreSQL.
        .order((requests::timeout_at.asc(), requests::id.asc()))
        .limit(i64::from(limit))
}

/// Pending requests whose escalation is due, soonest first, through
/// `requests_to_escalate`.
pub(super) fn escalation_query(
    now: DateTime<Utc>,
    limit: u32,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    requests::table
        .filter(requests::escalate_at.le(to_db_time(now)))
        .filter(requests::status.eq("pending"))
        .order((requests::escalate_at.asc(), requests::id.asc()))
        .limit(i64::from(limit))
}
