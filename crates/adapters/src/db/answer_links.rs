//! One-click answer links: written with the notices whose emails carry
//! them ([`append`], from the dispatcher's transaction), read when one is
//! followed, spent once it answered.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use reviewloop_domain::AnswerLink;
use reviewloop_ports::{AnswerLinkStore, StoreError};

use super::convert::{from_db_time, from_json_text, parse, to_db_time, to_json_text};
use super::schema::answer_links;
use super::{Conn, DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = answer_links)]
struct AnswerLinkRow {
    token_hash: String,
    request_id: String,
    user_id: String,
    answer: String,
    label: String,
    created_at: NaiveDateTime,
    used_at: Option<NaiveDateTime>,
}

impl AnswerLinkRow {
    fn from_domain(link: &AnswerLink) -> Self {
        Self {
            token_hash: link.token_hash.clone(),
            request_id: link.request_id.to_string(),
            user_id: link.user_id.to_string(),
            answer: to_json_text(&link.answer),
            label: link.label.clone(),
            created_at: to_db_time(link.created_at),
            used_at: link.used_at.map(to_db_time),
        }
    }

    fn into_domain(self) -> Result<AnswerLink, DbError> {
        Ok(AnswerLink {
            request_id: parse("request id", &self.request_id)?,
            user_id: parse("user id", &self.user_id)?,
            answer: from_json_text("answer link", &self.answer)?,
            label: self.label,
            created_at: from_db_time(self.created_at),
            used_at: self.used_at.map(from_db_time),
            token_hash: self.token_hash,
        })
    }
}

/// Writes `links` in the caller's transaction.
pub(crate) fn append(conn: &mut Conn, links: &[AnswerLink]) -> Result<(), DbError> {
    // One row at a time: the multi-backend connection has no batch insert.
    for link in links {
        diesel::insert_into(answer_links::table)
            .values(AnswerLinkRow::from_domain(link))
            .execute(conn)?;
    }
    Ok(())
}

#[async_trait]
impl AnswerLinkStore for SqlStore {
    async fn answer_link(&self, token_hash: &str) -> Result<Option<AnswerLink>, StoreError> {
        let hash = token_hash.to_owned();
        self.db
            .run(move |conn| {
                answer_links::table
                    .find(&hash)
                    .select(AnswerLinkRow::as_select())
                    .first(conn)
                    .optional()?
                    .map(AnswerLinkRow::into_domain)
                    .transpose()
            })
            .await
    }

    async fn use_answer_link(
        &self,
        token_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let hash = token_hash.to_owned();
        self.db
            .write(move |conn| {
                let spent = diesel::update(
                    answer_links::table
                        .filter(answer_links::token_hash.eq(&hash))
                        .filter(answer_links::used_at.is_null()),
                )
                .set(answer_links::used_at.eq(Some(to_db_time(at))))
                .execute(conn)?;
                Ok(spent == 1)
            })
            .await
    }
}
