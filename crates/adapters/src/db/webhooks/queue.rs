//! The delivery queue: what is due, leased fairly across receivers, and
//! the record of each attempt.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use reviewloop_domain::{
    AnswerLink, Delivery, DeliveryAttempt, DeliveryStatus, Event, Notice, UserId, Webhook,
};
use reviewloop_ports::{
    DeliveryQueue, Dispatch, LeasedDelivery, StoreError, TargetShares, WebhookHealth,
};

use super::{AttemptRow, DeliveryRow, EventRow, WebhookRow};
use crate::db::convert::to_db_time;
use crate::db::fixed::update;
use crate::db::schema::{deliveries, delivery_attempts, outbox_events, webhooks};
use crate::db::{native, Conn, DbConnection, DbError, SqlStore};

#[derive(QueryableByName)]
struct Turn {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
}

/// Leases `chosen` until `until`, each only if it is still as it was
/// read: between the read and this update another instance may have
/// leased one, attempted it and recorded the attempt, which frees the
/// lease again, and a free lease alone would let this instance send an
/// answered delivery twice. Any recorded attempt moves `attempts`.
/// Returns, in order, whether each was taken.
fn take_leases(
    conn: &mut DbConnection,
    chosen: &[DeliveryRow],
    now: NaiveDateTime,
    until: NaiveDateTime,
) -> Result<Vec<bool>, DbError> {
    match conn {
        // One statement for the pass, where each is a round trip.
        DbConnection::Postgres(pg) => {
            let ids: Vec<(&str, i32)> =
                chosen.iter().map(|r| (r.id.as_str(), r.attempts)).collect();
            let taken = crate::db::set_based::lease_deliveries(pg, &ids, now, until)?;
            Ok(chosen.iter().map(|r| taken.contains(&r.id)).collect())
        }
        DbConnection::Sqlite(c) => {
            let mut taken = Vec::with_capacity(chosen.len());
            for row in chosen {
                let updated = update(
                    deliveries::table,
                    deliveries::id
                        .eq(&row.id)
                        .and(deliveries::status.eq(DeliveryStatus::Pending.as_str()))
                        .and(deliveries::attempts.eq(row.attempts))
                        .and(deliveries::next_attempt_at.le(now))
                        .and(
                            deliveries::leased_until
                                .is_null()
                                .or(deliveries::leased_until.lt(now)),
                        ),
                    deliveries::leased_until.eq(until),
                )
                .execute(c)?;
                taken.push(updated == 1);
            }
            Ok(taken)
        }
    }
}

/// Due, unleased deliveries in turns: every URL's oldest first, then every
/// URL's second oldest, and so on, at most `per_target` turns per URL. Taking
/// the oldest due deliveries instead would let one receiver's backlog fill
/// every candidate and starve the others behind it. The status is spelled
/// as in the partial indexes, so the planner uses them.
fn fair_turns(
    conn: &mut DbConnection,
    now: NaiveDateTime,
    per_target: i64,
    limit: i64,
) -> Result<Vec<String>, DbError> {
    use diesel::sql_types::{BigInt, Timestamp};
    let turns: Vec<Turn> = match conn {
        // SQLite ranks every due delivery: one writer, and the queue it
        // ranks is the one it keeps short.
        DbConnection::Sqlite(c) => diesel::sql_query(
            "SELECT id FROM ( \
               SELECT deliveries.id, deliveries.next_attempt_at, ROW_NUMBER() OVER ( \
                 PARTITION BY deliveries.url \
                 ORDER BY deliveries.next_attempt_at, deliveries.id) AS turn \
               FROM deliveries LEFT JOIN webhooks ON webhooks.id = deliveries.webhook_id \
               WHERE deliveries.status = 'pending' AND deliveries.next_attempt_at <= ?1 \
                 AND (deliveries.leased_until IS NULL OR deliveries.leased_until < ?1) \
                 AND (deliveries.webhook_id IS NULL OR webhooks.active) \
             ) AS due WHERE turn <= ?2 \
             ORDER BY turn, next_attempt_at, id LIMIT ?3",
        )
        .bind::<Timestamp, _>(now)
        .bind::<BigInt, _>(per_target)
        .bind::<BigInt, _>(limit)
        .load(c)?,
        // PostgreSQL reads little more than it hands out: the URLs with
        // pending deliveries, one index probe each (a skip scan), then each
        // URL's first `per_target` due ones through (url, next_attempt_at).
        // Ranking every due delivery, as SQLite does, sorted the whole
        // backlog on every lease pass, one pass per finished attempt: a
        // backlog of thousands drained at 70 a second. The inner order is
        // the index's alone, so the scan stops after `per_target` rows
        // whatever the planner thinks of the table (with an id tie-break
        // and stale statistics it read and sorted a whole URL's backlog).
        // A disabled subscription's due deliveries are still stepped over
        // at the front of their URL, as the ranking query read them too.
        DbConnection::Postgres(c) => diesel::sql_query(
            "WITH RECURSIVE urls(url) AS ( \
               (SELECT url FROM deliveries WHERE status = 'pending' ORDER BY url LIMIT 1) \
               UNION ALL \
               SELECT (SELECT d.url FROM deliveries d \
                       WHERE d.status = 'pending' AND d.url > urls.url ORDER BY d.url LIMIT 1) \
               FROM urls WHERE urls.url IS NOT NULL \
             ) \
             SELECT id FROM ( \
               SELECT due.id, due.next_attempt_at, ROW_NUMBER() OVER ( \
                 PARTITION BY urls.url ORDER BY due.next_attempt_at, due.id) AS turn \
               FROM urls CROSS JOIN LATERAL ( \
                 SELECT d.id, d.next_attempt_at \
                 FROM deliveries d LEFT JOIN webhooks w ON w.id = d.webhook_id \
                 WHERE d.url = urls.url AND d.status = 'pending' AND d.next_attempt_at <= $1 \
                   AND (d.leased_until IS NULL OR d.leased_until < $1) \
                   AND (d.webhook_id IS NULL OR w.active) \
                 ORDER BY d.next_attempt_at LIMIT $2) AS due \
             ) AS turns \
             ORDER BY turn, next_attempt_at, id LIMIT $3",
        )
        .bind::<Timestamp, _>(now)
        .bind::<BigInt, _>(per_target)
        .bind::<BigInt, _>(limit)
        .load(c)?,
    };
    Ok(turns.into_iter().map(|t| t.id).collect())
}

