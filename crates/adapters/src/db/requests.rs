//! The request store: requests, their broadcast entries, and the queries
//! behind the lists, the inbox and the timeout sweeper.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::expression::IntoSql;
use diesel::prelude::*;
use diesel::query_builder::QueryFragment;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::Bool;
use reviewloop_domain::{
    AuditRecord, BroadcastEntry, Event, LoopId, RequestId, RequestStatus, ReviewRequest, UserId,
    ESCALATION_ROLE,
};
use reviewloop_ports::{
    InboxView, RequestFacts, RequestPage, RequestQuery, RequestSort, RequestStore, StoreError,
};

use super::audit::NewEntries;
use super::convert::{corrupt, from_db_time, parse, parse_opt, to_db_time};
use super::fixed::update;
use super::models::{BroadcastRow, RequestDiff, RequestRow};
use super::outbox::NewEvents;
use super::schema::{loop_members, request_broadcasts, requests, test_clocks};
use super::{changes, native, outbox, Conn, DbError, SqlStore};

type Backend = <Conn as diesel::Connection>::Backend;

/// How long a sweeper holds the due requests it took; another instance
/// takes them after that if they are still open (its sweeper died).
const SWEEP_LEASE_SECONDS: i64 = 10;

/// Spelled exactly as in the `requests_due` partial index's WHERE clause:
/// a planner uses a partial index only when the query's condition matches
/// it literally, which bound parameters would not.
pub(super) const OPEN_CONDITION: &str = "status IN ('pending', 'claimed')";
/// The same, for queries that join other tables with a `status` column.
const OPEN_CONDITION_QUALIFIED: &str = "requests.status IN ('pending', 'claimed')";

/// One request with its broadcast entries.
fn one_request(conn: &mut Conn, id: &str) -> Result<Option<ReviewRequest>, DbError> {
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
fn write_if_unchanged(
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
            ),
        )
        .execute(c)?);
    }
    changes::request_changed(conn, &row.id)?;
    outbox::append(conn, events)?;
    // A change without an event (a release, an edit, feedback) is logged
    // all the same; one with events is logged by the outbox.
    if let (true, Some(entry)) = (events.is_empty(), silent_change) {
        super::audit::append(conn, entry)?;
    }
    Ok(true)
}

/// The audit entry of a change to `request` that emits no event; none for
/// test data, which stays out of the log of real decisions.
fn silent_change_of(request: &ReviewRequest) -> Option<NewEntries> {
    (!request.test).then(|| NewEntries::of(&[AuditRecord::of_request_change(request)]))
}

/// A request's row, and the broadcast entries that hold quorum answers.
fn rows_of(request: &ReviewRequest) -> (RequestRow, Vec<BroadcastRow>) {
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
pub(super) fn with_broadcasts(
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
fn open_requests(
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

fn filtered(query: &RequestQuery) -> requests::BoxedQuery<'static, Backend> {
    let mut boxed = requests::table
        .into_boxed()
        .filter(requests::creator_id.eq(query.creator.to_string()))
        .filter(requests::test.eq(query.test));
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
fn inbox_query(
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
fn answered_query(
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
        .filter(loop_members::status.eq("active"))
        .order((requests::response_at.desc(), requests::id.desc()))
        .limit(i64::from(limit))
        .offset(i64::from(offset))
        .select(requests::all_columns)
        .distinct()
}

/// Open requests past their timeout, soonest first, through `requests_due`.
fn due_query(
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
        // The id breaks ties, so two sweepers lease rows in one order and
        // cannot deadlock on PostgreSQL.
        .order((requests::timeout_at.asc(), requests::id.asc()))
        .limit(i64::from(limit))
}

/// Pending requests whose escalation is due, soonest first, through
/// `requests_to_escalate`.
fn escalation_query(
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
        let changes: Vec<(
            (RequestRow, Vec<BroadcastRow>),
            NewEvents,
            Option<NewEntries>,
        )> = changes
            .iter()
            .map(|(request, events)| {
                (
                    rows_of(request),
                    NewEvents::of(events),
                    silent_change_of(request),
                )
            })
            .collect();
        self.db
            .write(move |conn| {
                changes
                    .iter()
                    .map(|(row, events, record)| write_if_unchanged(conn, row, events, record))
                    .collect()
            })
            .await
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
        let changes: Vec<_> = changes
            .iter()
            .map(|(request, events)| {
                let added: Vec<BroadcastRow> = BroadcastRow::from_domain(request)
                    .into_iter()
                    .filter(|b| b.role == ESCALATION_ROLE)
                    .collect();
                (
                    rows_of(request),
                    added,
                    NewEvents::of(events),
                    silent_change_of(request),
                )
            })
            .collect();
        self.db
            .write(move |conn| {
                let mut landed = Vec::with_capacity(changes.len());
                for (row, added, events, record) in &changes {
                    // The version check lets one escalation of a request
                    // land, so its new entries are inserted once.
                    let written = write_if_unchanged(conn, row, events, record)?;
                    if written {
                        for entry in added {
                            diesel::insert_into(request_broadcasts::table)
                                .values(entry)
                                .execute(conn)?;
                        }
                    }
                    landed.push(written);
                }
                Ok(landed)
            })
            .await
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
                    ))
                    .load(conn)?;
                rows.into_iter()
                    .map(|(lp, status, by, seconds, created)| {
                        Ok(RequestFacts {
                            loop_id: parse("loop id", &lp)?,
                            status: RequestStatus::parse(&status)
                                .map_err(|_| corrupt("request status", &status))?,
                            response_by: parse_opt("user id", by.as_deref())?,
                            response_time_seconds: seconds,
                            created_at: from_db_time(created),
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

#[derive(diesel::QueryableByName)]
struct Leased {
    #[diesel(sql_type = diesel::sql_types::Text)]
    request_id: String,
}

/// Leases the sweeps of `ids` (in that order, so two sweepers lock rows in
/// one order) until `until`, where no lease is held or it ran out before
/// `now`; returns the ids leased. One statement for them all: a lease lost
/// to another instance is a row not returned, never an error that would
/// abort the transaction.
fn lease_all(
    conn: &mut Conn,
    ids: &[String],
    now: chrono::NaiveDateTime,
    until: chrono::NaiveDateTime,
) -> Result<Vec<String>, DbError> {
    use diesel::sql_types::{Array, Text, Timestamp};
    match conn {
        // One instance serves an SQLite file: nobody to share them with.
        super::DbConnection::Sqlite(_) => Ok(ids.to_vec()),
        super::DbConnection::Postgres(pg) => Ok(diesel::sql_query(
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

#[cfg(test)]
mod tests;
