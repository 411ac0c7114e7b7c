//! Rate limits shared by every instance on one PostgreSQL database, without
//! a database write per call.
//!
//! Each instance counts its own calls in memory and, every
//! [`FLUSH_EVERY`], adds them to the shared count in one statement for all
//! keys (one per window kind: hourly, per minute), reading every key's
//! total back. A key's first call in a window on
//! an instance is counted in the database at once, so an instance that
//! has just started (or just met the key) knows the shared count before
//! it admits anything more.
//!
//! The price is a bounded overshoot: between two flushes an instance
//! admits against the total it last read, so a key can exceed its limit
//! by at most the calls the *other* instances admit in one flush interval.
//! On one instance the count is exact.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Text};
use reviewloop_domain::ApiKeyId;
use reviewloop_ports::{RateLimitStatus, RateLimiter, RateWindow, StoreError};

use super::{DbConnection, SqlStore};

/// How often an instance adds its calls to the shared count.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);

#[derive(QueryableByName)]
struct Total {
    #[diesel(sql_type = Text)]
    api_key_id: String,
    #[diesel(sql_type = Integer)]
    calls: i32,
}

/// One key's count in the current window, as this instance knows it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    window: i64,
    /// The shared total when it was last read (this instance's flushed
    /// calls included).
    shared: u32,
    /// Calls admitted here and not flushed yet.
    pending: u32,
    /// Calls being flushed right now: in neither of the above until the
    /// flush answers, but used all the same.
    in_flight: u32,
    /// The shared total of the window before, read once: it weighs on the
    /// sliding count as it fades.
    previous: u32,
}

impl Slot {
    fn new(window: i64, shared: u32, previous: u32) -> Self {
        Self {
            window,
            shared,
            pending: 0,
            in_flight: 0,
            previous,
        }
    }

    fn used(&self) -> u32 {
        self.shared
            .saturating_add(self.pending)
            .saturating_add(self.in_flight)
    }
}

/// A counter's name in the shared table: the key's id for its hourly
/// window (as it has always been), the id and `/minute` for the
/// per-minute one. Window numbers of the two kinds overlap, so the name
/// keeps them apart.
fn row_key(key: &ApiKeyId, kind: RateWindow) -> String {
    match kind {
        RateWindow::Hour => key.to_string(),
        RateWindow::Minute => format!("{key}{MINUTE_SUFFIX}"),
    }
}

const MINUTE_SUFFIX: &str = "/minute";

/// Counts calls per instance and shares the counts through the database.
pub struct SharedRateLimiter {
    store: SqlStore,
    slots: Mutex<HashMap<(ApiKeyId, RateWindow), Slot>>,
    /// One lock per counter, held while its window is opened (its first
    /// call counted in the database): calls for that key that come
    /// meanwhile wait and then count against the total it read, rather
    /// than against a slot that does not yet know the calls still on their
    /// way to the database. Other keys do not wait.
    opening: Mutex<HashMap<(ApiKeyId, RateWindow), OpeningLock>>,
    /// Held through a flush. Two flushes in flight at once could answer
    /// out of order, and a slot cannot tell whether a total it reads
    /// already holds the other flush's calls: it would count them twice
    /// (refusing calls under the limit) or, taking the older total last,
    /// not at all (admitting past it).
    flushing: tokio::sync::Mutex<()>,
}

type Slots = HashMap<(ApiKeyId, RateWindow), Slot>;
type OpeningLock = std::sync::Arc<tokio::sync::Mutex<()>>;

impl SharedRateLimiter {
    /// A limiter over `store` (which must be on PostgreSQL). Something must
    /// call [`SharedRateLimiter::flush`] every [`FLUSH_EVERY`].
    pub fn new(store: SqlStore) -> Self {
        Self {
            store,
            slots: Mutex::new(HashMap::new()),
            opening: Mutex::new(HashMap::new()),
            flushing: tokio::sync::Mutex::new(()),
        }
    }

