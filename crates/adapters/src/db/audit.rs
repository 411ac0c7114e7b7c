//! The audit chain. Entries are written unlinked in the transaction of
//! the change they record ([`append`]: no lock, so one account's writes
//! never queue behind each other), then linked into their account's chain
//! by [`AuditStore::link_audit`] in batches under one lock, as the outbox
//! numbers events.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::query_dsl::LoadQuery;
use reviewloop_domain::{AuditEntry, AuditRecord, UserId};
use reviewloop_ports::{AuditStore, StoreError};

use super::convert::{from_db_time, from_json_text, parse, parse_opt, to_db_time, to_json_text};
use super::fixed::update;
use super::schema::audit_entries;
use super::{native, Conn, DbError, SqlStore};

/// A lock number of its own, apart from the outbox's.
const LINKING_LOCK: i64 = 0x6175_6469_7421;

#[derive(Queryable, Selectable)]
#[diesel(table_name = audit_entries)]
struct AuditRow {
    id: i64,
    account_id: String,
    seq: Option<i64>,
    at: chrono::NaiveDateTime,
    action: String,
    loop_id: Option<String>,
    request_id: Option<String>,
    data: String,
    prev_hash: Option<String>,
    hash: Option<String>,
}

#[derive(Insertable, serde::Serialize)]
#[diesel(table_name = audit_entries, treat_none_as_default_value = false)]
struct NewAuditRow {
    account_id: String,
    #[serde(serialize_with = "super::convert::serialize_db_time")]
    at: chrono::NaiveDateTime,
    action: String,
    loop_id: Option<String>,
    request_id: Option<String>,
    data: String,
}

impl AuditRow {
    fn record(&self) -> Result<AuditRecord, DbError> {
        Ok(AuditRecord {
            account_id: parse("user id", &self.account_id)?,
            at: from_db_time(self.at),
            action: self.action.clone(),
            loop_id: parse_opt("loop id", self.loop_id.as_deref())?,
            request_id: parse_opt("request id", self.request_id.as_deref())?,
            // Text that is no longer JSON was edited by hand: kept as a
            // string, it fails its hash and `verify` names the entry.
            data: from_json_text("audit data", &self.data)
                .unwrap_or_else(|_| serde_json::Value::String(self.data.clone())),
        })
    }

    fn into_domain(self) -> Result<AuditEntry, DbError> {
        let record = self.record()?;
        Ok(AuditEntry {
            account_id: record.account_id,
            seq: self.seq.unwrap_or_default(),
            at: record.at,
            action: record.action,
            loop_id: record.loop_id,
            request_id: record.request_id,
            data: record.data,
            prev_hash: self.prev_hash.unwrap_or_default(),
            hash: self.hash.unwrap_or_default(),
        })
    }
}

/// The last linked entry of `account`.
fn head(conn: &mut Conn, account: &str) -> Result<Option<AuditEntry>, DbError> {
    audit_entries::table
        .filter(audit_entries::account_id.eq(account))
        .filter(audit_entries::seq.is_not_null())
        .order(audit_entries::seq.desc())
        .select(AuditRow::as_select())
        .first(conn)
        .optional()?
        .map(AuditRow::into_domain)
        .transpose()
}

/// Audit entries made ready to write (their data already serialized).
pub(crate) struct NewEntries(Vec<NewAuditRow>);

impl NewEntries {
    /// The rows of `records`.
    pub(crate) fn of(records: &[AuditRecord]) -> Self {
        Self(
            records
                .iter()
                .map(|record| NewAuditRow {
                    account_id: record.account_id.to_string(),
                    at: to_db_time(record.at),
                    action: record.action.clone(),
                    loop_id: record.loop_id.map(|l| l.to_string()),
                    request_id: record.request_id.map(|r| r.to_string()),
                    data: to_json_text(&record.data),
                })
                .collect(),
        )
    }
}

