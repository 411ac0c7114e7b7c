//! The webhook store and the delivery queue.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use reviewloop_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryRecord, DeliveryStatus, DeliveryTarget, Event,
    EventFilter, EventType, Notice, UserId, Webhook, WebhookId, WebhookRecord,
};
use reviewloop_ports::{
    DeliveryQueue, Dispatch, EventFeed, LeasedDelivery, StoreError, WebhookHealth, WebhookStore,
};

use super::convert::{corrupt, from_db_time, from_json_text, parse, parse_opt, to_db_time};
use super::fixed::update;
use super::schema::{deliveries, delivery_attempts, outbox_events, webhooks};
use super::{native, DbConnection, DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = webhooks)]
struct WebhookRow {
    id: String,
    account_id: String,
    url: String,
    events: String,
    secret: String,
    description: Option<String>,
    active: bool,
    disabled_reason: Option<String>,
    failing_since: Option<NaiveDateTime>,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
    test: bool,
}

impl WebhookRow {
    fn from_domain(w: &Webhook) -> Self {
        Self {
            id: w.id.to_string(),
            account_id: w.account_id.to_string(),
            url: w.url.clone(),
            events: w.events.names().join(","),
            secret: w.secret.clone(),
            description: w.description.clone(),
            active: w.active,
            disabled_reason: w.disabled_reason.clone(),
            failing_since: None,
            created_at: to_db_time(w.created_at),
            updated_at: to_db_time(w.updated_at),
            test: w.test,
        }
    }

    fn into_domain(self) -> Result<Webhook, DbError> {
        let names: Vec<String> = self.events.split(',').map(str::to_owned).collect();
        Ok(Webhook::restore(WebhookRecord {
            id: parse("webhook id", &self.id)?,
            account_id: parse("user id", &self.account_id)?,
            url: self.url,
            events: EventFilter::parse(&names)
                .map_err(|_| corrupt("webhook events", &self.events))?,
            secret: self.secret,
            description: self.description,
            active: self.active,
            disabled_reason: self.disabled_reason,
            created_at: from_db_time(self.created_at),
            updated_at: from_db_time(self.updated_at),
            test: self.test,
        }))
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = deliveries)]
struct DeliveryRow {
    id: String,
    event_id: String,
    event_type: String,
    account_id: String,
    target: String,
    webhook_id: Option<String>,
    url: String,
    payload: String,
    status: String,
    attempts: i32,
    schedule_start: i32,
    next_attempt_at: NaiveDateTime,
    leased_until: Option<NaiveDateTime>,
    last_attempt_at: Option<NaiveDateTime>,
    last_status_code: Option<i32>,
    last_error: Option<String>,
    created_at: NaiveDateTime,
}

impl DeliveryRow {
    fn from_domain(d: &Delivery, payload: String) -> Self {
        Self {
            id: d.id.to_string(),
            event_id: d.event_id.to_string(),
            event_type: d.event_type.as_str().to_owned(),
            account_id: d.account_id.to_string(),
            target: d.target.as_str().to_owned(),
            webhook_id: d.webhook_id.map(|w| w.to_string()),
            url: d.url.clone(),
            payload,
            status: d.status.as_str().to_owned(),
            attempts: i32::try_from(d.attempts).unwrap_or(i32::MAX),
            schedule_start: i32::try_from(d.schedule_start).unwrap_or(i32::MAX),
            next_attempt_at: to_db_time(d.next_attempt_at),
            leased_until: None,
            last_attempt_at: d.last_attempt_at.map(to_db_time),
            last_status_code: d.last_status_code.map(i32::from),
            last_error: d.last_error.clone(),
            created_at: to_db_time(d.created_at),
        }
    }

