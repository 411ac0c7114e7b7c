//! The idempotency store.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use reviewloop_domain::ApiKeyId;
use reviewloop_ports::{IdempotencyBegin, IdempotencyStore, StoreError};

use super::convert::{from_db_time, to_db_time};
use super::schema::idempotency_keys as keys;
use super::SqlStore;

const RUNNING: &str = "running";
const DONE: &str = "done";

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = keys)]
struct KeyRow {
    api_key_id: String,
    idempotency_key: String,
    fingerprint: String,
    state: String,
    response_status: Option<i32>,
    response_body: Option<String>,
    created_at: chrono::NaiveDateTime,
    locked_at: chrono::NaiveDateTime,
}

#[async_trait]
impl IdempotencyStore for SqlStore {
    async fn begin(
        &self,
        api_key: &ApiKeyId,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        expired_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError> {
        let row = KeyRow {
            api_key_id: api_key.to_string(),
            idempotency_key: key.to_owned(),
            fingerprint: fingerprint.to_owned(),
            state: RUNNING.to_owned(),
            response_status: None,
            response_body: None,
            created_at: to_db_time(now),
            locked_at: to_db_time(now),
        };
        self.db
            .write(move |conn| {
                let id = (row.api_key_id.clone(), row.idempotency_key.clone());
                let existing = keys::table
                    .find(id.clone())
                    .select(KeyRow::as_select())
                    .first(conn)
                    .optional()?;
                let Some(found) = existing else {
                    diesel::insert_into(keys::table)
                        .values(&row)
                        .execute(conn)?;
                    return Ok(IdempotencyBegin::Started { since: now });
                };
                if from_db_time(found.created_at) < expired_before {
                    diesel::delete(keys::table.find(id)).execute(conn)?;
                    diesel::insert_into(keys::table)
                        .values(&row)
                        .execute(conn)?;
                    return Ok(IdempotencyBegin::Started { since: now });
                }
                if found.fingerprint != row.fingerprint {
                    return Ok(IdempotencyBegin::Mismatch);
                }
                if let (DONE, Some(status), Some(body)) = (
                    found.state.as_str(),
                    found.response_status,
                    found.response_body,
                ) {
                    let status = u16::try_from(status).unwrap_or(500);
                    return Ok(IdempotencyBegin::Replay { status, body });
                }
                if from_db_time(found.locked_at) >= stale_before {
                    return Ok(IdempotencyBegin::InProgress);
                }
                // The attempt that held it died: take over, keeping the
                // first-use time that resource ids derive from.
                diesel::update(keys::table.find(id))
                    .set(keys::locked_at.eq(row.locked_at))
                    .execute(conn)?;
                Ok(IdempotencyBegin::Started {
                    since: from_db_time(found.created_at),
                })
            })
            .await
    }

    async fn finish(
        &self,
        api_key: &ApiKeyId,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        let id = (api_key.to_string(), key.to_owned());
        let body = body.to_owned();
        self.db
            .write(move |conn| {
                diesel::update(keys::table.find(id))
                    .set((
                        keys::state.eq(DONE),
                        keys::response_status.eq(i32::from(status)),
                        keys::response_body.eq(body),
                    ))
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn abandon(&self, api_key: &ApiKeyId, key: &str) -> Result<(), StoreError> {
        let id = (api_key.to_string(), key.to_owned());
        // Not deleted: marked as an attempt that died, so the next retry
        // takes it over with the same first-use time, hence the same
        // resource id, and finds what this attempt may have created after
        // all (its commit can succeed while its answer is lost).
        let dead = to_db_time(DateTime::<Utc>::UNIX_EPOCH);
        self.db
            .write(move |conn| {
                diesel::update(keys::table.find(id))
                    .filter(keys::state.eq(RUNNING))
                    .set(keys::locked_at.eq(dead))
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn purge(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        // In batches, so no single transaction holds the (SQLite) writer
        // for long however many records expired.
        const BATCH: i64 = 1000;
        let before = to_db_time(before);
        let mut purged = 0;
        loop {
            let deleted = self
                .db
                .write(move |conn| {
                    let expired: Vec<(String, String)> = keys::table
                        .filter(keys::created_at.lt(before))
                        .select((keys::api_key_id, keys::idempotency_key))
                        .limit(BATCH)
                        .load(conn)?;
                    let mut deleted = 0;
                    for id in expired {
                        deleted += diesel::delete(
                            keys::table.find(id).filter(keys::created_at.lt(before)),
                        )
                        .execute(conn)?;
                    }
                    Ok(deleted as u64)
                })
                .await?;
            purged += deleted;
            if deleted < BATCH as u64 {
                return Ok(purged);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::super::testdb::{fixtures, on_every_backend, TestDb};
    use super::*;

    fn started(at: i64) -> IdempotencyBegin {
        IdempotencyBegin::Started {
            since: fixtures::at(at),
        }
    }

    fn key() -> ApiKeyId {
        ApiKeyId::new(fixtures::oid(1))
    }

    async fn begin_as(
        store: &SqlStore,
        api_key: &ApiKeyId,
        k: &str,
        fp: &str,
        at: i64,
    ) -> IdempotencyBegin {
        let now = fixtures::at(at);
        let (expired, stale) = (now - Duration::hours(24), now - Duration::seconds(60));
        store
            .begin(api_key, k, fp, now, expired, stale)
            .await
            .unwrap()
    }

    async fn begin(store: &SqlStore, k: &str, fp: &str, at: i64) -> IdempotencyBegin {
        begin_as(store, &key(), k, fp, at).await
    }

    async fn first_use_starts_then_replays_the_stored_answer(db: TestDb) {
        let store = db.store();
        assert_eq!(begin(&store, "k1", "fp", 0).await, started(0));
        assert_eq!(
            begin(&store, "k1", "fp", 1).await,
            IdempotencyBegin::InProgress
        );
        store.finish(&key(), "k1", 201, "{\"a\":1}").await.unwrap();
        let replay = IdempotencyBegin::Replay {
            status: 201,
            body: "{\"a\":1}".into(),
        };
        assert_eq!(begin(&store, "k1", "fp", 2).await, replay);
        assert_eq!(
            begin(&store, "k1", "other", 3).await,
            IdempotencyBegin::Mismatch
        );
    }

    async fn keys_are_scoped_to_the_api_key(db: TestDb) {
        let store = db.store();
        assert_eq!(begin(&store, "k1", "fp", 0).await, started(0));
        let other = ApiKeyId::new(fixtures::oid(2));
        assert_eq!(begin_as(&store, &other, "k1", "fp", 1).await, started(1));
    }

    async fn expired_records_start_over_and_abandoned_ones_are_taken_over(db: TestDb) {
        let store = db.store();
        assert_eq!(begin(&store, "done", "fp", 0).await, started(0));
        store.finish(&key(), "done", 201, "{}").await.unwrap();
        let later = 24 * 3600 + 1;
        assert_eq!(
            begin(&store, "done", "new", later).await,
            started(later),
            "expired after 24 h"
        );

        assert_eq!(begin(&store, "failed", "fp", 0).await, started(0));
        store.abandon(&key(), "failed").await.unwrap();
        assert_eq!(
            begin(&store, "failed", "fp", 1).await,
            started(0),
            "a retry runs again at once, under the first use's time"
        );
    }

    async fn an_attempt_that_died_is_taken_over_with_its_first_use_time(db: TestDb) {
        let store = db.store();
        assert_eq!(begin(&store, "crashed", "fp", 0).await, started(0));
        assert_eq!(
            begin(&store, "crashed", "fp", 30).await,
            IdempotencyBegin::InProgress
        );
        assert_eq!(
            begin(&store, "crashed", "fp", 61).await,
            started(0),
            "past 60 s it is taken over"
        );
        assert_eq!(
            begin(&store, "crashed", "fp", 62).await,
            IdempotencyBegin::InProgress,
            "the new attempt holds it"
        );
        assert_eq!(
            begin(&store, "crashed", "other", 200).await,
            IdempotencyBegin::Mismatch
        );
    }

    async fn purge_deletes_old_records_only(db: TestDb) {
        let store = db.store();
        begin(&store, "old", "fp", 0).await;
        begin(&store, "new", "fp", 100).await;
        assert_eq!(store.purge(fixtures::at(50)).await.unwrap(), 1);
        assert_eq!(
            begin(&store, "new", "fp", 101).await,
            IdempotencyBegin::InProgress
        );
    }

    on_every_backend!(
        first_use_starts_then_replays_the_stored_answer,
        keys_are_scoped_to_the_api_key,
        expired_records_start_over_and_abandoned_ones_are_taken_over,
        an_attempt_that_died_is_taken_over_with_its_first_use_time,
        purge_deletes_old_records_only,
    );
}
