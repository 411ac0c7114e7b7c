//! The webhook store, and the rows of webhooks, deliveries, attempts and
//! events that it and the delivery queue ([`queue`]) and event feed
//! ([`feed`]) share.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use reviewloop_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryRecord, DeliveryStatus, DeliveryTarget, Event,
    EventFacts, EventFilter, EventType, UserId, Webhook, WebhookId, WebhookRecord,
};
use reviewloop_ports::{StoreError, WebhookStore};

use super::convert::{corrupt, from_db_time, from_json_text, parse, parse_opt, to_db_time};
use super::schema::{deliveries, delivery_attempts, outbox_events, webhooks};
use super::{DbError, SqlStore};

mod feed;
mod queue;

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
            // Its audit entry was written with it; delivery needs only the payload.
            facts: EventFacts::default(),
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

#[cfg(test)]
mod tests;
