//! The loop store: loops and their members.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use reviewloop_domain::{
    AuditRecord, Event, Icon, InviteCode, Loop, LoopDescription, LoopId, LoopName, LoopRecord,
    Member, MemberStatus, Notice, Rules, UserId, Window,
};
use reviewloop_ports::{LoopStore, StoreError};
use serde_json::json;

use super::audit::NewEntries;
use super::convert::{corrupt, from_db_time, parse, to_db_time};
use super::models::{LoopRow, MemberRow};
use super::outbox::NewEvents;
use super::requests::OPEN_CONDITION;
use super::schema::{loop_members, loop_turns, loops, requests};
use super::{native, outbox, Conn, DbConnection, DbError, SqlStore};

impl LoopRow {
    fn from_domain(lp: &Loop) -> Self {
        Self {
            id: lp.id.to_string(),
            name: lp.name.as_str().to_owned(),
            description: lp.description.as_ref().map(|d| d.as_str().to_owned()),
            icon: lp.icon.as_str().to_owned(),
            creator_id: lp.creator_id.to_string(),
            invite_code: lp.invite_code.as_str().to_owned(),
            created_at: to_db_time(lp.created_at),
            updated_at: to_db_time(lp.updated_at),
            slack_webhook_url: lp.slack_webhook_url.clone(),
            slack_app: lp.slack_app.as_ref().map(|app| {
                json!({
                    "bot_token": app.bot_token,
                    "signing_secret": app.signing_secret,
                    "channel": app.channel,
                })
                .to_string()
            }),
            reminders: lp.reminders,
            policy: (lp.quorum.is_some()
                || lp.escalation.is_some()
                || !lp.rules.is_empty()
                || lp.keys_questions()
                || lp.assignment.is_some())
            .then(|| {
                super::convert::to_json_text(&json!({
                    "quorum": lp.quorum.map(|q| q.to_value()),
                    "escalation": lp.escalation.map(|e| e.to_value()),
                    "rules": lp.rules.to_value(),
                    "coalesce": lp.coalesce.map(|w| w.to_value()),
                    "reuse_answers": lp.reuse_answers.map(|w| w.to_value()),
                    "assignment": lp.assignment.map(|a| a.to_value()),
                }))
            }),
        }
    }

    fn into_domain(self, members: Vec<Member>) -> Result<Loop, DbError> {
        let policy = super::convert::from_json_opt("loop policy", self.policy.as_deref())?
            .unwrap_or_default();
        let part = |key: &str| (!policy[key].is_null()).then(|| policy[key].to_string());
        Ok(Loop::restore(LoopRecord {
            id: parse("loop id", &self.id)?,
            name: LoopName::parse(&self.name).map_err(|_| corrupt("loop name", &self.name))?,
            description: match self.description {
                Some(d) => {
                    Some(LoopDescription::parse(&d).map_err(|_| corrupt("loop description", &d))?)
                }
                None => None,
            },
            icon: Icon::parse(&self.icon).map_err(|_| corrupt("icon", &self.icon))?,
            creator_id: parse("user id", &self.creator_id)?,
            invite_code: InviteCode::parse(&self.invite_code)
                .ok_or_else(|| corrupt("invite code", &self.invite_code))?,
            members,
            created_at: from_db_time(self.created_at),
            updated_at: from_db_time(self.updated_at),
            slack_webhook_url: self.slack_webhook_url,
            slack_app: match self.slack_app.as_deref() {
                Some(text) => Some(
                    serde_json::from_str(text)
                        .ok()
                        .and_then(|v| reviewloop_domain::SlackApp::parse(&v).ok())
                        .ok_or_else(|| corrupt("loop slack app", &self.id))?,
                ),
                None => None,
            },
            reminders: self.reminders,
            quorum: super::models::quorum_of("loop quorum", part("quorum").as_deref())?,
            escalation: super::models::escalation_of(
                "loop escalation",
                part("escalation").as_deref(),
            )?,
            rules: Rules::parse(Some(&policy["rules"]))
                .map_err(|_| corrupt("loop rules", &policy["rules"].to_string()))?,
            coalesce: Window::parse(Some(&policy["coalesce"]), "coalesce")
                .map_err(|_| corrupt("loop coalesce", &policy["coalesce"].to_string()))?,
            reuse_answers: Window::parse(Some(&policy["reuse_answers"]), "reuse_answers")
                .map_err(|_| corrupt("loop reuse_answers", &policy["reuse_answers"].to_string()))?,
            assignment: reviewloop_domain::Assignment::parse(Some(&policy["assignment"]))
                .map_err(|_| corrupt("loop assignment", &policy["assignment"].to_string()))?,
        }))
    }
}

