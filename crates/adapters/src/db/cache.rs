//! Copies of requests and loops as last read by id, kept in memory on
//! SQLite, where this process is the only writer: a poll of a request, or a
//! create in a loop, then costs no trip to the database.
//!
//! A copy is dropped when a write that changes its row commits. Each write
//! names what it changed as it runs ([`request_changed`], [`loop_changed`],
//! [`everything_changed`]: the same calls that, on PostgreSQL, announce the
//! change to the other instances), and whoever ran it drops those copies
//! right after the commit, before its caller is answered: the writer thread
//! after each group, [`super::Database::run`] after each call.
//!
//! A read that misses fills the copy only if no copy of its shard was
//! dropped while it read ([`Table::fill`]): a read that began before a
//! commit may return the old row, and must not put it back after the
//! commit dropped it.
//!
//! PostgreSQL keeps no copies: other instances write there too, and their
//! announcements arrive after their commits, so a copy could outlive a
//! change that a client has already been told about.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::{Arc, Mutex, PoisonError};

use reviewloop_domain::{Loop, LoopId, RequestId, ReviewRequest};

/// Shards per table: readers and the writer rarely wait for each other.
const SHARDS: usize = 16;
/// Requests kept at most (a few kilobytes each).
const REQUESTS: usize = 4096;
/// Loops kept at most.
const LOOPS: usize = 1024;

struct Shard<K, V> {
    /// Moves on every drop in this shard: a fill checks it did not move
    /// while the row was read.
    generation: u64,
    entries: HashMap<K, V>,
}

/// One table's copies, in shards by key.
pub(crate) struct Table<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
    per_shard: usize,
    hasher: RandomState,
}

/// Where a fill stands: the shard's generation when its read began.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket(u64);

impl<K: Hash + Eq + Copy, V: Clone> Table<K, V> {
    fn new(capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        generation: 0,
                        entries: HashMap::new(),
                    })
                })
                .collect(),
            per_shard: capacity.div_ceil(SHARDS),
            hasher: RandomState::new(),
        }
    }

    fn shard(&self, key: &K) -> std::sync::MutexGuard<'_, Shard<K, V>> {
        let index = (self.hasher.hash_one(key) as usize) % SHARDS;
        // Every change under the lock is one map operation: nothing is
        // left half-done by a panic elsewhere.
        self.shards[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The copy of `key`, or a ticket to fill it with what is read now.
    pub(crate) fn get(&self, key: &K) -> Result<V, Ticket> {
        let shard = self.shard(key);
        shard
            .entries
            .get(key)
            .cloned()
            .ok_or(Ticket(shard.generation))
    }

    /// Keeps `value`, read after `ticket` was taken, unless a write
    /// dropped a copy of its shard since.
    pub(crate) fn fill(&self, key: K, value: V, ticket: Ticket) {
        let mut shard = self.shard(&key);
        if shard.generation != ticket.0 {
            return;
        }
        if shard.entries.len() >= self.per_shard && !shard.entries.contains_key(&key) {
            // Full: make room by dropping whichever copy comes first.
            if let Some(old) = shard.entries.keys().next().copied() {
                shard.entries.remove(&old);
            }
        }
        shard.entries.insert(key, value);
    }

    fn forget(&self, key: &K) {
        let mut shard = self.shard(key);
        shard.generation += 1;
        shard.entries.remove(key);
    }

    fn forget_all(&self) {
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            shard.generation += 1;
            shard.entries.clear();
        }
    }
}

/// The copies of one database.
pub(crate) struct ReadCache {
    pub(crate) requests: Table<RequestId, Arc<ReviewRequest>>,
    pub(crate) loops: Table<LoopId, Arc<Loop>>,
}

impl ReadCache {
    pub(crate) fn new() -> Self {
        Self {
            requests: Table::new(REQUESTS),
            loops: Table::new(LOOPS),
        }
    }

    /// Drops the copies of what the writes on this thread changed since
    /// the last call. Call it after the writes committed (or failed).
    pub(crate) fn settle(&self) {
        let changed = CHANGED.with(|c| std::mem::take(&mut *c.borrow_mut()));
        if changed.everything {
            self.requests.forget_all();
            self.loops.forget_all();
            return;
        }
        for id in &changed.requests {
            self.requests.forget(id);
        }
        for id in &changed.loops {
            self.loops.forget(id);
        }
    }

    /// Settles when the guard goes out of scope: after the work it
    /// guards, and on the way out of a panic too.
    pub(crate) fn settle_on_drop(&self) -> SettleOnDrop<'_> {
        SettleOnDrop(self)
    }
}

/// See [`ReadCache::settle_on_drop`].
pub(crate) struct SettleOnDrop<'a>(&'a ReadCache);

impl Drop for SettleOnDrop<'_> {
    fn drop(&mut self) {
        self.0.settle();
    }
}

/// `key`'s copy in `table`, or else what `read` finds, kept there as its
/// copy; with no table (PostgreSQL), always what `read` finds.
pub(crate) async fn copy_or_read<K, T, F, Fut>(
    table: Option<&Table<K, Arc<T>>>,
    key: K,
    read: F,
) -> Result<Option<Arc<T>>, reviewloop_ports::StoreError>
where
    K: Hash + Eq + Copy + std::fmt::Debug,
    T: PartialEq + std::fmt::Debug,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, reviewloop_ports::StoreError>>,
{
    let Some(table) = table else {
        return Ok(read().await?.map(Arc::new));
    };
    match table.get(&key) {
        Ok(copy) => {
            #[cfg(debug_assertions)]
            check(table, key, &copy, read).await;
            Ok(Some(copy))
        }
        Err(ticket) => {
            let fresh = read().await?.map(Arc::new);
            if let Some(value) = &fresh {
                table.fill(key, value.clone(), ticket);
            }
            Ok(fresh)
        }
    }
}

