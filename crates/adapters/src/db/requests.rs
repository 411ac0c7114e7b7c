//! The request store: requests, their broadcast entries, and the queries
//! behind the lists, the inbox and the timeout sweeper.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::expression::IntoSql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use reviewloop_domain::{
    Event, LoopId, QuestionKey, RequestId, RequestStatus, ReviewRequest, UserId,
};
use reviewloop_ports::{
    InboxView, RequestFacts, RequestPage, RequestQuery, RequestSort, RequestStore, StoreError,
};

use super::convert::{corrupt, from_db_time, parse, parse_opt, to_db_time};
use super::models::{BroadcastRow, RequestRow};
use super::outbox::NewEvents;
use super::schema::{loop_members, request_broadcasts, requests, test_clocks};
use super::{native, outbox, Conn, DbConnection, DbError, SqlStore};

pub(super) type Backend = <Conn as diesel::Connection>::Backend;

/// How long a sweeper holds the due requests it took; another instance
/// takes them after that if they are still open (its sweeper died).
const SWEEP_LEASE_SECONDS: i64 = 10;

mod lease;
mod queries;
mod repeats;
mod rows;

pub(super) use queries::OPEN_CONDITION;
pub(super) use rows::with_broadcasts;

use lease::lease_all;
use queries::{answered_query, due_query, escalation_query, filtered, inbox_query};
use rows::{
    one_request, one_request_for_viewer, open_requests, rows_of, silent_change_of, write_all,
    write_if_unchanged, Change,
};

impl SqlStore {
    /// Request `id`: its in-memory copy on SQLite, else read (and, on
    /// SQLite, kept).
    pub(super) async fn request_copy(
        &self,
        id: &RequestId,
    ) -> Result<Option<Arc<ReviewRequest>>, StoreError> {
        let read = || {
            let id = id.to_string();
            self.db.run(move |conn| one_request(conn, &id))
        };
        let copies = self.db.cache.as_ref().map(|cache| &cache.requests);
        super::cache::copy_or_read(copies, *id, read).await
    }

    /// Writes changed requests, each with its events and the broadcast
    /// entries it gained since it was read (by escalation, reassignment,
    /// or ending with the request it joined), in one transaction, each
    /// only if nobody changed it meanwhile: the version check lets one
    /// such change of a request land, so its new entries go in once.
    async fn write_with_entries(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError> {
        let (writes, entries): (Vec<Change>, Vec<Vec<BroadcastRow>>) = changes
            .iter()
            .map(|(request, events)| {
                (
                    (
                        rows_of(request),
                        NewEvents::of(events),
                        silent_change_of(request),
                    ),
                    BroadcastRow::from_domain(request),
                )
            })
            .unzip();
        self.db
            .write(move |conn| {
                // A pass is written as a batch (set-based on PostgreSQL),
                // then the new entries of those that landed, found by what
                // is stored already, in a few multi-row inserts.
                let landed = write_all(conn, &writes)?;
                let ids: Vec<&str> = writes
                    .iter()
                    .zip(&landed)
                    .filter(|(_, landed)| **landed)
                    .map(|(((row, _), _, _), _)| row.id.as_str())
                    .collect();
                let stored: std::collections::HashSet<(String, String)> = request_broadcasts::table
                    .filter(request_broadcasts::request_id.eq_any(&ids))
                    .select((request_broadcasts::request_id, request_broadcasts::user_id))
                    .load::<(String, String)>(conn)?
                    .into_iter()
                    .collect();
                let entries: Vec<&BroadcastRow> = entries
                    .iter()
                    .zip(&landed)
                    .filter(|(_, landed)| **landed)
                    .flat_map(|(entries, _)| entries)
                    .filter(|e| !stored.contains(&(e.request_id.clone(), e.user_id.clone())))
                    .collect();
                match conn {
                    // A few statements for the pass, where each is a round
                    // trip (well under the limit of bound values each).
                    DbConnection::Postgres(pg) => {
                        for chunk in entries.chunks(500) {
                            diesel::insert_into(request_broadcasts::table)
                                .values(chunk.to_vec())
                                .execute(pg)?;
                        }
                    }
                    DbConnection::Sqlite(_) => {
                        for entry in entries {
                            diesel::insert_into(request_broadcasts::table)
                                .values(entry)
                                .execute(conn)?;
                        }
                    }
                }
                Ok(landed)
            })
            .await
    }
}

#[async_trait]
impl RequestStore for SqlStore {
    async fn insert_request(
        &self,
        request: &ReviewRequest,
        events: &[Event],
    ) -> Result<(), StoreError> {
        let row = RequestRow::from_domain(request);
        let broadcasts = BroadcastRow::from_domain(request);
        let events = NewEvents::of(events);
        // Kept in memory once written: the dispatcher, and the requester's
        // first poll, read it next. Taken before the write, the ticket
        // refuses the copy if anything changed the request meanwhile.
        let ticket = self
            .db
            .cache
            .as_ref()
            .map(|cache| (cache.clone(), cache.requests.get(&request.id).err()));
        self.db
            .write(move |conn| {
                if let Some(into) = &row.coalesced_into {
                    repeats::ensure_still_joinable(conn, into, row.coalesce_key.as_deref())?;
                }
                native!(conn, |c| {
                    diesel::insert_into(requests::table)
                        .values(&row)
                        .execute(c)?;
                    // One statement (cached once) per row: a batch insert's
                    // statement differs with its number of rows.
                    for row in &broadcasts {
                        diesel::insert_into(request_broadcasts::table)
                            .values(row)
                            .execute(c)?;
                    }
                });
                outbox::append(conn, &events)
            })
            .await?;
        if let Some((cache, Some(ticket))) = ticket {
            cache
                .requests
                .fill(request.id, Arc::new(request.clone()), ticket);
        }
        Ok(())
    }

