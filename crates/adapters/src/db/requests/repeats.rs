//! The store's side of fewer questions: finding the open request a new one
//! joins, a recent answer to reuse, followers left open, and how loaded
//! each member of a loop that assigns its requests is.

use chrono::NaiveDateTime;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::query_builder::QueryFragment;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::Bool;
use reviewloop_domain::ReviewRequest;
use reviewloop_ports::StoreError;

use super::queries::OPEN_CONDITION_QUALIFIED;
use super::rows::with_broadcasts;
use crate::db::models::RequestRow;
use crate::db::schema::{request_broadcasts, requests};
use crate::db::{Conn, DbConnection, DbError};

/// The open request that takes in others with `key`.
pub(super) fn open_with_key(
    conn: &mut Conn,
    creator: &str,
    loop_id: &str,
    test: bool,
    key: &str,
) -> Result<Option<ReviewRequest>, DbError> {
    let rows = open_with_key_query(creator, loop_id, test, key).load::<RequestRow>(conn)?;
    Ok(with_broadcasts(conn, rows)?.pop())
}

/// The statement of [`open_with_key`], through the unique
/// `requests_open_question` index: the `IS NOT NULL` is its condition,
/// spelled out so that every planner sees the index applies.
pub(super) fn open_with_key_query(
    creator: &str,
    loop_id: &str,
    test: bool,
    key: &str,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<super::Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    requests::table
        .filter(requests::coalesce_slot.is_not_null())
        .filter(requests::creator_id.eq(creator.to_owned()))
        .filter(requests::loop_id.eq(loop_id.to_owned()))
        .filter(requests::test.eq(test))
        .filter(requests::coalesce_slot.eq(key.to_owned()))
}

/// The latest answer a person gave to a live request with `key` since
/// `since`.
pub(super) fn answer_to_reuse(
    conn: &mut Conn,
    creator: &str,
    loop_id: &str,
    key: &str,
    since: NaiveDateTime,
) -> Result<Option<ReviewRequest>, DbError> {
    let rows = answer_query(creator, loop_id, key, since).load::<RequestRow>(conn)?;
    Ok(with_broadcasts(conn, rows)?.pop())
}

/// The statement of [`answer_to_reuse`], through
/// `requests_answers_by_question`, whose condition it spells literally (a
/// bound `status` would keep a planner from proving the index applies).
pub(super) fn answer_query(
    creator: &str,
    loop_id: &str,
    key: &str,
    since: NaiveDateTime,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<super::Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    requests::table
        .filter(requests::coalesce_key.is_not_null())
        .filter(sql::<Bool>("status = 'completed'"))
        .filter(requests::creator_id.eq(creator.to_owned()))
        .filter(requests::loop_id.eq(loop_id.to_owned()))
        .filter(requests::coalesce_key.eq(key.to_owned()))
        .filter(requests::response_at.ge(since))
        .filter(requests::response_by.is_not_null())
        .filter(requests::test.eq(false))
        .filter(requests::reused_from.is_null())
        .filter(requests::coalesced_into.is_null())
        .order((requests::response_at.desc(), requests::id.desc()))
        .limit(1)
}

/// The open requests that joined `request`, oldest first, through
/// `requests_followers`.
pub(super) fn open_followers_query(
    request: &str,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<super::Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    requests::table
        .filter(requests::coalesced_into.is_not_null())
        .filter(requests::coalesced_into.eq(request.to_owned()))
        .filter(sql::<Bool>(super::queries::OPEN_CONDITION))
        .order((requests::created_at.asc(), requests::id.asc()))
}

/// Open followers whose request has ended (through `requests_followers`).
pub(super) fn stranded(conn: &mut Conn, limit: u32) -> Result<Vec<ReviewRequest>, DbError> {
    let rows = stranded_query(limit).load::<RequestRow>(conn)?;
    with_broadcasts(conn, rows)
}

/// The statement of [`stranded`], for its plan's test.
pub(super) fn stranded_query(
    limit: u32,
) -> impl LoadQuery<'static, Conn, RequestRow>
       + QueryFragment<super::Backend>
       + QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    let ended = diesel::alias!(requests as ended);
    requests::table
        .inner_join(ended.on(requests::coalesced_into.eq(ended.field(requests::id).nullable())))
        // Spelled as `requests_open_followers`' condition, for the planner.
        .filter(requests::coalesced_into.is_not_null())
        .filter(sql::<Bool>(OPEN_CONDITION_QUALIFIED))
        .filter(ended.field(requests::status).ne_all(["pending", "claimed"]))
        .order((requests::created_at.asc(), requests::id.asc()))
        .limit(i64::from(limit))
        .select(requests::all_columns)
}

/// For each member with any, its open requests of `loop_id`: offered to
/// it and unanswered while pending, or held by it.
pub(super) fn open_loads(conn: &mut Conn, loop_id: &str) -> Result<Vec<(String, i64)>, DbError> {
    Ok(request_broadcasts::table
        .inner_join(requests::table)
        .filter(requests::loop_id.eq(loop_id))
        .filter(sql::<Bool>(OPEN_CONDITION_QUALIFIED))
        .filter(request_broadcasts::answered_at.is_null())
        .filter(
            requests::status
                .eq("pending")
                .or(requests::claimed_by.eq(request_broadcasts::user_id.nullable())),
        )
        .group_by(request_broadcasts::user_id)
        .select((request_broadcasts::user_id, diesel::dsl::count_star()))
        .load(conn)?)
}

/// Refuses a follower whose request no longer takes others in: it ended,
/// or its window passed. On PostgreSQL the request's row is locked for
/// share until the follower is written, so a transaction ending it waits
/// and then finds the follower to settle.
pub(super) fn ensure_still_joinable(
    conn: &mut Conn,
    into: &str,
    key: Option<&str>,
) -> Result<(), DbError> {
    let slot: Option<Option<String>> = match conn {
        DbConnection::Postgres(pg) => requests::table
            .find(into)
            .select(requests::coalesce_slot)
            .for_share()
            .first(pg)
            .optional()?,
        DbConnection::Sqlite(_) => requests::table
            .find(into)
            .select(requests::coalesce_slot)
            .first(conn)
            .optional()?,
    };
    match (slot.flatten(), key) {
        (Some(slot), Some(key)) if slot == key => Ok(()),
        _ => Err(StoreError::Conflict("the request it joins takes no more in".into()).into()),
    }
}

#[cfg(test)]
mod tests;