/// Writes what dispatching one event made: its deliveries, notices and
/// answer links. Only the dispatcher that marked the event writes them.
fn write_dispatch(
    conn: &mut Conn,
    rows: &[DeliveryRow],
    notices: &[Notice],
    links: &[AnswerLink],
) -> Result<(), DbError> {
    // One row at a time: the multi-backend connection has no batch insert.
    for row in rows {
        diesel::insert_into(deliveries::table)
            .values(row)
            .execute(conn)?;
    }
    crate::db::notices::append(conn, notices)?;
    crate::db::answer_links::append(conn, links)
}

#[async_trait]
impl DeliveryQueue for SqlStore {
    async fn undispatched_events(&self, limit: u32) -> Result<Vec<Event>, StoreError> {
        self.db
            .run(move |conn| {
                outbox_events::table
                    .filter(outbox_events::dispatched_at.is_null())
                    // In `seq` order, the order numbering locks them in too:
                    // two transactions that lock rows in different orders
                    // deadlock on PostgreSQL.
                    .order(outbox_events::seq.asc())
                    .limit(i64::from(limit))
                    .select(EventRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(EventRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn active_webhooks_of(&self, accounts: &[UserId]) -> Result<Vec<Webhook>, StoreError> {
        let accounts: Vec<String> = accounts.iter().map(ToString::to_string).collect();
        self.db
            .run(move |conn| {
                webhooks::table
                    .filter(webhooks::account_id.eq_any(&accounts))
                    .filter(webhooks::active.eq(true))
                    .select(WebhookRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(WebhookRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn dispatch_all(
        &self,
        events: &[Dispatch],
        now: DateTime<Utc>,
    ) -> Result<usize, StoreError> {
        let events: Vec<(String, Vec<DeliveryRow>, Vec<Notice>, Vec<AnswerLink>)> = events
            .iter()
            .map(|d| {
                let rows = d
                    .deliveries
                    .iter()
                    .map(|(d, body)| DeliveryRow::from_domain(d, body.clone()))
                    .collect();
                (
                    d.event.to_string(),
                    rows,
                    d.notices.clone(),
                    d.answer_links.clone(),
                )
            })
            .collect();
        self.db
            .write(move |conn| {
                // On PostgreSQL the pass's events are marked in one
                // statement, where each is a round trip.
                let mut marked = match conn {
                    DbConnection::Postgres(pg) => {
                        let ids: Vec<&str> = events.iter().map(|(id, ..)| id.as_str()).collect();
                        Some(crate::db::set_based::mark_dispatched(
                            pg,
                            &ids,
                            to_db_time(now),
                        )?)
                    }
                    DbConnection::Sqlite(_) => None,
                };
                let mut dispatched = 0;
                for (event, rows, notices, links) in &events {
                    // Only the dispatcher that marks it writes its
                    // deliveries; a lost race changes no row and raises no
                    // error, so it cannot spoil the rest of the batch.
                    let claimed = match &mut marked {
                        // Taken out, so an event listed twice is written once.
                        Some(marked) => marked.remove(event),
                        None => {
                            native!(conn, |c| update(
                                outbox_events::table,
                                outbox_events::id
                                    .eq(event)
                                    .and(outbox_events::dispatched_at.is_null()),
                                outbox_events::dispatched_at.eq(to_db_time(now)),
                            )
                            .execute(c)?)
                                > 0
                        }
                    };
                    if !claimed {
                        continue;
                    }
                    write_dispatch(conn, rows, notices, links)?;
                    dispatched += 1;
                }
                Ok(dispatched)
            })
            .await
    }

    async fn lease_due(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
        shares: &TargetShares,
    ) -> Result<Vec<LeasedDelivery>, StoreError> {
        let (now_db, until) = (to_db_time(now), to_db_time(lease_until));
        let shares = shares.clone();
        let mut in_flight = shares.in_flight.clone();
        self.db
            .write(move |conn| {
                let turns = fair_turns(
                    conn,
                    now_db,
                    i64::from(shares.most()),
                    i64::from(limit.saturating_mul(8).min(1000)),
                )?;
                let mut rows: HashMap<String, DeliveryRow> = deliveries::table
                    .filter(deliveries::id.eq_any(&turns))
                    .select(DeliveryRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(|row| (row.id.clone(), row))
                    .collect();
                let mut candidates: std::collections::VecDeque<DeliveryRow> =
                    turns.iter().filter_map(|id| rows.remove(id)).collect();
                let mut leased = Vec::new();
                // A row another instance took in the meantime is passed
                // over, and those behind it in the turns get another round.
                for _ in 0..3 {
                    // Each URL's share, counting what is in flight, then
                    // the rows' own turns up to `limit`.
                    let wanted = (limit as usize).saturating_sub(leased.len());
                    let mut chosen = Vec::new();
                    while chosen.len() < wanted {
                        let Some(row) = candidates.pop_front() else {
                            break;
                        };
                        let share = shares.share(&row.url);
                        let count = in_flight.entry(row.url.clone()).or_default();
                        if *count < share {
                            *count += 1;
                            chosen.push(row);
                        }
                    }
                    if chosen.is_empty() {
                        break;
                    }
                    let taken = take_leases(conn, &chosen, now_db, until)?;
                    let mut missed = false;
                    for (row, taken) in chosen.into_iter().zip(taken) {
                        if taken {
                            let (delivery, payload) = row.into_domain()?;
                            leased.push(LeasedDelivery {
                                delivery,
                                payload,
                                leased_until: lease_until,
                            });
                        } else {
                            missed = true;
                            if let Some(count) = in_flight.get_mut(&row.url) {
                                *count = count.saturating_sub(1);
                            }
                        }
                    }
                    if !missed {
                        break;
                    }
                }
                Ok(leased)
            })
            .await
    }

    async fn purge_history(&self, before: DateTime<Utc>, limit: u32) -> Result<u64, StoreError> {
        let before = to_db_time(before);
        let limit = i64::from(limit);
        self.db
            .write(move |conn| {
                // Attempts go with their delivery (ON DELETE CASCADE).
                let finished = deliveries::table
                    .filter(deliveries::status.eq_any(["succeeded", "failed"]))
                    .filter(deliveries::created_at.lt(before))
                    .select(deliveries::id)
                    .limit(limit);
                let finished: Vec<String> = finished.load(conn)?;
                let mut deleted = 0;
                for chunk in finished.chunks(100) {
                    deleted +=
                        diesel::delete(deliveries::table.filter(deliveries::id.eq_any(chunk)))
                            .execute(conn)?;
                }
                // Emails and Slack messages that went out or were given up.
                let done: Vec<String> = crate::db::schema::notices::table
                    .filter(crate::db::schema::notices::status.eq_any(["sent", "failed"]))
                    .filter(crate::db::schema::notices::created_at.lt(before))
                    .select(crate::db::schema::notices::id)
                    .limit(limit)
                    .load(conn)?;
                for chunk in done.chunks(100) {
                    deleted += diesel::delete(
                        crate::db::schema::notices::table
                            .filter(crate::db::schema::notices::id.eq_any(chunk)),
                    )
                    .execute(conn)?;
                }
                // Sweep leases long run out.
                deleted += diesel::delete(
                    crate::db::schema::request_sweeps::table
                        .filter(crate::db::schema::request_sweeps::leased_until.lt(before)),
                )
                .execute(conn)?;
                // The newest position stays, so numbering goes on from it.
                let newest: Option<i64> = outbox_events::table
                    .select(diesel::dsl::max(outbox_events::position))
                    .first(conn)?;
                let Some(newest) = newest else {
                    return Ok(deleted as u64);
                };
                if let DbConnection::Postgres(pg) = conn {
                    // Two instances purging at once deleted the same rows
                    // in whatever order each read them, and could deadlock.
                    // Rows are taken in `seq` order, the order every pass
                    // locks outbox rows in, and a held one is left for later.
                    deleted += crate::db::set_based::purge_events(pg, before, newest, limit)?;
                    return Ok(deleted as u64);
                }
                let old: Vec<i64> = outbox_events::table
                    .filter(outbox_events::created_at.lt(before))
                    .filter(outbox_events::dispatched_at.is_not_null())
                    .filter(outbox_events::position.lt(newest))
                    .select(outbox_events::seq)
                    .limit(limit)
                    .load(conn)?;
                for chunk in old.chunks(100) {
                    deleted += diesel::delete(
                        outbox_events::table.filter(outbox_events::seq.eq_any(chunk)),
                    )
                    .execute(conn)?;
                }
                Ok(deleted as u64)
            })
            .await
    }

    async fn record_attempt(
        &self,
        delivery: &Delivery,
        attempt: &DeliveryAttempt,
        health: Option<WebhookHealth>,
        leased_until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let id = delivery.id.to_string();
        let lease = to_db_time(leased_until);
        let state = (
            deliveries::status.eq(delivery.status.as_str().to_owned()),
            deliveries::attempts.eq(i32::try_from(delivery.attempts).unwrap_or(i32::MAX)),
            deliveries::next_attempt_at.eq(to_db_time(delivery.next_attempt_at)),
            deliveries::leased_until.eq(None::<NaiveDateTime>),
            deliveries::last_attempt_at.eq(delivery.last_attempt_at.map(to_db_time)),
            deliveries::last_status_code.eq(delivery.last_status_code.map(i32::from)),
            deliveries::last_error.eq(delivery.last_error.clone()),
        );
        let attempt = AttemptRow::from_domain(attempt);
        self.db
            .write(move |conn| {
                // The subscription's row before the delivery's: deleting a
                // subscription locks its row, then (by cascade) its
                // deliveries', and taking them in the other order here
                // deadlocked the two on PostgreSQL. Each update names the
                // change it makes, so a healthy subscription's row is not
                // written (nor locked) by every successful attempt.
                if let Some(health) = health {
                    let webhook = || webhooks::id.eq(health.webhook_id.to_string());
                    if health.success {
                        native!(conn, |c| update(
                            webhooks::table,
                            webhook().and(webhooks::failing_since.is_not_null()),
                            webhooks::failing_since.eq(None::<NaiveDateTime>),
                        )
                        .execute(c)?);
                    } else {
                        let at = to_db_time(health.at);
                        native!(conn, |c| update(
                            webhooks::table,
                            webhook().and(webhooks::failing_since.is_null()),
                            webhooks::failing_since.eq(at),
                        )
                        .execute(c)?);
                        let since = to_db_time(health.disable_if_failing_since);
                        native!(conn, |c| update(
                            webhooks::table,
                            webhook()
                                .and(webhooks::active.eq(true))
                                .and(webhooks::failing_since.le(since)),
                            (
                                webhooks::active.eq(false),
                                webhooks::disabled_reason.eq(&health.disable_reason),
                                webhooks::updated_at.eq(at),
                            ),
                        )
                        .execute(c)?);
                    }
                }
                // Only the worker that still holds the lease records: one
                // whose lease ran out was overtaken by another attempt (and
                // what it wrote above is rolled back with it).
                let mine = deliveries::id
                    .eq(&id)
                    .and(deliveries::leased_until.eq(lease));
                if native!(conn, |c| update(deliveries::table, mine, state)
                    .execute(c)?)
                    == 0
                {
                    return Err(StoreError::Conflict(
                        "the lease ran out before the attempt was recorded".into(),
                    )
                    .into());
                }
                diesel::insert_into(delivery_attempts::table)
                    .values(&attempt)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }
}
