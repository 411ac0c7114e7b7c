//! The audit chain: appended inside the transaction of each change, read
//! by the API and by `reviewloop audit verify`.

use async_trait::async_trait;
use diesel::prelude::*;
use reviewloop_domain::{AuditEntry, AuditRecord, UserId};
use reviewloop_ports::{AuditStore, StoreError};

use super::convert::{from_db_time, from_json_text, parse, parse_opt, to_db_time, to_json_text};
use super::schema::audit_entries;
use super::{Conn, DbConnection, DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_entries)]
struct AuditRow {
    account_id: String,
    seq: i64,
    at: chrono::NaiveDateTime,
    action: String,
    loop_id: Option<String>,
    request_id: Option<String>,
    data: String,
    prev_hash: String,
    hash: String,
}

impl AuditRow {
    fn from_domain(e: &AuditEntry) -> Self {
        Self {
            account_id: e.account_id.to_string(),
            seq: e.seq,
            at: to_db_time(e.at),
            action: e.action.clone(),
            loop_id: e.loop_id.map(|l| l.to_string()),
            request_id: e.request_id.map(|r| r.to_string()),
            data: to_json_text(&e.data),
            prev_hash: e.prev_hash.clone(),
            hash: e.hash.clone(),
        }
    }

    fn into_domain(self) -> Result<AuditEntry, DbError> {
        Ok(AuditEntry {
            account_id: parse("user id", &self.account_id)?,
            seq: self.seq,
            at: from_db_time(self.at),
            action: self.action,
            loop_id: parse_opt("loop id", self.loop_id.as_deref())?,
            request_id: parse_opt("request id", self.request_id.as_deref())?,
            // Text that is no longer JSON was edited by hand: kept as a
            // string, it fails its hash and `verify` names the entry.
            data: from_json_text("audit data", &self.data)
                .unwrap_or_else(|_| serde_json::Value::String(self.data.clone())),
            prev_hash: self.prev_hash,
            hash: self.hash,
        })
    }
}

fn head(conn: &mut Conn, account: &str) -> Result<Option<AuditEntry>, DbError> {
    audit_entries::table
        .filter(audit_entries::account_id.eq(account))
        .order(audit_entries::seq.desc())
        .select(AuditRow::as_select())
        .first(conn)
        .optional()?
        .map(AuditRow::into_domain)
        .transpose()
}

fn lock_one(conn: &mut Conn, account: &str) -> Result<(), DbError> {
    if let DbConnection::Postgres(pg) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind::<diesel::sql_types::Text, _>(format!("audit:{account}"))
            .execute(pg)?;
    }
    Ok(())
}

/// Takes the logs of `accounts` for this transaction (PostgreSQL only;
/// SQLite runs one write at a time). Two transactions appending to one
/// account's log would both read the same head; the lock makes the second
/// wait for the first to commit. Every write that appends calls this
/// first, before it locks any row, and takes the accounts in one order:
/// a transaction holding a log while it waits for a row another holds,
/// which in turn waits for the log, would deadlock. (The lock is
/// re-entrant, so [`append`] taking it again changes nothing.)
pub(crate) fn lock_logs(
    conn: &mut Conn,
    accounts: impl IntoIterator<Item = UserId>,
) -> Result<(), DbError> {
    let mut accounts: Vec<String> = accounts.into_iter().map(|a| a.to_string()).collect();
    accounts.sort();
    accounts.dedup();
    for account in &accounts {
        lock_one(conn, account)?;
    }
    Ok(())
}

/// Appends `records` to their accounts' logs; call it inside the
/// transaction of the change they record, which has called [`lock_logs`]
/// for their accounts before writing anything.
pub(crate) fn append(conn: &mut Conn, records: &[AuditRecord]) -> Result<(), DbError> {
    for record in records {
        let account = record.account_id.to_string();
        lock_one(conn, &account)?;
        let previous = head(conn, &account)?;
        let entry = AuditEntry::after(previous.as_ref(), record.clone());
        diesel::insert_into(audit_entries::table)
            .values(AuditRow::from_domain(&entry))
            .execute(conn)?;
    }
    Ok(())
}

#[async_trait]
impl AuditStore for SqlStore {
    async fn audit_entries(
        &self,
        account: &UserId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let account = account.to_string();
        self.db
            .run(move |conn| {
                audit_entries::table
                    .filter(audit_entries::account_id.eq(account))
                    .filter(audit_entries::seq.gt(after))
                    .order(audit_entries::seq.asc())
                    .limit(i64::from(limit))
                    .select(AuditRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(AuditRow::into_domain)
                    .collect()
            })
            .await
    }

    async fn audit_head(&self, account: &UserId) -> Result<Option<AuditEntry>, StoreError> {
        let account = account.to_string();
        self.db.run(move |conn| head(conn, &account)).await
    }

    async fn audit_accounts(&self) -> Result<Vec<UserId>, StoreError> {
        self.db
            .run(|conn| {
                audit_entries::table
                    .select(audit_entries::account_id)
                    .distinct()
                    .order(audit_entries::account_id.asc())
                    .load::<String>(conn)?
                    .iter()
                    .map(|id| parse("user id", id))
                    .collect()
            })
            .await
    }
}

#[cfg(test)]
mod tests;