/// Loads loops with their members that were not removed, creator first.
fn with_members(conn: &mut Conn, rows: Vec<LoopRow>) -> Result<Vec<Loop>, DbError> {
    let mut by_loop: HashMap<String, Vec<Member>> = HashMap::new();
    let member_rows: Vec<MemberRow> = match rows.as_slice() {
        [] => Vec::new(),
        // One loop (the common case): `=` keeps the statement the same
        // every time, so it is prepared once; `IN` with a varying number of
        // values is prepared again on every call.
        [row] => native!(conn, |c| loop_members::table
            .filter(loop_members::loop_id.eq(&row.id))
            .filter(loop_members::status.ne("removed"))
            .order((loop_members::invited_at.asc(), loop_members::user_id.asc()))
            .select(MemberRow::as_select())
            .load(c)?),
        _ => {
            let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            loop_members::table
                .filter(loop_members::loop_id.eq_any(&ids))
                .filter(loop_members::status.ne("removed"))
                .order((loop_members::invited_at.asc(), loop_members::user_id.asc()))
                .select(MemberRow::as_select())
                .load(conn)?
        }
    };
    for row in member_rows {
        by_loop
            .entry(row.loop_id.clone())
            .or_default()
            .push(row.into_domain()?);
    }
    rows.into_iter()
        .map(|row| {
            let members = by_loop.remove(&row.id).unwrap_or_default();
            row.into_domain(members)
        })
        .collect()
}

fn one_loop(conn: &mut Conn, row: Option<LoopRow>) -> Result<Option<Loop>, DbError> {
    Ok(with_members(conn, row.into_iter().collect())?.pop())
}

/// The creator of the loop `id`: whose audit log its changes go to.
fn creator_of(conn: &mut Conn, id: &str) -> Result<UserId, DbError> {
    let creator: String = loops::table
        .find(id)
        .select(loops::creator_id)
        .first(conn)
        .optional()?
        .ok_or(StoreError::NotFound)?;
    parse("user id", &creator)
}

impl SqlStore {
    /// Loop `id` with its members: its in-memory copy on SQLite, else read
    /// (and, on SQLite, kept).
    pub(super) async fn loop_copy(&self, id: &LoopId) -> Result<Option<Arc<Loop>>, StoreError> {
        let read = || {
            let id = id.to_string();
            self.db.run(move |conn| {
                // No `LIMIT`: the primary key yields one row at most.
                let rows: Vec<LoopRow> = native!(conn, |c| loops::table
                    .find(&id)
                    .select(LoopRow::as_select())
                    .load(c)?);
                one_loop(conn, rows.into_iter().next())
            })
        };
        let copies = self.db.cache.as_ref().map(|cache| &cache.loops);
        super::cache::copy_or_read(copies, *id, read).await
    }
}

#[async_trait]
impl LoopStore for SqlStore {
    async fn insert_loop(&self, lp: &Loop, events: &[Event]) -> Result<(), StoreError> {
        let row = LoopRow::from_domain(lp);
        let members: Vec<MemberRow> = lp.members.iter().map(MemberRow::from_domain).collect();
        let events = NewEvents::of(events);
        let record = NewEntries::of(&[AuditRecord::of_loop_change(
            lp.creator_id,
            lp.id,
            "loop.created",
            lp.created_at,
            json!({"name": lp.name.as_str()}),
        )]);
        self.db
            .write(move |conn| {
                diesel::insert_into(loops::table)
                    .values(&row)
                    .execute(conn)?;
                // One row at a time: the multi-backend connection has no batch insert.
                for row in &members {
                    diesel::insert_into(loop_members::table)
                        .values(row)
                        .execute(conn)?;
                }
                super::audit::append(conn, &record)?;
                super::changes::loop_changed(conn, &row.id);
                outbox::append(conn, &events)
            })
            .await
    }

    async fn loop_by_id(&self, id: &LoopId) -> Result<Option<Loop>, StoreError> {
        Ok(self.loop_copy(id).await?.map(Arc::unwrap_or_clone))
    }

