//! The review store: reviews and their assignees.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use reviewloop_domain::{
    Email, Event, Priority, Review, ReviewId, ReviewRecord, ReviewStatus, Reviewer,
};
use reviewloop_ports::{ReviewPage, ReviewQuery, ReviewScope, ReviewStore, StoreError};
use serde_json::Value;

use super::convert::{
    corrupt, from_db_time, from_json_opt, from_json_text, parse, parse_opt, to_db_time,
    to_json_text,
};
use super::schema::{loop_members, review_assignees, reviews};
use super::{outbox, Conn, DbError, SqlStore};

type Backend = <Conn as diesel::Connection>::Backend;

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = reviews)]
struct ReviewRow {
    id: String,
    account_id: String,
    template_id: String,
    fields: String,
    content_text: Option<String>,
    metadata: String,
    team_id: Option<String>,
    priority: String,
    due_date: Option<NaiveDateTime>,
    callback_url: Option<String>,
    status: String,
    reviewer_id: Option<String>,
    reviewer_email: Option<String>,
    started_at: Option<NaiveDateTime>,
    result: Option<String>,
    completed_at: Option<NaiveDateTime>,
    cancelled_at: Option<NaiveDateTime>,
    created_at: NaiveDateTime,
    updated_at: NaiveDateTime,
    version: i64,
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = review_assignees)]
struct AssigneeRow {
    review_id: String,
    user_id: String,
    email: String,
    position: i32,
}

fn email(value: &str) -> Result<Email, DbError> {
    Email::parse(value).map_err(|_| corrupt("email", value))
}

impl ReviewRow {
    fn from_domain(review: &Review) -> Self {
        let r = review.record();
        Self {
            id: r.id.to_string(),
            account_id: r.account_id.to_string(),
            template_id: r.template_id.to_string(),
            fields: to_json_text(&r.fields),
            content_text: r.content_text.clone(),
            metadata: to_json_text(&Value::Object(r.metadata.clone())),
            team_id: r.team_id.map(|t| t.to_string()),
            priority: r.priority.as_str().to_owned(),
            due_date: r.due_date.map(to_db_time),
            callback_url: r.callback_url.clone(),
            status: r.status.as_str().to_owned(),
            reviewer_id: r.reviewer.as_ref().map(|p| p.user_id.to_string()),
            reviewer_email: r.reviewer.as_ref().map(|p| p.email.as_str().to_owned()),
            started_at: r.started_at.map(to_db_time),
            result: r.result.as_ref().map(to_json_text),
            completed_at: r.completed_at.map(to_db_time),
            cancelled_at: r.cancelled_at.map(to_db_time),
            created_at: to_db_time(r.created_at),
            updated_at: to_db_time(r.updated_at),
            version: r.version,
        }
    }

    fn into_domain(self, assignees: Vec<Reviewer>) -> Result<Review, DbError> {
        let metadata = match from_json_text("review metadata", &self.metadata)? {
            Value::Object(map) => map,
            _ => return Err(corrupt("review metadata", &self.metadata)),
        };
        let reviewer = match (self.reviewer_id.as_deref(), self.reviewer_email.as_deref()) {
            (Some(id), Some(address)) => Some(Reviewer {
                user_id: parse("user id", id)?,
                email: email(address)?,
            }),
            _ => None,
        };
        let record = ReviewRecord {
            id: parse("review id", &self.id)?,
            account_id: parse("user id", &self.account_id)?,
            template_id: parse("template id", &self.template_id)?,
            fields: from_json_text("review fields", &self.fields)?,
            content_text: self.content_text,
            metadata,
            assignees,
            team_id: parse_opt("loop id", self.team_id.as_deref())?,
            priority: Priority::parse(&self.priority)
                .map_err(|_| corrupt("priority", &self.priority))?,
            due_date: self.due_date.map(from_db_time),
            callback_url: self.callback_url,
            status: ReviewStatus::parse("status", &self.status)
                .map_err(|_| corrupt("review status", &self.status))?,
            reviewer,
            started_at: self.started_at.map(from_db_time),
            result: from_json_opt("review result", self.result.as_deref())?,
            completed_at: self.completed_at.map(from_db_time),
            cancelled_at: self.cancelled_at.map(from_db_time),
            created_at: from_db_time(self.created_at),
            updated_at: from_db_time(self.updated_at),
            version: self.version,
        };
        Review::restore(record).map_err(|e| corrupt("review", &e.to_string()))
    }
}

fn assignee_rows(review: &Review) -> Vec<AssigneeRow> {
    let id = review.record().id.to_string();
    review
        .record()
        .assignees
        .iter()
        .enumerate()
        .map(|(position, a)| AssigneeRow {
            review_id: id.clone(),
            user_id: a.user_id.to_string(),
            email: a.email.as_str().to_owned(),
            position: i32::try_from(position).unwrap_or(i32::MAX),
        })
        .collect()
}

fn insert_assignees(conn: &mut Conn, rows: &[AssigneeRow]) -> Result<(), DbError> {
    // One row at a time: the multi-backend connection has no batch insert.
    for row in rows {
        diesel::insert_into(review_assignees::table)
            .values(row)
            .execute(conn)?;
    }
    Ok(())
}