    fn slots(&self) -> Result<std::sync::MutexGuard<'_, Slots>, StoreError> {
        self.slots
            .lock()
            .map_err(|_| StoreError::Internal("rate limiter lock poisoned".into()))
    }

    /// Adds `calls` per counter to the shared counts of `window` in one
    /// statement and returns every counter's new total (counters with 0
    /// calls are read, not written).
    async fn add(
        &self,
        window: i64,
        calls: Vec<(String, u32)>,
    ) -> Result<HashMap<String, u32>, StoreError> {
        let (keys, counts): (Vec<String>, Vec<i32>) = calls
            .into_iter()
            .map(|(k, n)| (k, i32::try_from(n).unwrap_or(i32::MAX)))
            .unzip();
        let rows: Vec<Total> = self
            .store
            .db
            .run(move |conn| {
                let DbConnection::Postgres(pg) = conn else {
                    return Err(StoreError::Internal(
                        "the shared rate limiter needs PostgreSQL".into(),
                    )
                    .into());
                };
                // Adding and reading back is one statement, so no two
                // instances can both miss each other's calls. Keys with no
                // new calls are only read: an idle key costs no row write.
                let rows = diesel::sql_query(
                    "WITH added AS (
                       INSERT INTO rate_limit_windows (api_key_id, window_start, calls)
                       SELECT k, $2, n FROM unnest($1::text[], $3::int[]) AS t(k, n)
                       WHERE n > 0
                       ON CONFLICT (api_key_id, window_start)
                       DO UPDATE SET calls = rate_limit_windows.calls + EXCLUDED.calls
                       RETURNING api_key_id, calls)
                     SELECT api_key_id, calls FROM added
                     UNION ALL
                     SELECT api_key_id, calls FROM rate_limit_windows
                     WHERE window_start = $2 AND api_key_id = ANY($1::text[])
                       AND api_key_id NOT IN (SELECT api_key_id FROM added)",
                )
                .bind::<Array<Text>, _>(&keys)
                .bind::<BigInt, _>(window)
                .bind::<Array<Integer>, _>(&counts)
                .load(pg)?;
                Ok(rows)
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.api_key_id, u32::try_from(row.calls).unwrap_or(0)))
            .collect())
    }

    /// Adds this instance's unflushed calls to the shared counts and learns
    /// what the other instances added, for each window kind; forgets
    /// counters of past windows.
    pub async fn flush(&self, now: DateTime<Utc>) -> Result<(), StoreError> {
        let _one_at_a_time = self.flushing.lock().await;
        for kind in [RateWindow::Hour, RateWindow::Minute] {
            self.flush_kind(kind, now).await?;
        }
        Ok(())
    }

    async fn flush_kind(&self, kind: RateWindow, now: DateTime<Utc>) -> Result<(), StoreError> {
        let (window, _) = kind.at(now)?;
        // Calls admitted late in a window that just ended are still added
        // to it: the next window weighs that count. They are taken out of
        // the slot as they are sent, so no other path sends them again.
        // (A slot newer than `now`, opened by a call that came after this
        // flush began, is not ended: it is left for the next flush.)
        let ended: Vec<(i64, String, u32)> = {
            let mut slots = self.slots()?;
            slots
                .iter_mut()
                .filter(|((_, k), slot)| *k == kind && slot.window < window && slot.pending > 0)
                .map(|((key, _), slot)| {
                    let calls = std::mem::take(&mut slot.pending);
                    (slot.window, row_key(key, kind), calls)
                })
                .collect()
        };
        for (old, name, calls) in ended {
            if let Err(error) = self.add(old, vec![(name, calls)]).await {
                tracing::warn!(%error, "calls of a past rate-limit window were not shared");
            }
        }
        let calls: Vec<(ApiKeyId, u32)> = {
            let mut slots = self.slots()?;
            slots.retain(|(_, k), slot| *k != kind || slot.window >= window);
            slots
                .iter_mut()
                .filter(|((_, k), slot)| *k == kind && slot.window == window)
                .map(|((key, _), slot)| {
                    let calls = std::mem::take(&mut slot.pending);
                    slot.in_flight = slot.in_flight.saturating_add(calls);
                    (*key, calls)
                })
                .collect()
        };
        if calls.is_empty() {
            return Ok(());
        }
        let flushed: HashMap<ApiKeyId, u32> = calls.iter().copied().collect();
        let named = calls.iter().map(|(k, n)| (row_key(k, kind), *n)).collect();
        let totals = match self.add(window, named).await {
            Ok(totals) => totals,
            Err(error) => {
                // Put the calls back, so the next flush counts them (if
                // this one did commit and only its answer was lost, they
                // are counted twice: over-counted, never lost).
                let mut slots = self.slots()?;
                for (key, n) in flushed {
                    if let Some(slot) = slots.get_mut(&(key, kind)) {
                        slot.in_flight = slot.in_flight.saturating_sub(n);
                        slot.pending = slot.pending.saturating_add(n);
                    }
                }
                return Err(error);
            }
        };
        let mut slots = self.slots()?;
        for (key, n) in flushed {
            if let Some(slot) = slots.get_mut(&(key, kind)) {
                slot.in_flight = slot.in_flight.saturating_sub(n);
                let total = totals.get(&row_key(&key, kind));
                if let Some(total) = total.filter(|_| slot.window == window) {
                    // A window's shared count only grows.
                    slot.shared = slot.shared.max(*total);
                }
            }
        }
        Ok(())
    }

    /// A counter's shared total in `window`, 0 when it has none.
    async fn total(&self, name: String, window: i64) -> Result<u32, StoreError> {
        let rows: Vec<Total> = self
            .store
            .db
            .run(move |conn| {
                Ok(diesel::sql_query(
                    "SELECT api_key_id, calls FROM rate_limit_windows
                     WHERE api_key_id = $1 AND window_start = $2",
                )
                .bind::<Text, _>(name)
                .bind::<BigInt, _>(window)
                .load(conn)?)
            })
            .await?;
        Ok(rows
            .first()
            .map_or(0, |row| u32::try_from(row.calls).unwrap_or(0)))
    }

    /// Deletes the table's rows of windows before the one before `now`'s,
    /// of both kinds (the window before still weighs on the sliding count).
    pub async fn purge_past_windows(&self, now: DateTime<Utc>) -> Result<usize, StoreError> {
        let (hour, _) = RateWindow::Hour.at(now)?;
        let (minute, _) = RateWindow::Minute.at(now)?;
        let (hour, minute) = (hour - 1, minute - 1);
        let minutes = format!("%{MINUTE_SUFFIX}");
        self.store
            .db
            .run(move |conn| {
                Ok(diesel::sql_query(
                    "DELETE FROM rate_limit_windows
                     WHERE (api_key_id NOT LIKE $3 AND window_start < $1)
                        OR (api_key_id LIKE $3 AND window_start < $2)",
                )
                .bind::<BigInt, _>(hour)
                .bind::<BigInt, _>(minute)
                .bind::<Text, _>(minutes)
                .execute(conn)?)
            })
            .await
    }
}

