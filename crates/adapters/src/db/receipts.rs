//! The receipt key store.

use async_trait::async_trait;
use diesel::prelude::*;
use reviewloop_ports::{ReceiptKey, ReceiptKeyStore, StoreError};

use super::convert::{corrupt, from_db_time, to_db_time};
use super::schema::receipt_keys;
use super::{DbError, SqlStore};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = receipt_keys)]
struct ReceiptKeyRow {
    key_id: String,
    public_key: String,
    secret_key: String,
    created_at: chrono::NaiveDateTime,
    retired_at: Option<chrono::NaiveDateTime>,
}

impl ReceiptKeyRow {
    fn from_port(key: &ReceiptKey) -> Self {
        Self {
            key_id: key.key_id.clone(),
            public_key: hex::encode(&key.public_key),
            secret_key: hex::encode(&key.secret_key),
            created_at: to_db_time(key.created_at),
            retired_at: key.retired_at.map(to_db_time),
        }
    }

    fn into_port(self) -> Result<ReceiptKey, DbError> {
        let bytes = |what: &str, text: &str| {
            hex::decode(text)
                .ok()
                .filter(|b| b.len() == 32)
                .ok_or_else(|| corrupt(what, &self.key_id))
        };
        Ok(ReceiptKey {
            public_key: bytes("receipt public key", &self.public_key)?,
            secret_key: bytes("receipt secret key", &self.secret_key)?,
            created_at: from_db_time(self.created_at),
            retired_at: self.retired_at.map(from_db_time),
            key_id: self.key_id,
        })
    }
}

/// Two instances making or rotating a key at once would both find the
/// active key they are replacing (PostgreSQL reads committed data only), and
/// leave two active; this lock makes the second wait for the first.
const KEYS_LOCK: i64 = 0x0072_6370_746b_6579;

#[async_trait]
impl ReceiptKeyStore for SqlStore {
    async fn receipt_keys(&self) -> Result<Vec<ReceiptKey>, StoreError> {
        self.db
            .run(|conn| {
                receipt_keys::table
                    .order((receipt_keys::created_at.desc(), receipt_keys::key_id.desc()))
                    .select(ReceiptKeyRow::as_select())
                    .load(conn)?
                    .into_iter()
                    .map(ReceiptKeyRow::into_port)
                    .collect()
            })
            .await
    }

    async fn rotate_receipt_key(&self, key: &ReceiptKey) -> Result<(), StoreError> {
        let row = ReceiptKeyRow::from_port(key);
        self.db
            .write(move |conn| {
                super::exclusive(conn, KEYS_LOCK)?;
                diesel::update(receipt_keys::table.filter(receipt_keys::retired_at.is_null()))
                    .set(receipt_keys::retired_at.eq(Some(row.created_at)))
                    .execute(conn)?;
                diesel::insert_into(receipt_keys::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn insert_first_receipt_key(&self, key: &ReceiptKey) -> Result<bool, StoreError> {
        let row = ReceiptKeyRow::from_port(key);
        self.db
            .write(move |conn| {
                super::exclusive(conn, KEYS_LOCK)?;
                let active: i64 = receipt_keys::table
                    .filter(receipt_keys::retired_at.is_null())
                    .count()
                    .get_result(conn)?;
                if active > 0 {
                    return Ok(false);
                }
                diesel::insert_into(receipt_keys::table)
                    .values(&row)
                    .execute(conn)?;
                Ok(true)
            })
            .await
    }
}

#[cfg(test)]
mod tests;