    fn into_domain(self) -> Result<(Delivery, String), DbError> {
        let delivery = Delivery::restore(DeliveryRecord {
            id: parse("delivery id", &self.id)?,
            event_id: parse("event id", &self.event_id)?,
            event_type: EventType::parse(&self.event_type)
                .ok_or_else(|| corrupt("event type", &self.event_type))?,
            account_id: parse("user id", &self.account_id)?,
            target: DeliveryTarget::parse(&self.target)
                .ok_or_else(|| corrupt("delivery target", &self.target))?,
            webhook_id: parse_opt("webhook id", self.webhook_id.as_deref())?,
            url: self.url,
            status: DeliveryStatus::parse(&self.status)
                .ok_or_else(|| corrupt("delivery status", &self.status))?,
            attempts: u32::try_from(self.attempts).unwrap_or_default(),
            schedule_start: u32::try_from(self.schedule_start).unwrap_or_default(),
            next_attempt_at: from_db_time(self.next_attempt_at),
            last_attempt_at: self.last_attempt_at.map(from_db_time),
            last_status_code: self.last_status_code.and_then(|c| u16::try_from(c).ok()),
            last_error: self.last_error,
            created_at: from_db_time(self.created_at),
        });
        Ok((delivery, self.payload))
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = delivery_attempts)]
struct AttemptRow {
    delivery_id: String,
    attempt: i32,
    attempted_at: NaiveDateTime,
    status_code: Option<i32>,
    latency_ms: i64,
    error: Option<String>,
    success: bool,
}

impl AttemptRow {
    fn from_domain(a: &DeliveryAttempt) -> Self {
        Self {
            delivery_id: a.delivery_id.to_string(),
            attempt: i32::try_from(a.attempt).unwrap_or(i32::MAX),
            attempted_at: to_db_time(a.attempted_at),
            status_code: a.status_code.map(i32::from),
            latency_ms: i64::try_from(a.latency_ms).unwrap_or(i64::MAX),
            error: a.error.clone(),
            success: a.success,
        }
    }

