//! What operators watch: can the database be used, and how deep and how
//! old are the queues. Each count goes through a partial index of waiting
//! rows, except requests by status, which counts the table.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::dsl::{count_star, min};
use diesel::prelude::*;
use reviewloop_domain::RequestStatus;
use reviewloop_ports::{Backlog, OperationsStore, Queue, StoreError};

use super::convert::{from_db_time, to_db_time};
use super::schema::{deliveries, notices, outbox_events, requests};
use super::SqlStore;

/// A queue of `waiting` rows whose oldest became due at `oldest`; only what
/// is already due counts as having waited.
fn queue(waiting: i64, oldest: Option<NaiveDateTime>, now: DateTime<Utc>) -> Queue {
    let oldest_seconds = oldest
        .map(|t| (now - from_db_time(t)).num_milliseconds() as f64 / 1000.0)
        .unwrap_or(0.0)
        .max(0.0);
    Queue {
        waiting: u64::try_from(waiting).unwrap_or_default(),
        oldest_seconds,
    }
}

#[async_trait]
impl OperationsStore for SqlStore {
    async fn ping(&self) -> Result<(), StoreError> {
        self.db
            .run(|conn| {
                diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>("1"))
                    .execute(conn)?;
                Ok(())
            })
            .await
    }

    async fn backlog(&self, now: DateTime<Utc>) -> Result<Backlog, StoreError> {
        let at = to_db_time(now);
        self.db
            .run(move |conn| {
                let counted: Vec<(String, i64)> = requests::table
                    .group_by(requests::status)
                    .select((requests::status, count_star()))
                    .load(conn)?;
                let requests_by_status = RequestStatus::ALL
                    .iter()
                    .map(|s| {
                        let n = counted
                            .iter()
                            .find(|(name, _)| name == s.as_str())
                            .map_or(0, |(_, n)| *n);
                        (s.as_str(), u64::try_from(n).unwrap_or_default())
                    })
                    .collect();
                let (outbox_waiting, outbox_oldest): (i64, Option<NaiveDateTime>) =
                    outbox_events::table
                        .filter(outbox_events::dispatched_at.is_null())
                        .select((count_star(), min(outbox_events::created_at)))
                        .first(conn)?;
                let (deliveries_waiting, deliveries_oldest): (i64, Option<NaiveDateTime>) =
                    deliveries::table
                        .filter(deliveries::status.eq("pending"))
                        .select((count_star(), min(deliveries::next_attempt_at)))
                        .first(conn)?;
                let (notices_waiting, notices_oldest): (i64, Option<NaiveDateTime>) =
                    notices::table
                        .filter(notices::status.eq("pending"))
                        .select((count_star(), min(notices::next_attempt_at)))
                        .first(conn)?;
                let due = |oldest: Option<NaiveDateTime>| oldest.filter(|t| *t <= at);
                Ok(Backlog {
                    requests_by_status,
                    outbox: queue(outbox_waiting, outbox_oldest, now),
                    deliveries: queue(deliveries_waiting, due(deliveries_oldest), now),
                    notices: queue(notices_waiting, due(notices_oldest), now),
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdb::{fixtures, on_every_backend, TestDb};
    use super::*;

    async fn the_backlog_counts_open_work_and_its_age(db: TestDb) {
        let store = db.store();
        store.ping().await.unwrap();
        let empty = store.backlog(fixtures::at(0)).await.unwrap();
        assert_eq!(empty.outbox, Queue::default());
        assert!(empty.requests_by_status.iter().all(|(_, n)| *n == 0));
        fixtures::created_request(&store).await;
        let later = store.backlog(fixtures::at(30)).await.unwrap();
        assert_eq!(
            later
                .requests_by_status
                .iter()
                .find(|(s, _)| *s == "pending"),
            Some(&("pending", 1))
        );
        assert_eq!(later.outbox.waiting, 1, "its request.created event");
        assert!(
            (later.outbox.oldest_seconds - 30.0).abs() < 1.0,
            "{:?}",
            later.outbox
        );
        assert_eq!(later.deliveries, Queue::default());
    }

    on_every_backend!(the_backlog_counts_open_work_and_its_age,);
}