#[async_trait]
impl RateLimiter for SharedRateLimiter {
    async fn hit(
        &self,
        key: &ApiKeyId,
        kind: RateWindow,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<RateLimitStatus, StoreError> {
        let (window, _) = kind.at(now)?;
        let counter = (*key, kind);
        // A call whose `now` was read just before another opened the next
        // window counts in that window: a slot never goes back, or the
        // newer window's calls would be forgotten.
        // A window ended with calls not shared yet: share them before the
        // slot moves on, taking them out of the slot so that no
        // concurrent call or flush shares them again.
        let (window, ended) = {
            let mut slots = self.slots()?;
            let slot = slots.get_mut(&counter);
            let window = slot.as_ref().map_or(window, |s| s.window.max(window));
            let ended = slot
                .filter(|s| s.window < window && s.pending > 0)
                .map(|s| (s.window, std::mem::take(&mut s.pending)));
            (window, ended)
        };
        if let Some((old, calls)) = ended {
            if let Err(error) = self.add(old, vec![(row_key(key, kind), calls)]).await {
                if let Some(slot) = self.slots()?.get_mut(&counter) {
                    if slot.window == old {
                        slot.pending = slot.pending.saturating_add(calls);
                    }
                }
                return Err(error);
            }
        }
        let seen = || -> Result<bool, StoreError> {
            Ok(self
                .slots()?
                .get(&counter)
                .is_some_and(|s| s.window == window))
        };
        // The first call here in a window is counted in the database at
        // once, which also tells the shared total; the window before is
        // read then too. One call opens a window at a time, so that no
        // call is judged against a total that misses calls on their way.
        let lock = if seen()? {
            None
        } else {
            let mut locks = self
                .opening
                .lock()
                .map_err(|_| StoreError::Internal("rate limiter lock poisoned".into()))?;
            // Locks of windows no call is opening any more go.
            locks.retain(|_, lock| std::sync::Arc::strong_count(lock) > 1);
            Some(locks.entry(counter).or_default().clone())
        };
        let _opening = match &lock {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        let first = if seen()? {
            None
        } else {
            let name = row_key(key, kind);
            let totals = self.add(window, vec![(name.clone(), 1)]).await?;
            let previous = self.total(name.clone(), window - 1).await?;
            Some((totals.get(&name).copied().unwrap_or(1), previous))
        };
        let mut slots = self.slots()?;
        let slot = slots.entry(counter).or_insert(Slot::new(window, 0, 0));
        if slot.window < window {
            *slot = Slot::new(window, 0, 0);
        }
        match first {
            Some((shared, previous)) => {
                // Another call may have raced this one here; keep the larger total.
                slot.shared = slot.shared.max(shared);
                slot.previous = slot.previous.max(previous);
                // This call is in `shared` already: judge the count before it.
                kind.decide(slot.previous, shared.saturating_sub(1), limit, now)
            }
            None => {
                let status = kind.decide(slot.previous, slot.used(), limit, now)?;
                if status.allowed {
                    slot.pending += 1;
                }
                Ok(status)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdb::TestDb;
    use super::*;
    use reviewloop_domain::ObjectId;

    fn key(n: u8) -> ApiKeyId {
        ApiKeyId::new(ObjectId::from_parts(1, [n; 8]))
    }

    async fn allowed(limiter: &SharedRateLimiter, key: &ApiKeyId, limit: u32, n: usize) -> usize {
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let mut allowed = 0;
        for _ in 0..n {
            allowed += usize::from(
                limiter
                    .hit(key, RateWindow::Hour, limit, at)
                    .await
                    .unwrap()
                    .allowed,
            );
        }
        allowed
    }

    #[tokio::test]
    async fn instances_share_one_count_per_key_and_hour() {
        let Some(db) = TestDb::postgres() else { return };
        // Two limiters over two pools stand for two instances.
        let first = SharedRateLimiter::new(db.store());
        let second = SharedRateLimiter::new(SqlStore::new(db.db.clone()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert_eq!(allowed(&first, &key(1), 5, 3).await, 3);
        first.flush(at).await.unwrap();
        // The second instance's first call reads the shared count (4 with
        // it), so it admits one more and refuses the rest.
        assert_eq!(allowed(&second, &key(1), 5, 4).await, 2);
        let status = second.hit(&key(1), RateWindow::Hour, 5, at).await.unwrap();
        assert_eq!((status.allowed, status.remaining), (false, 0));
        second.flush(at).await.unwrap();
        first.flush(at).await.unwrap();
        assert!(
            !first
                .hit(&key(1), RateWindow::Hour, 5, at)
                .await
                .unwrap()
                .allowed,
            "the first instance learned of the second's calls (it had none to add)"
        );
        assert!(
            first
                .hit(&key(2), RateWindow::Hour, 5, at)
                .await
                .unwrap()
                .allowed,
            "keys are counted apart"
        );
        // Half way into the next hour, half of the last hour's five calls
        // still count (the sliding hour), read from the shared table.
        let next_hour = at + chrono::Duration::minutes(90);
        let status = second
            .hit(&key(1), RateWindow::Hour, 5, next_hour)
            .await
            .unwrap();
        assert_eq!((status.allowed, status.remaining), (true, 2));
        let fresh = SharedRateLimiter::new(SqlStore::new(db.db.clone()));
        let turn = fresh
            .hit(
                &key(1),
                RateWindow::Hour,
                5,
                at + chrono::Duration::hours(1),
            )
            .await
            .unwrap();
        assert!(
            !turn.allowed,
            "a new instance at the turn of the hour still counts the last one"
        );
        // The window before the current one stays; older ones are deleted.
        assert_eq!(first.purge_past_windows(next_hour).await.unwrap(), 0);
        assert!(
            first
                .purge_past_windows(at + chrono::Duration::hours(2))
                .await
                .unwrap()
                >= 1
        );
    }

    /// One instance holds a key's limit exactly however many calls race
    /// for it, flushes and all (it once admitted up to 84 of 50 when
    /// calls came while the window's first count was on its way, and 51
    /// when two flushes raced and the older total was taken last).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn one_instance_holds_the_limit_exactly_under_concurrency() {
        let Some(db) = TestDb::postgres() else { return };
        let limiter = std::sync::Arc::new(SharedRateLimiter::new(db.store()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for round in 0..15u8 {
            let key = key(100 + round);
            let calls: Vec<_> = (0..120)
                .map(|i| {
                    let limiter = limiter.clone();
                    tokio::spawn(async move {
                        if i % 15 == 0 {
                            limiter.flush(at).await.unwrap();
                        }
                        limiter
                            .hit(&key, RateWindow::Hour, 50, at)
                            .await
                            .unwrap()
                            .allowed
                    })
                })
                .collect();
            let mut admitted = 0;
            for call in calls {
                admitted += usize::from(call.await.unwrap());
            }
            assert_eq!(admitted, 50, "round {round}");
        }
    }

    /// At the turn of a window the calls not yet shared are added to the
    /// window that ended exactly once, however many calls race into the
    /// next one; and a call whose time was read just before the turn
    /// counts in the new window rather than taking the slot back (which
    /// forgot the new window's calls).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn calls_at_the_turn_of_a_window_are_shared_once_and_none_go_back() {
        let Some(db) = TestDb::postgres() else { return };
        let limiter = std::sync::Arc::new(SharedRateLimiter::new(db.store()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let (window, _) = RateWindow::Minute.at(at).unwrap();
        let k = key(60);
        for _ in 0..5 {
            assert!(
                limiter
                    .hit(&k, RateWindow::Minute, 1000, at)
                    .await
                    .unwrap()
                    .allowed
            );
        }
        let next = at + chrono::Duration::seconds(60);
        let racing: Vec<_> = (0..20)
            .map(|_| {
                let limiter = limiter.clone();
                tokio::spawn(async move {
                    limiter
                        .hit(&k, RateWindow::Minute, 1000, next)
                        .await
                        .unwrap()
                        .allowed
                })
            })
            .collect();
        for call in racing {
            assert!(call.await.unwrap());
        }
        limiter.flush(next).await.unwrap();
        let late = at + chrono::Duration::seconds(59);
        assert!(
            limiter
                .hit(&k, RateWindow::Minute, 1000, late)
                .await
                .unwrap()
                .allowed
        );
        limiter.flush(next).await.unwrap();
        let name = row_key(&k, RateWindow::Minute);
        assert_eq!(limiter.total(name.clone(), window).await.unwrap(), 5);
        assert_eq!(limiter.total(name, window + 1).await.unwrap(), 21);
    }

    /// The documented bound: between flushes each instance admits against
    /// the total it last read, so together they exceed the limit by at most
    /// what the others admitted since; after a flush nobody admits more.
    #[tokio::test]
    async fn overshoot_is_bounded_by_one_flush_interval_of_the_others() {
        let Some(db) = TestDb::postgres() else { return };
        let first = SharedRateLimiter::new(db.store());
        let second = SharedRateLimiter::new(SqlStore::new(db.db.clone()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let limit = 10;
        // Both meet the key before either flushes: each knows only itself
        // and the other's first call at most.
        let a = allowed(&first, &key(3), limit, 20).await;
        let b = allowed(&second, &key(3), limit, 20).await;
        assert_eq!(a, 10, "one instance alone never exceeds the limit");
        // The second read a shared total of 2 (the first's first call and
        // its own), so it admitted 9: the overshoot is exactly the first's
        // 9 unflushed calls.
        assert_eq!(b, 9);
        first.flush(at).await.unwrap();
        second.flush(at).await.unwrap();
        first.flush(at).await.unwrap();
        assert_eq!(allowed(&first, &key(3), limit, 5).await, 0);
        assert_eq!(allowed(&second, &key(3), limit, 5).await, 0);
    }

    /// Calls on their way to the database in a flush still count: flushing
    /// all the time while calls arrive admits exactly the limit.
    #[tokio::test]
    async fn flushing_while_calls_arrive_admits_exactly_the_limit() {
        let Some(db) = TestDb::postgres() else { return };
        let limiter = std::sync::Arc::new(SharedRateLimiter::new(db.store()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        limiter
            .hit(&key(5), RateWindow::Hour, 40, at)
            .await
            .unwrap();
        let flusher = {
            let limiter = limiter.clone();
            tokio::spawn(async move {
                for _ in 0..50 {
                    limiter.flush(at).await.unwrap();
                }
            })
        };
        let calls: Vec<_> = (0..100)
            .map(|_| {
                let limiter = limiter.clone();
                tokio::spawn(async move {
                    limiter
                        .hit(&key(5), RateWindow::Hour, 40, at)
                        .await
                        .unwrap()
                        .allowed
                })
            })
            .collect();
        let mut allowed = 1;
        for call in calls {
            allowed += usize::from(call.await.unwrap());
        }
        flusher.await.unwrap();
        assert_eq!(allowed, 40);
    }

    #[tokio::test]
    async fn concurrent_calls_on_one_instance_never_exceed_the_limit() {
        let Some(db) = TestDb::postgres() else { return };
        let limiter = std::sync::Arc::new(SharedRateLimiter::new(db.store()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let calls = (0..20).map(|_| {
            let limiter = limiter.clone();
            tokio::spawn(async move {
                limiter
                    .hit(&key(4), RateWindow::Hour, 7, at)
                    .await
                    .unwrap()
                    .allowed
            })
        });
        let mut allowed = 0;
        for call in calls.collect::<Vec<_>>() {
            allowed += usize::from(call.await.unwrap());
        }
        assert_eq!(allowed, 7);
    }

    #[tokio::test]
    async fn calls_not_yet_shared_when_an_hour_ends_still_weigh_on_the_next() {
        let Some(db) = TestDb::postgres() else { return };
        let limiter = SharedRateLimiter::new(db.store());
        let hour_end = DateTime::from_timestamp(1_800_000_000 + 3599, 0).unwrap();
        for _ in 0..3 {
            assert!(
                limiter
                    .hit(&key(8), RateWindow::Hour, 3, hour_end)
                    .await
                    .unwrap()
                    .allowed
            );
        }
        // No flush ran: two of the three are only in memory. At the turn of
        // the hour all three still count.
        let turn = hour_end + chrono::Duration::seconds(1);
        let status = limiter
            .hit(&key(8), RateWindow::Hour, 3, turn)
            .await
            .unwrap();
        assert!(!status.allowed, "{status:?}");
    }

    #[tokio::test]
    async fn minute_counts_are_shared_apart_from_the_hour_and_purged_by_their_own_window() {
        let Some(db) = TestDb::postgres() else { return };
        let first = SharedRateLimiter::new(db.store());
        let second = SharedRateLimiter::new(SqlStore::new(db.db.clone()));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let minute = RateWindow::Minute;
        for _ in 0..3 {
            assert!(first.hit(&key(6), minute, 4, at).await.unwrap().allowed);
        }
        assert!(
            first
                .hit(&key(6), RateWindow::Hour, 1, at)
                .await
                .unwrap()
                .allowed
        );
        first.flush(at).await.unwrap();
        // The other instance reads the shared minute count: one call left.
        let status = second.hit(&key(6), minute, 4, at).await.unwrap();
        assert_eq!((status.allowed, status.remaining), (true, 0));
        assert!(!second.hit(&key(6), minute, 4, at).await.unwrap().allowed);
        assert_eq!(status.reset_at.timestamp() % 60, 0);
        // Two minutes later the minute's rows go (the one before the
        // current minute would still count); the hour's stays.
        let later = at + chrono::Duration::seconds(121);
        assert_eq!(first.purge_past_windows(later).await.unwrap(), 1);
        let third = SharedRateLimiter::new(SqlStore::new(db.db.clone()));
        assert!(
            !third
                .hit(&key(6), RateWindow::Hour, 1, later)
                .await
                .unwrap()
                .allowed,
            "a new instance reads the hourly count, which survived the purge"
        );
        assert!(second.hit(&key(6), minute, 4, later).await.unwrap().allowed);
    }
}