    async fn loop_by_invite_code(&self, code: &InviteCode) -> Result<Option<Loop>, StoreError> {
        let code = code.as_str().to_owned();
        self.db
            .run(move |conn| {
                let row = loops::table
                    .filter(loops::invite_code.eq(code))
                    .select(LoopRow::as_select())
                    .first(conn)
                    .optional()?;
                one_loop(conn, row)
            })
            .await
    }

    async fn loops_created_by(&self, user: &UserId) -> Result<Vec<Loop>, StoreError> {
        let user = user.to_string();
        self.db
            .run(move |conn| {
                let rows = loops::table
                    .filter(loops::creator_id.eq(user))
                    .order((loops::created_at.desc(), loops::id.desc()))
                    .select(LoopRow::as_select())
                    .load(conn)?;
                with_members(conn, rows)
            })
            .await
    }

    async fn loops_joined_by(&self, user: &UserId) -> Result<Vec<Loop>, StoreError> {
        let user = user.to_string();
        self.db
            .run(move |conn| {
                let rows = loops::table
                    .inner_join(loop_members::table)
                    .filter(loop_members::user_id.eq(user))
                    .filter(loop_members::status.eq("active"))
                    .order((loops::name.asc(), loops::id.asc()))
                    .select(LoopRow::as_select())
                    .load(conn)?;
                with_members(conn, rows)
            })
            .await
    }

    async fn take_turns(&self, loop_id: &LoopId, count: u64) -> Result<u64, StoreError> {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        let mut first_try = true;
        loop {
            let id = loop_id.to_string();
            let moved = self
                .db
                .write(move |conn| {
                    // A turn is no record anyone relies on: a crash may lose
                    // the last moves (the next offers start a little back),
                    // so this commit does not wait for the disk, which on
                    // PostgreSQL would double a create's own wait.
                    if let DbConnection::Postgres(pg) = conn {
                        diesel::sql_query("SET LOCAL synchronous_commit = off").execute(pg)?;
                    }
                    // The update holds the row until the transaction ends, so
                    // the read after it sees this move and no other.
                    let changed = diesel::update(loop_turns::table.find(&id))
                        .set(loop_turns::turn.eq(loop_turns::turn + count))
                        .execute(conn)?;
                    if changed == 0 {
                        diesel::insert_into(loop_turns::table)
                            .values((loop_turns::loop_id.eq(&id), loop_turns::turn.eq(count)))
                            .execute(conn)?;
                    }
                    let turn: i64 = loop_turns::table
                        .find(&id)
                        .select(loop_turns::turn)
                        .first(conn)?;
                    Ok(turn - count)
                })
                .await;
            match moved {
                // Another instance made the loop's first turn at the same
                // moment: the row is there now.
                Err(StoreError::Conflict(_)) if first_try => first_try = false,
                other => return other.map(|turn| u64::try_from(turn).unwrap_or(0)),
            }
        }
    }

    async fn update_loop(&self, lp: &Loop) -> Result<(), StoreError> {
        let row = LoopRow::from_domain(lp);
        let record = NewEntries::of(&[AuditRecord::of_loop_change(
            lp.creator_id,
            lp.id,
            "loop.updated",
            lp.updated_at,
            json!({
                "name": lp.name.as_str(),
                "reminders": lp.reminders,
                "slack": lp.slack_webhook_url.is_some(),
                "slack_app": lp.slack_app.is_some(),
                "quorum": lp.quorum.map(|q| q.to_value()),
                "escalation": lp.escalation.map(|e| e.to_value()),
                "rules": lp.rules.to_value(),
                "coalesce": lp.coalesce.map(|w| w.to_value()),
                "reuse_answers": lp.reuse_answers.map(|w| w.to_value()),
                "assignment": lp.assignment.map(|a| a.to_value()),
            }),
        )]);
        self.db
            .write(move |conn| {
                let changed = diesel::update(loops::table.find(&row.id))
                    .set((
                        loops::name.eq(&row.name),
                        loops::description.eq(&row.description),
                        loops::icon.eq(&row.icon),
                        loops::created_at.eq(row.created_at),
                        loops::updated_at.eq(row.updated_at),
                        loops::slack_webhook_url.eq(&row.slack_webhook_url),
                        loops::slack_app.eq(&row.slack_app),
                        loops::reminders.eq(row.reminders),
                        loops::policy.eq(&row.policy),
                    ))
                    .execute(conn)?;
                if changed == 0 {
                    return Err(StoreError::NotFound.into());
                }
                super::changes::loop_changed(conn, &row.id);
                super::audit::append(conn, &record)
            })
            .await
    }

