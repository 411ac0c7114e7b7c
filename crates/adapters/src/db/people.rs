//! The people store: passwords, web sessions and one-time password links.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use reviewloop_domain::{Notice, User, UserId};
use reviewloop_ports::{PeopleStore, Session, StoreError};

use super::convert::{from_db_time, parse, to_db_time};
use super::models::UserRow;
use super::schema::{api_keys, loops, password_tokens, users, web_sessions};
use super::{Conn, DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = web_sessions)]
struct SessionRow {
    token_hash: String,
    user_id: String,
    csrf_token: String,
    created_at: chrono::NaiveDateTime,
    expires_at: chrono::NaiveDateTime,
}

impl SessionRow {
    fn from_domain(s: &Session) -> Self {
        Self {
            token_hash: s.token_hash.clone(),
            user_id: s.user_id.to_string(),
            csrf_token: s.csrf_token.clone(),
            created_at: to_db_time(s.created_at),
            expires_at: to_db_time(s.expires_at),
        }
    }

    fn into_domain(self) -> Result<Session, DbError> {
        Ok(Session {
            user_id: parse("user id", &self.user_id)?,
            token_hash: self.token_hash,
            csrf_token: self.csrf_token,
            created_at: from_db_time(self.created_at),
            expires_at: from_db_time(self.expires_at),
        })
    }
}

/// Sets a password and ends the account's sessions and its other password
/// links (a reset link asked for earlier must not work after the password
/// changed), inside the caller's transaction. `NotFound` when the account
/// is gone.
fn write_password(conn: &mut Conn, user: &str, hash: &str) -> Result<(), DbError> {
    let changed = diesel::update(users::table.find(user))
        .set(users::password_hash.eq(Some(hash)))
        .execute(conn)?;
    if changed == 0 {
        return Err(StoreError::NotFound.into());
    }
    diesel::delete(web_sessions::table.filter(web_sessions::user_id.eq(user))).execute(conn)?;
    diesel::delete(password_tokens::table.filter(password_tokens::user_id.eq(user)))
        .execute(conn)?;
    Ok(())
}

#[async_trait]
impl PeopleStore for SqlStore {
    async fn sends_requests(&self, user: &UserId) -> Result<bool, StoreError> {
        let user = user.to_string();
        self.db
            .run(move |conn| {
                let owns_loop = diesel::select(diesel::dsl::exists(
                    loops::table.filter(loops::creator_id.eq(&user)),
                ))
                .get_result::<bool>(conn)?;
                if owns_loop {
                    return Ok(true);
                }
                Ok(diesel::select(diesel::dsl::exists(
                    api_keys::table
                        .filter(api_keys::user_id.eq(&user))
                        .filter(api_keys::revoked_at.is_null()),
                ))
                .get_result::<bool>(conn)?)
            })
            .await
    }

    async fn password_hash(&self, user: &UserId) -> Result<Option<String>, StoreError> {
        let user = user.to_string();
        self.db
            .run(move |conn| {
                Ok(users::table
                    .find(user)
                    .select(users::password_hash)
                    .first::<Option<String>>(conn)
                    .optional()?
                    .flatten())
            })
            .await
    }

    async fn set_password(&self, user: &UserId, hash: &str) -> Result<(), StoreError> {
        let (user, hash) = (user.to_string(), hash.to_owned());
        self.db
            .write(move |conn| write_password(conn, &user, &hash))
            .await
    }

    async fn insert_session(&self, session: &Session) -> Result<(), StoreError> {
        let row = SessionRow::from_domain(session);
        self.db
            .write(move |conn| {
                diesel::insert_into(web_sessions::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn session(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(Session, User)>, StoreError> {
        let (hash, now) = (token_hash.to_owned(), to_db_time(now));
        self.db
            .run(move |conn| {
                let found = web_sessions::table
                    .inner_join(users::table)
                    .filter(web_sessions::token_hash.eq(hash))
                    .filter(web_sessions::expires_at.gt(now))
                    .select((SessionRow::as_select(), UserRow::as_select()))
                    .first::<(SessionRow, UserRow)>(conn)
                    .optional()?;
                match found {
                    Some((s, u)) => Ok(Some((s.into_domain()?, u.into_domain()?))),
                    None => Ok(None),
                }
            })
            .await
    }

    async fn extend_session(
        &self,
        token_hash: &str,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let (hash, until) = (token_hash.to_owned(), to_db_time(until));
        self.db
            .write(move |conn| {
                diesel::update(web_sessions::table.find(hash))
                    .set(web_sessions::expires_at.eq(until))
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn delete_session(&self, token_hash: &str) -> Result<(), StoreError> {
        let hash = token_hash.to_owned();
        self.db
            .write(move |conn| {
                diesel::delete(web_sessions::table.find(hash)).execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn insert_password_token(
        &self,
        token_hash: &str,
        user: &UserId,
        expires_at: DateTime<Utc>,
        notices: &[Notice],
    ) -> Result<(), StoreError> {
        let notices = notices.to_vec();
        let values = (
            password_tokens::token_hash.eq(token_hash.to_owned()),
            password_tokens::user_id.eq(user.to_string()),
            password_tokens::expires_at.eq(to_db_time(expires_at)),
        );
        self.db
            .write(move |conn| {
                diesel::insert_into(password_tokens::table)
                    .values(values)
                    .execute(conn)?;
                super::notices::append(conn, &notices)
            })
            .await
    }

    async fn password_token(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<UserId>, StoreError> {
        let (hash, now) = (token_hash.to_owned(), to_db_time(now));
        self.db
            .run(move |conn| {
                let user = password_tokens::table
                    .find(hash)
                    .filter(password_tokens::expires_at.gt(now))
                    .select(password_tokens::user_id)
                    .first::<String>(conn)
                    .optional()?;
                user.map(|u| parse("user id", &u)).transpose()
            })
            .await
    }

    async fn redeem_password_token(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<UserId>, StoreError> {
        let (token, password, now) = (
            token_hash.to_owned(),
            password_hash.to_owned(),
            to_db_time(now),
        );
        self.db
            .write(move |conn| {
                // Deleting first makes the link single-use even when two
                // browsers submit it at once: only one delete finds the row.
                let user = password_tokens::table
                    .find(&token)
                    .filter(password_tokens::expires_at.gt(now))
                    .select(password_tokens::user_id)
                    .first::<String>(conn)
                    .optional()?;
                let Some(user) = user else { return Ok(None) };
                let deleted = diesel::delete(password_tokens::table.find(&token)).execute(conn)?;
                if deleted == 0 {
                    return Ok(None);
                }
                write_password(conn, &user, &password)?;
                Ok(Some(parse("user id", &user)?))
            })
            .await
    }

    async fn purge_expired_sessions(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let now = to_db_time(now);
        self.db
            .write(move |conn| {
                let sessions =
                    diesel::delete(web_sessions::table.filter(web_sessions::expires_at.le(now)))
                        .execute(conn)?;
                let links = diesel::delete(
                    password_tokens::table.filter(password_tokens::expires_at.le(now)),
                )
                .execute(conn)?;
                Ok((sessions + links) as u64)
            })
            .await
    }
}

#[cfg(test)]
mod tests;