/// The reviews of `rows` with their assignees, in the rows' order.
fn with_assignees(conn: &mut Conn, rows: Vec<ReviewRow>) -> Result<Vec<Review>, DbError> {
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let assignees = if ids.is_empty() {
        Vec::new()
    } else {
        review_assignees::table
            .filter(review_assignees::review_id.eq_any(&ids))
            .order((
                review_assignees::review_id.asc(),
                review_assignees::position.asc(),
            ))
            .select(AssigneeRow::as_select())
            .load(conn)?
    };
    let mut by_review: HashMap<String, Vec<Reviewer>> = HashMap::new();
    for row in assignees {
        by_review.entry(row.review_id).or_default().push(Reviewer {
            user_id: parse("user id", &row.user_id)?,
            email: email(&row.email)?,
        });
    }
    rows.into_iter()
        .map(|row| {
            let assignees = by_review.remove(&row.id).unwrap_or_default();
            row.into_domain(assignees)
        })
        .collect()
}

fn filtered(query: &ReviewQuery) -> reviews::BoxedQuery<'static, Backend> {
    let mut boxed = reviews::table.into_boxed();
    match query.scope {
        ReviewScope::SentBy(account) => {
            boxed = boxed.filter(reviews::account_id.eq(account.to_string()));
        }
        ReviewScope::For(user) => {
            let user = user.to_string();
            let assigned = review_assignees::table
                .filter(review_assignees::user_id.eq(user.clone()))
                .select(review_assignees::review_id);
            let teams = loop_members::table
                .filter(loop_members::user_id.eq(user))
                .filter(loop_members::status.eq("active"))
                .select(loop_members::loop_id.nullable());
            boxed = boxed.filter(
                reviews::id
                    .eq_any(assigned)
                    .or(reviews::team_id.eq_any(teams)),
            );
        }
    }
    if let Some(status) = query.status {
        boxed = boxed.filter(reviews::status.eq(status.as_str()));
    }
    if let Some(template) = query.template_id {
        boxed = boxed.filter(reviews::template_id.eq(template.to_string()));
    }
    if let Some(assignee) = query.assignee {
        let named = review_assignees::table
            .filter(review_assignees::user_id.eq(assignee.to_string()))
            .select(review_assignees::review_id);
        boxed = boxed.filter(reviews::id.eq_any(named));
    }
    if let Some(team) = query.team_id {
        boxed = boxed.filter(reviews::team_id.eq(team.to_string()));
    }
    if let Some(priority) = query.priority {
        boxed = boxed.filter(reviews::priority.eq(priority.as_str()));
    }
    if let Some(now) = query.overdue_at {
        let open = [ReviewStatus::Created, ReviewStatus::Started].map(|s| s.as_str());
        boxed = boxed
            .filter(reviews::status.eq_any(open))
            .filter(reviews::due_date.lt(to_db_time(now)));
    }
    boxed
}

#[async_trait]
impl ReviewStore for SqlStore {
    async fn insert_review(&self, review: &Review, events: &[Event]) -> Result<(), StoreError> {
        let row = ReviewRow::from_domain(review);
        let assignees = assignee_rows(review);
        let events = super::outbox::NewEvents::of(events);
        self.db
            .write(move |conn| {
                diesel::insert_into(reviews::table)
                    .values(&row)
                    .execute(conn)?;
                insert_assignees(conn, &assignees)?;
                outbox::append(conn, &events)
            })
            .await
    }

    async fn review_by_id(&self, id: &ReviewId) -> Result<Option<Review>, StoreError> {
        let id = id.to_string();
        self.db
            .run(move |conn| {
                let Some(row) = reviews::table
                    .find(id)
                    .select(ReviewRow::as_select())
                    .first(conn)
                    .optional()?
                else {
                    return Ok(None);
                };
                Ok(with_assignees(conn, vec![row])?.pop())
            })
            .await
    }

    async fn update_review(&self, review: &Review, events: &[Event]) -> Result<(), StoreError> {
        let row = ReviewRow::from_domain(review);
        let assignees = assignee_rows(review);
        let events = super::outbox::NewEvents::of(events);
        self.db
            .write(move |conn| {
                let changed = diesel::update(
                    reviews::table
                        .find(&row.id)
                        .filter(reviews::version.eq(row.version)),
                )
                .set((
                    reviews::priority.eq(&row.priority),
                    reviews::due_date.eq(row.due_date),
                    reviews::status.eq(&row.status),
                    reviews::reviewer_id.eq(&row.reviewer_id),
                    reviews::reviewer_email.eq(&row.reviewer_email),
                    reviews::started_at.eq(row.started_at),
                    reviews::result.eq(&row.result),
                    reviews::completed_at.eq(row.completed_at),
                    reviews::cancelled_at.eq(row.cancelled_at),
                    reviews::updated_at.eq(row.updated_at),
                    reviews::version.eq(row.version + 1),
                ))
                .execute(conn)?;
                if changed == 0 {
                    let exists: i64 = reviews::table.find(&row.id).count().get_result(conn)?;
                    return Err(if exists == 0 {
                        StoreError::NotFound
                    } else {
                        StoreError::Conflict("review changed meanwhile".into())
                    }
                    .into());
                }
                diesel::delete(
                    review_assignees::table.filter(review_assignees::review_id.eq(&row.id)),
                )
                .execute(conn)?;
                insert_assignees(conn, &assignees)?;
                outbox::append(conn, &events)
            })
            .await
    }

    async fn list_reviews(&self, query: &ReviewQuery) -> Result<ReviewPage, StoreError> {
        let query = query.clone();
        self.db
            .run(move |conn| {
                let total: i64 = filtered(&query).count().get_result(conn)?;
                let rows = filtered(&query)
                    .order((reviews::created_at.desc(), reviews::id.desc()))
                    .limit(i64::from(query.limit))
                    .offset(i64::from(query.offset))
                    .select(ReviewRow::as_select())
                    .load(conn)?;
                Ok(ReviewPage {
                    reviews: with_assignees(conn, rows)?,
                    total: u64::try_from(total).unwrap_or_default(),
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests;