/// Writes `entries`, unlinked; call it inside the transaction of the
/// change they record, so the change and its entries commit together.
pub(crate) fn append(conn: &mut Conn, entries: &NewEntries) -> Result<(), DbError> {
    // One statement (cached once) per row: a batch insert's statement
    // differs with its number of rows.
    native!(conn, |c| for row in &entries.0 {
        diesel::insert_into(audit_entries::table)
            .values(row)
            .execute(c)?;
    });
    Ok(())
}

/// Writes the entries of many changes in one statement on PostgreSQL
/// (see [`append`]).
pub(crate) fn append_all<'a>(
    pg: &mut diesel::PgConnection,
    entries: impl Iterator<Item = &'a NewEntries>,
) -> Result<(), DbError> {
    let rows: Vec<&NewAuditRow> = entries.flat_map(|e| &e.0).collect();
    super::set_based::insert(pg, "audit_entries", &rows)
}

/// The id of an entry not linked yet, if any: through
/// `audit_entries_unlinked`, never a walk of the chain's index.
fn first_unlinked() -> impl LoadQuery<'static, Conn, i64>
       + diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    audit_entries::table
        .filter(audit_entries::seq.is_null())
        .select(audit_entries::id)
        .limit(1)
}

/// The accounts with a linked entry, in order, read from the chain's own
/// index (partial: its condition is named, or the table is read whole).
/// Verifying every account links what waits first, so none is left out.
fn chained_accounts() -> impl LoadQuery<'static, Conn, String>
       + diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    audit_entries::table
        .filter(audit_entries::seq.is_not_null())
        .select(audit_entries::account_id)
        .distinct()
        .order(audit_entries::account_id.asc())
}

#[async_trait]
impl AuditStore for SqlStore {
    async fn link_audit(&self, batch: u32) -> Result<usize, StoreError> {
        // A read through the partial index first: an idle pass (every
        // 200 ms on every instance) takes no write transaction, as the
        // outbox's numbering pass does not.
        let quiet = self
            .db
            .run(|conn| Ok(first_unlinked().load::<i64>(conn)?.is_empty()))
            .await?;
        if quiet {
            return Ok(0);
        }
        self.db
            .write(move |conn| {
                // One linker at a time across instances: two would read the
                // same head. Entries are linked in the order they became
                // visible, which is what the chain then records.
                super::exclusive(conn, LINKING_LOCK)?;
                let unlinked: Vec<AuditRow> = audit_entries::table
                    .filter(audit_entries::seq.is_null())
                    .order(audit_entries::id.asc())
                    .limit(i64::from(batch))
                    .select(AuditRow::as_select())
                    .load(conn)?;
                let mut heads: std::collections::HashMap<String, Option<AuditEntry>> =
                    std::collections::HashMap::new();
                let mut links = Vec::with_capacity(unlinked.len());
                for row in &unlinked {
                    let previous = match heads.get(&row.account_id) {
                        Some(head) => head.clone(),
                        None => head(conn, &row.account_id)?,
                    };
                    let entry = AuditEntry::after(previous.as_ref(), row.record()?);
                    links.push((row.id, entry.clone()));
                    heads.insert(row.account_id.clone(), Some(entry));
                }
                let links: Vec<_> = links
                    .iter()
                    .map(|(id, e)| (*id, e.seq, e.prev_hash.as_str(), e.hash.as_str()))
                    .collect();
                match conn {
                    // One statement for the pass, where each is a round trip.
                    super::DbConnection::Postgres(pg) => {
                        super::set_based::link_audit_entries(pg, &links)?;
                    }
                    super::DbConnection::Sqlite(c) => {
                        for (id, seq, prev_hash, hash) in links {
                            update(
                                audit_entries::table,
                                audit_entries::id.eq(id),
                                (
                                    audit_entries::seq.eq(Some(seq)),
                                    audit_entries::prev_hash.eq(Some(prev_hash)),
                                    audit_entries::hash.eq(Some(hash)),
                                ),
                            )
                            .execute(c)?;
                        }
                    }
                }
                Ok(unlinked.len())
            })
            .await
    }

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
                chained_accounts()
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