    async fn request_by_id(&self, id: &RequestId) -> Result<Option<ReviewRequest>, StoreError> {
        Ok(self.request_copy(id).await?.map(Arc::unwrap_or_clone))
    }

    async fn request_for_viewer(
        &self,
        id: &RequestId,
        viewer: &UserId,
    ) -> Result<Option<(Arc<ReviewRequest>, bool)>, StoreError> {
        if self.db.cache.is_some() {
            // From the copies: no trip at all once both are in memory.
            let Some(request) = self.request_copy(id).await? else {
                return Ok(None);
            };
            let mut active = self
                .loop_copy(&request.loop_id)
                .await?
                .is_some_and(|lp| lp.is_active_member(viewer));
            if let (false, Some(escalated_to)) = (active, request.escalated_to()) {
                active = self
                    .loop_copy(&escalated_to)
                    .await?
                    .is_some_and(|lp| lp.is_active_member(viewer));
            }
            return Ok(Some((request, active)));
        }
        let (id, viewer) = (id.to_string(), viewer.to_string());
        self.db
            .run(move |conn| {
                if let DbConnection::Postgres(pg) = conn {
                    return Ok(one_request_for_viewer(pg, &id, &viewer)?
                        .map(|(request, active)| (Arc::new(request), active)));
                }
                let Some(request) = one_request(conn, &id)? else {
                    return Ok(None);
                };
                // By primary key: no member list is loaded to answer this.
                let active_in = |conn: &mut Conn, loop_id: String| -> Result<bool, DbError> {
                    Ok(native!(conn, |c| diesel::select(diesel::dsl::exists(
                        loop_members::table
                            .find((&loop_id, &viewer))
                            .filter(loop_members::status.eq("active")),
                    ))
                    .get_result(c)?))
                };
                let mut active = active_in(conn, request.loop_id.to_string())?;
                if let (false, Some(escalated_to)) = (active, request.escalated_to()) {
                    active = active_in(conn, escalated_to.to_string())?;
                }
                Ok(Some((Arc::new(request), active)))
            })
            .await
    }

    async fn update_request(
        &self,
        request: &ReviewRequest,
        events: &[Event],
    ) -> Result<(), StoreError> {
        let row = rows_of(request);
        let events = NewEvents::of(events);
        let record = silent_change_of(request);
        self.db
            .write(move |conn| {
                if write_if_unchanged(conn, &row, &events, &record)? {
                    return Ok(());
                }
                let exists: i64 = requests::table.find(&row.0.id).count().get_result(conn)?;
                Err(if exists > 0 {
                    StoreError::Conflict("request changed since it was read".into())
                } else {
                    StoreError::NotFound
                }
                .into())
            })
            .await
    }

