//! Rate limits shared by every instance on one PostgreSQL database: one
//! atomic upsert per call counts it and returns the window's total.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text};
use reviewloop_domain::ApiKeyId;
use reviewloop_ports::{RateLimitStatus, RateLimiter, StoreError};

use super::{DbConnection, SqlStore};
use crate::rate_limit::hour_window;

#[derive(QueryableByName)]
struct Calls {
    #[diesel(sql_type = Integer)]
    calls: i32,
}

/// Counts calls in the database, so that every instance sees one count.
#[derive(Clone)]
pub struct SharedRateLimiter {
    store: SqlStore,
}

impl SharedRateLimiter {
    /// A limiter over `store` (which must be on PostgreSQL).
    pub fn new(store: SqlStore) -> Self {
        Self { store }
    }
}

#[async_trait]
impl RateLimiter for SharedRateLimiter {
    async fn hit(
        &self,
        key: &ApiKeyId,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<RateLimitStatus, StoreError> {
        let (window, reset_at) = hour_window(now)?;
        let key = key.to_string();
        let calls = self
            .store
            .db
            .run(move |conn| {
                let DbConnection::Postgres(pg) = conn else {
                    return Err(StoreError::Internal("the shared rate limiter needs PostgreSQL".into()).into());
                };
                // The count is taken and raised in one statement, so no two
                // instances can both see the last free call.
                let row: Calls = diesel::sql_query(
                    "INSERT INTO rate_limit_windows (api_key_id, window_start, calls) VALUES ($1, $2, 1)
                     ON CONFLICT (api_key_id, window_start)
                     DO UPDATE SET calls = rate_limit_windows.calls + 1
                     RETURNING calls",
                )
                .bind::<Text, _>(&key)
                .bind::<BigInt, _>(window)
                .get_result(pg)?;
                // Old windows are of no use; clear them now and then.
                if row.calls == 1 {
                    diesel::sql_query("DELETE FROM rate_limit_windows WHERE window_start < $1")
                        .bind::<BigInt, _>(window - 1)
                        .execute(pg)?;
                }
                Ok(row.calls)
            })
            .await?;
        let calls = u32::try_from(calls).unwrap_or(u32::MAX);
        Ok(RateLimitStatus {
            limit,
            remaining: limit.saturating_sub(calls),
            reset_at,
            allowed: calls <= limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdb::TestDb;
    use super::*;
    use reviewloop_domain::ObjectId;

    #[tokio::test]
    async fn instances_share_one_count_per_key_and_hour() {
        let Some(db) = TestDb::postgres() else {
            eprintln!(
                "skipped: {} is not set",
                super::super::testdb::POSTGRES_URL_VAR
            );
            return;
        };
        // Two limiters over two pools stand for two instances.
        let first = SharedRateLimiter::new(db.store());
        let second = SharedRateLimiter::new(SqlStore::new(db.db.clone()));
        let key = ApiKeyId::new(ObjectId::from_parts(1, [1; 8]));
        let other = ApiKeyId::new(ObjectId::from_parts(1, [2; 8]));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let a = first.hit(&key, 3, at).await.unwrap();
        let b = second.hit(&key, 3, at).await.unwrap();
        let c = first.hit(&key, 3, at).await.unwrap();
        let d = second.hit(&key, 3, at).await.unwrap();
        assert_eq!(
            [a.remaining, b.remaining, c.remaining, d.remaining],
            [2, 1, 0, 0]
        );
        assert_eq!(
            [a.allowed, b.allowed, c.allowed, d.allowed],
            [true, true, true, false]
        );
        assert!(
            first.hit(&other, 3, at).await.unwrap().allowed,
            "keys are counted apart"
        );
        let next_hour = first.hit(&key, 3, a.reset_at).await.unwrap();
        assert_eq!((next_hour.allowed, next_hour.remaining), (true, 2));
    }

    #[tokio::test]
    async fn concurrent_calls_never_exceed_the_limit() {
        let Some(db) = TestDb::postgres() else { return };
        let limiter = SharedRateLimiter::new(db.store());
        let key = ApiKeyId::new(ObjectId::from_parts(1, [3; 8]));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let calls = (0..20).map(|_| {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.hit(&key, 7, at).await.unwrap().allowed })
        });
        let mut allowed = 0;
        for call in calls.collect::<Vec<_>>() {
            allowed += usize::from(call.await.unwrap());
        }
        assert_eq!(allowed, 7);
    }
}