/// In builds with debug assertions (every test run), checks a copy just
/// served against the database: a write that changed the row without
/// saying so ([`request_changed`], [`loop_changed`]) left it stale, and
/// that is a bug worth a panic. A copy may differ for a moment, while a
/// write that committed has not yet dropped it; only one still served
/// after that moment, and still unlike the row, counts.
#[cfg(debug_assertions)]
async fn check<K, T, F, Fut>(table: &Table<K, Arc<T>>, key: K, copy: &Arc<T>, read: F)
where
    K: Hash + Eq + Copy + std::fmt::Debug,
    T: PartialEq + std::fmt::Debug,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, reviewloop_ports::StoreError>>,
{
    let differs = |fresh: &Option<T>| fresh.as_ref() != Some(&**copy);
    // The check's reads are not the request's: they count elsewhere.
    let read = || {
        reviewloop_ports::tally::counting(
            Arc::new(reviewloop_ports::tally::Tally::default()),
            read(),
        )
    };
    match read().await {
        Ok(fresh) if differs(&fresh) => {}
        _ => return,
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let still_served = table.get(&key).is_ok_and(|now| Arc::ptr_eq(&now, copy));
    if let (true, Ok(fresh)) = (still_served, read().await) {
        assert!(
            !differs(&fresh),
            "the in-memory copy of {key:?} is stale: a write changed its row without dropping it\ncopy: {copy:?}\nrow: {fresh:?}"
        );
    }
}

/// What the writes on this thread changed and nobody settled yet.
#[derive(Default)]
struct Changed {
    requests: Vec<RequestId>,
    loops: Vec<LoopId>,
    everything: bool,
}

thread_local! {
    static CHANGED: RefCell<Changed> = RefCell::new(Changed::default());
}

/// Records that the request `id` (its row or its broadcast entries)
/// changed on this thread's connection.
pub(super) fn request_changed(id: &str) {
    match id.parse() {
        Ok(id) => CHANGED.with(|c| c.borrow_mut().requests.push(id)),
        // Not an id this store wrote: drop everything rather than guess.
        Err(_) => everything_changed(),
    }
}

/// Records that the loop `id` or its members changed.
pub(super) fn loop_changed(id: &str) {
    match id.parse() {
        Ok(id) => CHANGED.with(|c| c.borrow_mut().loops.push(id)),
        Err(_) => everything_changed(),
    }
}

/// Records that requests and loops changed that nobody listed.
pub(super) fn everything_changed() {
    CHANGED.with(|c| c.borrow_mut().everything = true);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table<u32, &'static str> {
        Table::new(64)
    }

    #[test]
    fn a_read_that_began_before_a_drop_is_not_kept() {
        let t = table();
        let ticket = t.get(&1).unwrap_err();
        // A write commits and drops the copy while the read is under way.
        t.forget(&1);
        t.fill(1, "old", ticket);
        assert!(t.get(&1).is_err(), "the old row was put back");
        let ticket = t.get(&1).unwrap_err();
        t.fill(1, "new", ticket);
        assert_eq!(t.get(&1).ok(), Some("new"));
    }

    #[test]
    fn a_drop_of_everything_stops_every_fill_under_way() {
        let t = table();
        let tickets: Vec<_> = (0..32).map(|k| (k, t.get(&k).unwrap_err())).collect();
        t.forget_all();
        for (k, ticket) in tickets {
            t.fill(k, "old", ticket);
            assert!(t.get(&k).is_err());
        }
    }

    #[test]
    fn a_full_table_stays_within_its_size() {
        let t = table();
        for k in 0..1000 {
            let ticket = t.get(&k).unwrap_err();
            t.fill(k, "v", ticket);
        }
        let kept: usize = t
            .shards
            .iter()
            .map(|s| s.lock().unwrap().entries.len())
            .sum();
        assert!(kept <= 64, "{kept} copies kept");
        assert!(kept > 0);
    }

    #[test]
    fn settling_drops_what_this_thread_changed() {
        let cache = ReadCache::new();
        let id: RequestId = "0123456789abcdef01234567".parse().unwrap();
        let other: RequestId = "0123456789abcdef01234568".parse().unwrap();
        for key in [id, other] {
            let ticket = cache.requests.get(&key).unwrap_err();
            cache.requests.fill(key, Arc::new(sample(key)), ticket);
        }
        request_changed(&id.to_string());
        cache.settle();
        assert!(cache.requests.get(&id).is_err());
        assert!(cache.requests.get(&other).is_ok(), "only what changed goes");
        everything_changed();
        cache.settle();
        assert!(cache.requests.get(&other).is_err());
    }

    fn sample(id: RequestId) -> ReviewRequest {
        use crate::db::testdb::fixtures::{at, oid, request};
        use reviewloop_domain::NewLoop;
        use reviewloop_domain::{Email, InviteCode, Member, UserId};
        let loop_id = LoopId::new(oid(9));
        let creator = Member::creator(
            loop_id,
            UserId::new(oid(1)),
            Email::parse("u1@x.io").unwrap(),
            at(0),
        );
        let fields = NewLoop::parse(Some("Reviewers"), None, None).unwrap();
        let lp = Loop::create(
            loop_id,
            fields,
            creator,
            InviteCode::parse("ABCDEF").unwrap(),
            at(0),
        );
        let mut r = request(&lp, 1, "high", 0);
        r = ReviewRequest::restore({
            let mut record = (*r).clone();
            record.id = id;
            record
        });
        r
    }
}