    async fn update_requests(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError> {
        let changes: Vec<Change> = changes
            .iter()
            .map(|(request, events)| {
                (
                    rows_of(request),
                    NewEvents::of(events),
                    silent_change_of(request),
                )
            })
            .collect();
        self.db.write(move |conn| write_all(conn, &changes)).await
    }

    async fn test_clock_offset(&self, account: &UserId) -> Result<i64, StoreError> {
        let account = account.to_string();
        self.db
            .run(move |conn| {
                Ok(test_clocks::table
                    .find(account)
                    .select(test_clocks::offset_seconds)
                    .first::<i64>(conn)
                    .optional()?
                    .unwrap_or(0))
            })
            .await
    }

    async fn advance_test_clock(
        &self,
        account: &UserId,
        seconds: i64,
        now: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        let (account, now) = (account.to_string(), to_db_time(now));
        self.db
            .write(move |conn| {
                // One statement adds to the offset, so two advances at once
                // add up; an account's first advance makes its row.
                let changed = diesel::update(test_clocks::table.find(&account))
                    .set((
                        test_clocks::offset_seconds.eq(test_clocks::offset_seconds + seconds),
                        test_clocks::updated_at.eq(now),
                    ))
                    .execute(conn)?;
                if changed == 0 {
                    diesel::insert_into(test_clocks::table)
                        .values((
                            test_clocks::account_id.eq(&account),
                            test_clocks::offset_seconds.eq(seconds),
                            test_clocks::updated_at.eq(now),
                        ))
                        .execute(conn)?;
                }
                let advanced = test_clocks::table
                    .find(&account)
                    .select(test_clocks::offset_seconds)
                    .first::<i64>(conn)?;
                Ok(advanced)
            })
            .await
    }

    async fn accounts_with_open_tests(&self) -> Result<Vec<UserId>, StoreError> {
        self.db
            .run(move |conn| {
                let ids: Vec<String> = requests::table
                    .filter(requests::test_due_at.is_not_null())
                    .select(requests::creator_id)
                    .distinct()
                    .load(conn)?;
                ids.iter().map(|id| parse("user id", id)).collect()
            })
            .await
    }

    async fn due_test_requests(
        &self,
        account: &UserId,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let (account, now) = (account.to_string(), to_db_time(now));
        self.db
            .run(move |conn| {
                let rows = requests::table
                    .filter(requests::creator_id.eq(account))
                    .filter(requests::test_due_at.le(now))
                    .order((requests::test_due_at.asc(), requests::id.asc()))
                    .limit(i64::from(limit))
                    .select(RequestRow::as_select())
                    .load(conn)?;
                with_broadcasts(conn, rows)
            })
            .await
    }

    async fn due_escalations(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let query = escalation_query(now, limit);
        self.db
            .run(move |conn| {
                let rows = query.load::<RequestRow>(conn)?;
                with_broadcasts(conn, rows)
            })
            .await
    }

    async fn escalate_requests(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError> {
        self.write_with_entries(changes).await
    }

    async fn open_request_with_key(
        &self,
        creator: &UserId,
        loop_id: &LoopId,
        test: bool,
        key: &QuestionKey,
    ) -> Result<Option<ReviewRequest>, StoreError> {
        let (creator, loop_id, key) = (creator.to_string(), loop_id.to_string(), key.to_string());
        self.db
            .run(move |conn| repeats::open_with_key(conn, &creator, &loop_id, test, &key))
            .await
    }

    async fn answer_to_reuse(
        &self,
        creator: &UserId,
        loop_id: &LoopId,
        key: &QuestionKey,
        since: DateTime<Utc>,
    ) -> Result<Option<ReviewRequest>, StoreError> {
        let (creator, loop_id, key) = (creator.to_string(), loop_id.to_string(), key.to_string());
        let since = to_db_time(since);
        self.db
            .run(move |conn| repeats::answer_to_reuse(conn, &creator, &loop_id, &key, since))
            .await
    }

    async fn open_followers(&self, request: &RequestId) -> Result<Vec<ReviewRequest>, StoreError> {
        let request = request.to_string();
        self.db
            .run(move |conn| {
                let rows = repeats::open_followers_query(&request).load::<RequestRow>(conn)?;
                with_broadcasts(conn, rows)
            })
            .await
    }

    async fn stranded_followers(&self, limit: u32) -> Result<Vec<ReviewRequest>, StoreError> {
        self.db
            .run(move |conn| repeats::stranded(conn, limit))
            .await
    }

    async fn open_loads(&self, loop_id: &LoopId) -> Result<Vec<(UserId, u64)>, StoreError> {
        let loop_id = loop_id.to_string();
        self.db
            .run(move |conn| {
                let rows = repeats::open_loads(conn, &loop_id)?;
                rows.into_iter()
                    .map(|(user, n)| Ok((parse("user id", &user)?, u64::try_from(n).unwrap_or(0))))
                    .collect()
            })
            .await
    }

    async fn due_reassignments(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let now = to_db_time(now);
        self.db
            .run(move |conn| {
                let rows = requests::table
                    .filter(requests::reassign_at.is_not_null())
                    .filter(requests::reassign_at.le(now))
                    .filter(requests::status.eq("pending"))
                    .order((requests::reassign_at.asc(), requests::id.asc()))
                    .limit(i64::from(limit))
                    .select(RequestRow::as_select())
                    .load(conn)?;
                with_broadcasts(conn, rows)
            })
            .await
    }

    async fn reassign_requests(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError> {
        self.write_with_entries(changes).await
    }

    async fn follower_count(
        &self,
        request: &RequestId,
        status: RequestStatus,
    ) -> Result<u64, StoreError> {
        let request = request.to_string();
        self.db
            .run(move |conn| {
                let count: i64 = requests::table
                    .filter(requests::coalesced_into.is_not_null())
                    .filter(requests::coalesced_into.eq(request))
                    .filter(requests::status.eq(status.as_str()))
                    .count()
                    .get_result(conn)?;
                Ok(u64::try_from(count).unwrap_or_default())
            })
            .await
    }

    async fn settle_followers(
        &self,
        changes: &[(ReviewRequest, Vec<Event>)],
    ) -> Result<Vec<bool>, StoreError> {
        self.write_with_entries(changes).await
    }

    async fn list_requests(&self, query: &RequestQuery) -> Result<RequestPage, StoreError> {
        let query = query.clone();
        self.db
            .run(move |conn| {
                let total: i64 = filtered(&query).count().get_result(conn)?;
                let page = filtered(&query);
                let page = match query.sort {
                    RequestSort::CreatedAtDesc => {
                        page.order((requests::created_at.desc(), requests::id.desc()))
                    }
                    RequestSort::CreatedAtAsc => {
                        page.order((requests::created_at.asc(), requests::id.asc()))
                    }
                    RequestSort::PriorityDesc => page.order((
                        requests::priority_rank.desc(),
                        requests::created_at.desc(),
                        requests::id.desc(),
                    )),
                    RequestSort::StatusAsc => page.order((
                        requests::status.asc(),
                        requests::created_at.desc(),
                        requests::id.desc(),
                    )),
                };
                let rows = page
                    .limit(i64::from(query.limit))
                    .offset(i64::from(query.offset))
                    .select(RequestRow::as_select())
                    .load(conn)?;
                Ok(RequestPage {
                    requests: with_broadcasts(conn, rows)?,
                    total: u64::try_from(total).unwrap_or_default(),
                })
            })
            .await
    }

    async fn open_requests_in_loop(
        &self,
        loop_id: &LoopId,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let loop_id = loop_id.to_string();
        self.db
            .run(move |conn| {
                let of_loop = requests::table
                    .into_boxed()
                    .filter(requests::loop_id.eq(loop_id));
                open_requests(conn, of_loop)
            })
            .await
    }

    async fn open_requests_escalated_to(
        &self,
        loop_id: &LoopId,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let loop_id = loop_id.to_string();
        self.db
            .run(move |conn| {
                let escalated_here = requests::table
                    .into_boxed()
                    .filter(requests::escalated_to.eq(loop_id));
                open_requests(conn, escalated_here)
            })
            .await
    }

    async fn inbox(
        &self,
        user: &UserId,
        view: InboxView,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let user = user.to_string();
        self.db
            .run(move |conn| {
                let rows = match view {
                    InboxView::Answered => {
                        answered_query(user, limit, offset).load::<RequestRow>(conn)?
                    }
                    open => inbox_query(user, open, limit, offset).load::<RequestRow>(conn)?,
                };
                with_broadcasts(conn, rows)
            })
            .await
    }

    async fn request_facts(
        &self,
        creator: &UserId,
        loop_id: Option<LoopId>,
        since: DateTime<Utc>,
    ) -> Result<Vec<RequestFacts>, StoreError> {
        type Row = (
            String,
            String,
            Option<String>,
            Option<f64>,
            chrono::NaiveDateTime,
            Option<String>,
            Option<String>,
        );
        let (creator, since) = (creator.to_string(), to_db_time(since));
        // "Any loop" is the creator's own index range; one loop narrows it.
        let loop_id = loop_id.map(|l| l.to_string());
        self.db
            .run(move |conn| {
                let rows: Vec<Row> = requests::table
                    .filter(requests::creator_id.eq(creator))
                    .filter(requests::test.eq(false))
                    .filter(requests::created_at.ge(since))
                    .filter(
                        requests::loop_id
                            .nullable()
                            .eq(loop_id.clone())
                            .or(loop_id.is_none().into_sql::<Bool>()),
                    )
                    .select((
                        requests::loop_id,
                        requests::status,
                        requests::response_by,
                        requests::response_time_seconds,
                        requests::created_at,
                        requests::coalesced_into,
                        requests::reused_from,
                    ))
                    .load(conn)?;
                rows.into_iter()
                    .map(|(lp, status, by, seconds, created, into, from)| {
                        Ok(RequestFacts {
                            loop_id: parse("loop id", &lp)?,
                            status: RequestStatus::parse(&status)
                                .map_err(|_| corrupt("request status", &status))?,
                            response_by: parse_opt("user id", by.as_deref())?,
                            response_time_seconds: seconds,
                            created_at: from_db_time(created),
                            saved: into.is_some() || from.is_some(),
                        })
                    })
                    .collect()
            })
            .await
    }

    async fn due_requests(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        if !self.db.is_postgres() {
            // One instance serves an SQLite database and its sweeper takes
            // one pass at a time: nobody shares the due requests, so they
            // are read, not leased.
            let query = due_query(now, limit);
            return self
                .db
                .run(move |conn| {
                    let rows = query.load::<RequestRow>(conn)?;
                    with_broadcasts(conn, rows)
                })
                .await;
        }
        // Instances share the due requests on PostgreSQL, so each pass
        // leases those it takes: the candidates' ids, then their leases in
        // one statement, then the rows of those it won.
        let (now_db, until) = (
            to_db_time(now),
            to_db_time(now + chrono::Duration::seconds(SWEEP_LEASE_SECONDS)),
        );
        let candidates: Vec<String> = self
            .db
            .run(move |conn| {
                Ok(requests::table
                    .filter(sql::<Bool>(OPEN_CONDITION))
                    .filter(requests::timeout_at.le(now_db))
                    .filter(requests::test_due_at.is_null())
                    .filter(requests::coalesced_into.is_null())
                    .order((requests::timeout_at.asc(), requests::id.asc()))
                    .limit(i64::from(limit.saturating_mul(4)))
                    .select(requests::id)
                    .load(conn)?)
            })
            .await?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let taken = self
            .db
            .write(move |conn| {
                // The first `limit` candidates, then as many more as leases
                // were lost to another instance, until the pass is full.
                let (mut taken, mut rest) = (Vec::new(), candidates.as_slice());
                while taken.len() < limit as usize && !rest.is_empty() {
                    let (chunk, after) =
                        rest.split_at((limit as usize - taken.len()).min(rest.len()));
                    taken.extend(lease_all(conn, chunk, now_db, until)?);
                    rest = after;
                }
                Ok(taken)
            })
            .await?;
        if taken.is_empty() {
            return Ok(Vec::new());
        }
        self.db
            .run(move |conn| {
                let rows = requests::table
                    .filter(requests::id.eq_any(&taken))
                    .order((requests::timeout_at.asc(), requests::id.asc()))
                    .select(RequestRow::as_select())
                    .load(conn)?;
                with_broadcasts(conn, rows)
            })
            .await
    }
}

#[cfg(test)]
mod tests;
