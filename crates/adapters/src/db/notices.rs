//! The notice queue: emails and Slack messages waiting to be sent.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use reviewloop_domain::{
    Channel, LoopId, Message, Notice, NoticeKind, NoticeRecord, NoticeStatus, RequestId,
    ReviewRequest,
};
use reviewloop_ports::{LeasedNotice, NoticeQueue, StoreError};

use super::convert::{corrupt, from_db_time, parse, parse_opt, to_db_time};
use super::models::RequestRow;
use super::requests::{with_broadcasts, OPEN_CONDITION};
use super::schema::{notices, request_broadcasts, requests};
use super::{Conn, DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = notices)]
struct NoticeRow {
    id: String,
    kind: String,
    channel: String,
    account_id: String,
    loop_id: Option<String>,
    request_id: Option<String>,
    recipient_id: Option<String>,
    recipient_email: Option<String>,
    subject: String,
    body_text: String,
    body_html: Option<String>,
    status: String,
    attempts: i32,
    next_attempt_at: NaiveDateTime,
    leased_until: Option<NaiveDateTime>,
    last_error: Option<String>,
    created_at: NaiveDateTime,
    sent_at: Option<NaiveDateTime>,
}

impl NoticeRow {
    fn from_domain(n: &Notice) -> Self {
        Self {
            id: n.id.to_string(),
            kind: n.kind.as_str().to_owned(),
            channel: n.channel.as_str().to_owned(),
            account_id: n.account_id.to_string(),
            loop_id: n.loop_id.map(|id| id.to_string()),
            request_id: n.request_id.map(|id| id.to_string()),
            recipient_id: n.recipient_id.map(|id| id.to_string()),
            recipient_email: n.to.clone(),
            subject: n.message.subject.clone(),
            body_text: n.message.text.clone(),
            body_html: n.message.html.clone(),
            status: n.status.as_str().to_owned(),
            attempts: i32::try_from(n.attempts).unwrap_or(i32::MAX),
            next_attempt_at: to_db_time(n.next_attempt_at),
            leased_until: None,
            last_error: n.last_error.clone(),
            created_at: to_db_time(n.created_at),
            sent_at: n.sent_at.map(to_db_time),
        }
    }

    fn into_domain(self) -> Result<Notice, DbError> {
        Ok(Notice::restore(NoticeRecord {
            id: parse("notice id", &self.id)?,
            kind: NoticeKind::parse(&self.kind).map_err(|_| corrupt("notice kind", &self.kind))?,
            channel: Channel::parse(&self.channel)
                .map_err(|_| corrupt("notice channel", &self.channel))?,
            account_id: parse("user id", &self.account_id)?,
            loop_id: parse_opt("loop id", self.loop_id.as_deref())?,
            request_id: parse_opt("request id", self.request_id.as_deref())?,
            recipient_id: parse_opt("user id", self.recipient_id.as_deref())?,
            to: self.recipient_email,
            message: Message {
                subject: self.subject,
                text: self.body_text,
                html: self.body_html,
            },
            status: NoticeStatus::parse(&self.status)
                .map_err(|_| corrupt("notice status", &self.status))?,
            attempts: u32::try_from(self.attempts).unwrap_or_default(),
            next_attempt_at: from_db_time(self.next_attempt_at),
            last_error: self.last_error,
            created_at: from_db_time(self.created_at),
            sent_at: self.sent_at.map(from_db_time),
        }))
    }
}

/// Writes `list`; call it inside the transaction of the change that causes
/// them.
pub(crate) fn append(conn: &mut Conn, list: &[Notice]) -> Result<(), DbError> {
    // One row at a time: the multi-backend connection has no batch insert.
    for notice in list {
        diesel::insert_into(notices::table)
            .values(NoticeRow::from_domain(notice))
            .execute(conn)?;
    }
    Ok(())
}

