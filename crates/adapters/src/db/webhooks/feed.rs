//! The outbox read as a stream of events, numbered in commit order.

use async_trait::async_trait;
use diesel::prelude::*;
use reviewloop_domain::{Event, UserId};
use reviewloop_ports::{EventFeed, StoreError};

use super::EventRow;
use crate::db::fixed::update;
use crate::db::schema::outbox_events;
use crate::db::SqlStore;

/// Any number; it only has to be the same on every instance.
const NUMBERING_LOCK: i64 = 0x7265_7669_6577;

/// The first `limit` events not numbered yet, in the order they were
/// written (on SQLite through the unique index on `position`).
pub(super) fn unnumbered_seqs(
    limit: u32,
) -> impl diesel::query_dsl::LoadQuery<'static, crate::db::Conn, i64>
       + diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite>
       + Send
       + 'static {
    outbox_events::table
        .filter(outbox_events::position.is_null())
        .order(outbox_events::seq.asc())
        .limit(i64::from(limit))
        .select(outbox_events::seq)
}

#[async_trait]
impl EventFeed for SqlStore {
    async fn events_after(
        &self,
        account: &UserId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Event)>, StoreError> {
        let account = account.to_string();
        self.db
            .run(move |conn| {
                outbox_events::table
                    .filter(outbox_events::account_id.eq(account))
                    .filter(outbox_events::position.gt(after))
                    .order(outbox_events::position.asc())
                    .limit(i64::from(limit))
                    .select((outbox_events::position, EventRow::as_select()))
                    .load::<(Option<i64>, EventRow)>(conn)?
                    .into_iter()
                    .map(|(position, row)| Ok((position.unwrap_or_default(), row.into_domain()?)))
                    .collect()
            })
            .await
    }

    async fn last_position(&self) -> Result<i64, StoreError> {
        self.db
            .run(|conn| {
                let last: Option<i64> = outbox_events::table
                    .select(diesel::dsl::max(outbox_events::position))
                    .first(conn)?;
                Ok(last.unwrap_or(0))
            })
            .await
    }

    async fn number_new_events(&self, limit: u32) -> Result<usize, StoreError> {
        // A quiet look first, so an idle stream costs no write.
        let quiet = self
            .db
            .run(move |conn| Ok(unnumbered_seqs(1).load::<i64>(conn)?.is_empty()))
            .await?;
        if quiet {
            return Ok(0);
        }
        self.db
            .write(move |conn| {
                {
                    // One numbering transaction at a time across instances:
                    // each starts after the last one committed, so it sees
                    // every position given so far and goes on from there.
                    crate::db::exclusive(conn, NUMBERING_LOCK)?;
                    let last: Option<i64> = outbox_events::table
                        .select(diesel::dsl::max(outbox_events::position))
                        .first(conn)?;
                    let seqs: Vec<i64> = unnumbered_seqs(limit).load(conn)?;
                    let first = last.unwrap_or(0) + 1;
                    match conn {
                        // One statement for the pass, where each is a round trip.
                        crate::db::DbConnection::Postgres(pg) => {
                            crate::db::set_based::number_events(pg, &seqs, first)?;
                        }
                        crate::db::DbConnection::Sqlite(c) => {
                            for (seq, position) in seqs.iter().zip(first..) {
                                update(
                                    outbox_events::table,
                                    outbox_events::seq.eq(seq),
                                    outbox_events::position.eq(position),
                                )
                                .execute(c)?;
                            }
                        }
                    }
                    crate::db::changes::events_numbered(conn)?;
                    Ok(seqs.len())
                }
            })
            .await
    }
}