    fn into_domain(self) -> Result<DeliveryAttempt, DbError> {
        Ok(DeliveryAttempt {
            delivery_id: parse("delivery id", &self.delivery_id)?,
            attempt: u32::try_from(self.attempt).unwrap_or_default(),
            attempted_at: from_db_time(self.attempted_at),
            status_code: self.status_code.and_then(|c| u16::try_from(c).ok()),
            latency_ms: u64::try_from(self.latency_ms).unwrap_or_default(),
            error: self.error,
            success: self.success,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = outbox_events)]
struct EventRow {
    id: String,
    event_type: String,
    account_id: String,
    request_id: Option<String>,
    loop_id: Option<String>,
    payload: String,
    created_at: NaiveDateTime,
    test: bool,
}

impl EventRow {
    fn into_domain(self) -> Result<Event, DbError> {
        Ok(Event {
            id: parse("event id", &self.id)?,
            event_type: EventType::parse(&self.event_type)
                .ok_or_else(|| corrupt("event type", &self.event_type))?,
            account_id: parse("user id", &self.account_id)?,
            request_id: parse_opt("request id", self.request_id.as_deref())?,
            loop_id: parse_opt("loop id", self.loop_id.as_deref())?,
            data: from_json_text("event payload", &self.payload)?,
            created_at: from_db_time(self.created_at),
            test: self.test,
        })
    }
}

#[async_trait]
impl WebhookStore for SqlStore {
    async fn insert_webhook(&self, webhook: &Webhook) -> Result<(), StoreError> {
        let row = WebhookRow::from_domain(webhook);
        self.db
            .write(move |conn| {
                diesel::insert_into(webhooks::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn webhook_by_id(&self, id: &WebhookId) -> Result<Option<Webhook>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                webhooks::table
                    .find(id)
                    .select(WebhookRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(WebhookRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn webhooks_of(&self, account: &UserId) -> Result<Vec<Webhook>, StoreError> {
        let account = account.to_string();
        self.db
            .run(move |conn| {
                webhooks::table
                    .filter(webhooks::account_id.eq(account))
                    .order((webhooks::created_at.desc(), webhooks::id.desc()))
                    .select(WebhookRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(WebhookRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn update_webhook(&self, webhook: &Webhook) -> Result<(), StoreError> {
        let row = WebhookRow::from_domain(webhook);
        self.db
            .write(move |conn| {
                // Turned back on: its failing streak starts afresh. Any
                // other edit leaves the streak as it is.
                if row.active {
                    diesel::update(
                        webhooks::table
                            .find(&row.id)
                            .filter(webhooks::active.eq(false)),
                    )
                    .set(webhooks::failing_since.eq(None::<NaiveDateTime>))
                    .execute(conn)?;
                }
                let changed = diesel::update(webhooks::table.find(&row.id))
                    .set((
                        webhooks::url.eq(&row.url),
                        webhooks::events.eq(&row.events),
                        webhooks::secret.eq(&row.secret),
                        webhooks::description.eq(&row.description),
                        webhooks::active.eq(row.active),
                        webhooks::disabled_reason.eq(&row.disabled_reason),
                        webhooks::updated_at.eq(row.updated_at),
                    ))
                    .execute(conn)?;
                if changed == 0 {
                    return Err(StoreError::NotFound.into());
                }
                Ok(())
            })
            .await
    }

    async fn delete_webhook(&self, id: &WebhookId) -> Result<(), StoreError> {
        let id = id.to_string();
        self.db
            .write(move |conn| {
                if diesel::delete(webhooks::table.find(id)).execute(conn)? == 0 {
                    return Err(StoreError::NotFound.into());
                }
                Ok(())
            })
            .await
    }

    async fn deliveries_of(
        &self,
        webhook: &WebhookId,
        limit: u32,
    ) -> Result<Vec<(Delivery, Vec<DeliveryAttempt>)>, StoreError> {
        let webhook = webhook.to_string();
        self.db
            .run(move |conn| {
                let rows = deliveries::table
                    .filter(deliveries::webhook_id.eq(webhook))
                    .order((deliveries::created_at.desc(), deliveries::id.desc()))
                    .limit(i64::from(limit))
                    .select(DeliveryRow::as_select())
                    .load(conn)?;
                let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
                let mut attempts: HashMap<String, Vec<DeliveryAttempt>> = HashMap::new();
                let attempt_rows = delivery_attempts::table
                    .filter(delivery_attempts::delivery_id.eq_any(&ids))
                    .order((
                        delivery_attempts::delivery_id.asc(),
                        delivery_attempts::attempt.asc(),
                    ))
                    .select(AttemptRow::as_select())
                    .load(conn)?;
                for row in attempt_rows {
                    attempts
                        .entry(row.delivery_id.clone())
                        .or_default()
                        .push(row.into_domain()?);
                }
                rows.into_iter()
                    .map(|row| {
                        let list = attempts.remove(&row.id).unwrap_or_default();
                        Ok((row.into_domain()?.0, list))
                    })
                    .collect()
            })
            .await
    }

    async fn delivery_by_id(&self, id: &DeliveryId) -> Result<Option<Delivery>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                let row = deliveries::table
                    .find(id)
                    .select(DeliveryRow::as_select())
                    .first(conn)
                    .optional()?;
                Ok(row
                    .map(DeliveryRow::into_domain)
                    .transpose()?
                    .map(|(d, _)| d))
            })
            .await
    }

    async fn redeliver(&self, delivery: &Delivery) -> Result<(), StoreError> {
        let id = delivery.id.to_string();
        let attempts = i32::try_from(delivery.attempts).unwrap_or(i32::MAX);
        let state = (
            deliveries::status.eq(delivery.status.as_str()),
            deliveries::schedule_start
                .eq(i32::try_from(delivery.schedule_start).unwrap_or(i32::MAX)),
            deliveries::next_attempt_at.eq(to_db_time(delivery.next_attempt_at)),
            deliveries::leased_until.eq(None::<NaiveDateTime>),
        );
        self.db
            .write(move |conn| {
                // Ended, and not attempted since it was read: two
                // redeliveries at once, with an attempt in between, would
                // otherwise restart the schedule a second time.
                let ended = deliveries::table
                    .find(&id)
                    .filter(deliveries::status.ne(DeliveryStatus::Pending.as_str()))
                    .filter(deliveries::attempts.eq(attempts));
                if diesel::update(ended).set(state).execute(conn)? == 1 {
                    return Ok(());
                }
                let exists = diesel::select(diesel::dsl::exists(deliveries::table.find(&id)))
                    .get_result::<bool>(conn)?;
                Err(if exists {
                    StoreError::Conflict("the delivery is being attempted".into())
                } else {
                    StoreError::NotFound
                }
                .into())
            })
            .await
    }
}

#[derive(QueryableByName)]
struct Turn {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
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
        let events: Vec<(String, Vec<DeliveryRow>, Vec<Notice>)> = events
            .iter()
            .map(|d| {
                let rows = d
                    .deliveries
                    .iter()
                    .map(|(d, body)| DeliveryRow::from_domain(d, body.clone()))
                    .collect();
                (d.event.to_string(), rows, d.notices.clone())
            })
            .collect();
        self.db
            .write(move |conn| {
                let mut dispatched = 0;
                for (event, rows, notices) in &events {
                    // Only the dispatcher that marks it writes its
                    // deliveries; a lost race changes no row and raises no
                    // error, so it cannot spoil the rest of the batch.
                    let claimed = native!(conn, |c| update(
                        outbox_events::table,
                        outbox_events::id
                            .eq(event)
                            .and(outbox_events::dispatched_at.is_null()),
                        outbox_events::dispatched_at.eq(to_db_time(now)),
                    )
                    .execute(c)?);
                    if claimed == 0 {
                        continue;
                    }
                    // One row at a time: the multi-backend connection has no batch insert.
                    for row in rows {
                        diesel::insert_into(deliveries::table)
                            .values(row)
                            .execute(conn)?;
                    }
                    super::notices::append(conn, notices)?;
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
        per_target: u32,
        in_flight: &HashMap<String, u32>,
    ) -> Result<Vec<LeasedDelivery>, StoreError> {
        let (now_db, until) = (to_db_time(now), to_db_time(lease_until));
        let mut in_flight = in_flight.clone();
        self.db
            .write(move |conn| {
                let turns = fair_turns(
                    conn,
                    now_db,
                    i64::from(per_target),
                    i64::from(limit.saturating_mul(8).min(1000)),
                )?;
                let mut rows: HashMap<String, DeliveryRow> = deliveries::table
                    .filter(deliveries::id.eq_any(&turns))
                    .select(DeliveryRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(|row| (row.id.clone(), row))
                    .collect();
                let candidates = turns.iter().filter_map(|id| rows.remove(id));
                let mut leased = Vec::new();
                for row in candidates {
                    if leased.len() >= limit as usize {
                        break;
                    }
                    let count = in_flight.entry(row.url.clone()).or_default();
                    if *count >= per_target {
                        continue;
                    }
                    // Taken only if it is still as it was read. Between
                    // the read and this update another instance may have
                    // leased it, attempted it and recorded the attempt,
                    // which frees the lease again: a free lease alone would
                    // let this instance send an answered delivery twice. Any
                    // recorded attempt moves `attempts`.
                    let taken = diesel::update(
                        deliveries::table
                            .find(&row.id)
                            .filter(deliveries::status.eq(DeliveryStatus::Pending.as_str()))
                            .filter(deliveries::attempts.eq(row.attempts))
                            .filter(deliveries::next_attempt_at.le(now_db))
                            .filter(
                                deliveries::leased_until
                                    .is_null()
                                    .or(deliveries::leased_until.lt(now_db)),
                            ),
                    )
                    .set(deliveries::leased_until.eq(until))
                    .execute(conn)?;
                    if taken == 1 {
                        *count += 1;
                        let (delivery, payload) = row.into_domain()?;
                        leased.push(LeasedDelivery {
                            delivery,
                            payload,
                            leased_until: lease_until,
                        });
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
                let done: Vec<String> = super::schema::notices::table
                    .filter(super::schema::notices::status.eq_any(["sent", "failed"]))
                    .filter(super::schema::notices::created_at.lt(before))
                    .select(super::schema::notices::id)
                    .limit(limit)
                    .load(conn)?;
                for chunk in done.chunks(100) {
                    deleted += diesel::delete(
                        super::schema::notices::table
                            .filter(super::schema::notices::id.eq_any(chunk)),
                    )
                    .execute(conn)?;
                }
                // Sweep leases long run out.
                deleted += diesel::delete(
                    super::schema::request_sweeps::table
                        .filter(super::schema::request_sweeps::leased_until.lt(before)),
                )
                .execute(conn)?;
                // The newest position stays, so numbering goes on from it.
                let newest: Option<i64> = outbox_events::table
                    .select(diesel::dsl::max(outbox_events::position))
                    .first(conn)?;
                let Some(newest) = newest else {
                    return Ok(deleted as u64);
                };
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
                    let webhook_id = health.webhook_id.to_string();
                    let webhook = || webhooks::table.find(webhook_id.clone());
                    if health.success {
                        diesel::update(webhook().filter(webhooks::failing_since.is_not_null()))
                            .set(webhooks::failing_since.eq(None::<NaiveDateTime>))
                            .execute(conn)?;
                    } else {
                        let at = to_db_time(health.at);
                        diesel::update(webhook().filter(webhooks::failing_since.is_null()))
                            .set(webhooks::failing_since.eq(at))
                            .execute(conn)?;
                        let since = to_db_time(health.disable_if_failing_since);
                        diesel::update(
                            webhook()
                                .filter(webhooks::active.eq(true))
                                .filter(webhooks::failing_since.le(since)),
                        )
                        .set((
                            webhooks::active.eq(false),
                            webhooks::disabled_reason.eq(health.disable_reason),
                            webhooks::updated_at.eq(at),
                        ))
                        .execute(conn)?;
                    }
                }
                // Only the worker that still holds the lease records: one
                // whose lease ran out was overtaken by another attempt (and
                // what it wrote above is rolled back with it).
                let mine = deliveries::table
                    .find(&id)
                    .filter(deliveries::leased_until.eq(lease));
                if diesel::update(mine).set(state).execute(conn)? == 0 {
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

/// Any number; it only has to be the same on every instance.
const NUMBERING_LOCK: i64 = 0x7265_7669_6577;

#[async_trait]
impl EventFeed for SqlStore {
    async fn events_after(
        &self,
        account: &UserId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Event)>, StoreError> {
        let account = account.to_string();
        self.db
            .run(move |conn| {
                outbox_events::table
                    .filter(outbox_events::account_id.eq(account))
                    .filter(outbox_events::position.gt(after))
                    .order(outbox_events::position.asc())
                    .limit(i64::from(limit))
                    .select((outbox_events::position, EventRow::as_select()))
                    .load::<(Option<i64>, EventRow)>(conn)?
                    .into_iter()
                    .map(|(position, row)| Ok((position.unwrap_or_default(), row.into_domain()?)))
                    .collect()
            })
            .await
    }

    async fn last_position(&self) -> Result<i64, StoreError> {
        self.db
            .run(|conn| {
                let last: Option<i64> = outbox_events::table
                    .select(diesel::dsl::max(outbox_events::position))
                    .first(conn)?;
                Ok(last.unwrap_or(0))
            })
            .await
    }

    async fn number_new_events(&self, limit: u32) -> Result<usize, StoreError> {
        let unnumbered = move || {
            outbox_events::table
                .filter(outbox_events::position.is_null())
                .order(outbox_events::seq.asc())
                .limit(i64::from(limit))
                .select(outbox_events::seq)
        };
        // A quiet look first, so an idle stream costs no write.
        let quiet = self
            .db
            .run(move |conn| Ok(unnumbered().first::<i64>(conn).optional()?.is_none()))
            .await?;
        if quiet {
            return Ok(0);
        }
        self.db
            .write(move |conn| {
                {
                    // One numbering transaction at a time across instances:
                    // each starts after the last one committed, so it sees
                    // every position given so far and goes on from there.
                    super::exclusive(conn, NUMBERING_LOCK)?;
                    let last: Option<i64> = outbox_events::table
                        .select(diesel::dsl::max(outbox_events::position))
                        .first(conn)?;
                    let seqs: Vec<i64> = unnumbered().load(conn)?;
                    let mut position = last.unwrap_or(0);
                    for seq in &seqs {
                        position += 1;
                        native!(conn, |c| update(
                            outbox_events::table,
                            outbox_events::seq.eq(seq),
                            outbox_events::position.eq(position),
                        )
                        .execute(c)?);
                    }
                    super::changes::events_numbered(conn)?;
                    Ok(seqs.len())
                }
            })
            .await
    }
}

#[cfg(test)]
mod tests;