    async fn set_invite_code(
        &self,
        id: &LoopId,
        code: &InviteCode,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let (id, code) = (id.to_string(), code.as_str().to_owned());
        self.db
            .write(move |conn| {
                let changed = diesel::update(loops::table.find(&id))
                    .set((
                        loops::invite_code.eq(&code),
                        loops::updated_at.eq(to_db_time(at)),
                    ))
                    .execute(conn)?;
                if changed == 0 {
                    return Err(StoreError::NotFound.into());
                }
                super::changes::loop_changed(conn, &id);
                let creator = creator_of(conn, &id)?;
                super::audit::append(
                    conn,
                    &NewEntries::of(&[AuditRecord::of_loop_change(
                        creator,
                        parse("loop id", &id)?,
                        "loop.invite_code_changed",
                        at,
                        json!({}),
                    )]),
                )
            })
            .await
    }

    async fn delete_loop(
        &self,
        id: &LoopId,
        refuse_if_open: bool,
        events: &[Event],
    ) -> Result<(), StoreError> {
        let id = id.to_string();
        let events = NewEvents::of(events);
        self.db
            .write(move |conn| {
                if refuse_if_open {
                    // Test requests go with the loop; only live work keeps it.
                    let open: i64 = requests::table
                        .filter(requests::loop_id.eq(&id))
                        .filter(sql::<Bool>(OPEN_CONDITION))
                        .filter(requests::test.eq(false))
                        .count()
                        .get_result(conn)?;
                    if open > 0 {
                        return Err(StoreError::Conflict(format!("{open} open requests")).into());
                    }
                }
                // Members, requests and their broadcasts go with the loop
                // (ON DELETE CASCADE); the events stay in the outbox.
                let deleted = diesel::delete(loops::table.find(&id)).execute(conn)?;
                if deleted == 0 {
                    return Err(StoreError::NotFound.into());
                }
                // Its requests are gone: every instance's waiters look again.
                super::changes::everything_changed(conn)?;
                outbox::append(conn, &events)
            })
            .await
    }

    async fn member(&self, loop_id: &LoopId, user: &UserId) -> Result<Option<Member>, StoreError> {
        let (loop_id, user) = (loop_id.to_string(), user.to_string());
        self.db
            .run(move |conn| {
                loop_members::table
                    .find((loop_id, user))
                    .select(MemberRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(MemberRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn save_member(
        &self,
        member: &Member,
        previous: Option<MemberStatus>,
        events: &[Event],
        notices: &[Notice],
    ) -> Result<(), StoreError> {
        let row = MemberRow::from_domain(member);
        let events = NewEvents::of(events);
        let notices = notices.to_vec();
        let changed_at = member
            .removed_at
            .or(member.joined_at)
            .unwrap_or(member.invited_at);
        self.db
            .write(move |conn| {
                // Whose log the change goes to.
                let creator = creator_of(conn, &row.loop_id)?;
                match previous {
                    // A primary-key clash here means someone else created it first.
                    None => {
                        diesel::insert_into(loop_members::table)
                            .values(&row)
                            .execute(conn)?;
                    }
                    Some(status) => {
                        let key = (row.loop_id.clone(), row.user_id.clone());
                        let target = loop_members::table
                            .find(key)
                            .filter(loop_members::status.eq(status.as_str()));
                        if diesel::update(target).set(&row).execute(conn)? == 0 {
                            return Err(StoreError::Conflict(
                                "membership changed since it was read".into(),
                            )
                            .into());
                        }
                    }
                }
                super::changes::loop_changed(conn, &row.loop_id);
                if events.is_empty() {
                    super::audit::append(
                        conn,
                        &NewEntries::of(&[AuditRecord::of_loop_change(
                            creator,
                            parse("loop id", &row.loop_id)?,
                            "loop.member_changed",
                            changed_at,
                            json!({"member": row.user_id, "member_status": row.status}),
                        )]),
                    )?;
                }
                outbox::append(conn, &events)?;
                super::notices::append(conn, &notices)
            })
            .await
    }
}

#[cfg(test)]
mod tests;