#[async_trait]
impl NoticeQueue for SqlStore {
    async fn requests_to_remind(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ReviewRequest>, StoreError> {
        let now = to_db_time(now);
        self.db
            .run(move |conn| {
                // Through `requests_to_remind`: its condition is repeated here.
                let rows = requests::table
                    .filter(requests::reminded_at.is_null())
                    .filter(sql::<Bool>(OPEN_CONDITION))
                    .filter(requests::remind_at.le(now))
                    .filter(requests::timeout_at.gt(now))
                    .order((requests::remind_at.asc(), requests::id.asc()))
                    .limit(i64::from(limit))
                    .select(RequestRow::as_select())
                    .load(conn)?;
                with_broadcasts(conn, rows)
            })
            .await
    }

    async fn record_reminder(
        &self,
        request: &RequestId,
        at: DateTime<Utc>,
        list: &[Notice],
    ) -> Result<bool, StoreError> {
        let (id, at) = (request.to_string(), to_db_time(at));
        let list = list.to_vec();
        self.db
            .write(move |conn| {
                // Still open: a request answered since it was read needs
                // no reminder.
                let marked = diesel::update(
                    requests::table
                        .find(&id)
                        .filter(requests::reminded_at.is_null())
                        .filter(sql::<Bool>(OPEN_CONDITION)),
                )
                .set(requests::reminded_at.eq(at))
                .execute(conn)?;
                if marked == 0 {
                    return Ok(false);
                }
                super::changes::request_touched(conn, &id);
                append(conn, &list)?;
                Ok(true)
            })
            .await
    }

    async fn enqueue(&self, list: &[Notice]) -> Result<(), StoreError> {
        let list = list.to_vec();
        self.db.write(move |conn| append(conn, &list)).await
    }

    async fn lease_due_notices(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<LeasedNotice>, StoreError> {
        let (now, until) = (to_db_time(now), to_db_time(lease_until));
        self.db
            .write(move |conn| {
                // Pending, due, and never leased or its lease run out.
                let leasable = || {
                    notices::status
                        .eq(NoticeStatus::Pending.as_str())
                        .and(notices::next_attempt_at.le(now))
                        .and(
                            notices::leased_until
                                .is_null()
                                .or(notices::leased_until.lt(now)),
                        )
                };
                let due: Vec<NoticeRow> = notices::table
                    .filter(leasable())
                    .order((notices::next_attempt_at.asc(), notices::id.asc()))
                    .limit(i64::from(limit))
                    .select(NoticeRow::as_select())
                    .load(conn)?;
                let mut leased = Vec::with_capacity(due.len());
                for row in due {
                    // Another instance may have taken it since the read, or
                    // taken it, tried it and freed it again: the update then
                    // changes nothing and it is left as they recorded it.
                    let mine = diesel::update(
                        notices::table
                            .find(&row.id)
                            .filter(leasable())
                            .filter(notices::attempts.eq(row.attempts)),
                    )
                    .set(notices::leased_until.eq(until))
                    .execute(conn)?;
                    if mine == 1 {
                        leased.push(LeasedNotice {
                            notice: row.into_domain()?,
                            leased_until: from_db_time(until),
                        });
                    }
                }
                Ok(leased)
            })
            .await
    }

    async fn record_notice(
        &self,
        notice: &Notice,
        leased_until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let row = NoticeRow::from_domain(notice);
        let lease = to_db_time(leased_until);
        let entry = match (
            notice.kind,
            notice.channel,
            notice.request_id,
            notice.recipient_id,
        ) {
            (NoticeKind::NewRequest, Channel::Email, Some(request), Some(user)) => {
                Some((request.to_string(), user.to_string(), notice.outcome()))
            }
            _ => None,
        };
        self.db
            .write(move |conn| {
                let mine = notices::table
                    .find(&row.id)
                    .filter(notices::leased_until.eq(lease));
                let changed = diesel::update(mine)
                    .set((
                        notices::status.eq(&row.status),
                        notices::attempts.eq(row.attempts),
                        notices::next_attempt_at.eq(row.next_attempt_at),
                        notices::leased_until.eq(None::<NaiveDateTime>),
                        notices::last_error.eq(&row.last_error),
                        notices::sent_at.eq(row.sent_at),
                        notices::body_text.eq(&row.body_text),
                        notices::body_html.eq(&row.body_html),
                    ))
                    .execute(conn)?;
                if changed == 0 {
                    return Err(StoreError::Conflict(
                        "the lease ran out before the attempt was recorded".into(),
                    )
                    .into());
                }
                if let Some((request, user, (sent, error))) = entry {
                    super::changes::request_touched(conn, &request);
                    diesel::update(request_broadcasts::table.find((request, user)))
                        .set((
                            request_broadcasts::notification_sent.eq(sent),
                            request_broadcasts::notification_error.eq(error),
                        ))
                        .execute(conn)?;
                }
                Ok(())
            })
            .await
    }

    async fn notices_of_loop(&self, id: &LoopId, limit: u32) -> Result<Vec<Notice>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                notices::table
                    .filter(notices::loop_id.eq(id))
                    .order((notices::created_at.desc(), notices::id.desc()))
                    .limit(i64::from(limit))
                    .select(NoticeRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(NoticeRow::into_domain)
                    .collect()
            })
            .await
    }
}

#[cfg(test)]
mod tests;
