//! SQLite's one writer, with group commit.
//!
//! SQLite lets one transaction write at a time; writers on several pooled
//! connections queue on its file lock and sleep in its busy handler. Here
//! every write goes to one thread that owns one connection instead. It takes
//! whatever writes are waiting (up to [`MAX_GROUP`]), runs each inside its
//! own savepoint of one `BEGIN IMMEDIATE` transaction, commits once, and
//! only then answers every caller. So:
//!
//! - nobody is answered before the commit that holds their change;
//! - a change that fails (a conflict, a constraint, a panic) is rolled back
//!   to its savepoint and fails alone; the others commit;
//! - if the commit itself fails, nothing of the group landed and every
//!   caller gets the error.
//!
//! Reads do not come here: they use the pool's connections, which WAL lets
//! read while this thread writes.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use reviewloop_ports::tally::Tally;
use reviewloop_ports::StoreError;
use tokio::sync::oneshot;

use super::cache::ReadCache;
use super::{statements, Conn, DbConnection, DbError};

/// Writes committed together at most.
const MAX_GROUP: usize = 256;
/// Writes waiting at most; beyond, a write is refused at once with 503
/// rather than queued without bound.
const MAX_QUEUE: usize = 10_000;

type Panic = Box<dyn Any + Send>;

/// What became of one job's change inside the group.
enum Ran {
    /// Done; kept in the group's transaction.
    Kept,
    /// Failed or panicked; rolled back to its savepoint, the group goes on.
    Undone,
    /// The transaction is in a state nobody can trust (a savepoint could not
    /// be rolled back): the whole group is rolled back.
    Broken,
}

trait Job: Send {
    /// Whether the caller stopped waiting (it timed out or went away):
    /// such a job is not run at all.
    fn abandoned(&self) -> bool;
    /// Runs the change inside a savepoint of the open transaction.
    fn run(&mut self, conn: &mut Conn) -> Ran;
    /// Answers the caller once the group's fate is known: `commit` is the
    /// error that sank the whole group, if one did.
    fn finish(self: Box<Self>, commit: Option<&StoreError>);
}

type Outcome<T> = Result<Result<T, StoreError>, Panic>;

struct TypedJob<T, F> {
    change: Option<F>,
    tally: Option<Arc<Tally>>,
    outcome: Option<Outcome<T>>,
    reply: oneshot::Sender<Outcome<T>>,
}

fn depth(conn: &mut Conn) -> Option<u32> {
    let DbConnection::Sqlite(sqlite) = conn else {
        return None;
    };
    AnsiTransactionManager::transaction_manager_status_mut(sqlite)
        .transaction_depth()
        .ok()
        .flatten()
        .map(|d| d.get())
}

impl<T, F> Job for TypedJob<T, F>
where
    T: Send + 'static,
    F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
{
    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    fn run(&mut self, conn: &mut Conn) -> Ran {
        let Some(change) = self.change.take() else {
            return Ran::Undone;
        };
        // A savepoint, through Diesel's transaction manager (it is at depth
        // 1 already, so this is `SAVEPOINT`, and a nested `transaction()`
        // inside the change still works).
        if let Err(error) =
            <DbConnection as TransactionManager<DbConnection>>::begin_transaction(conn)
        {
            self.outcome = Some(Ok(Err(DbError::from(error).into())));
            return Ran::Broken;
        }
        let ran = statements::counted(self.tally.as_deref(), || {
            catch_unwind(AssertUnwindSafe(|| change(conn)))
        });
        // A change that returns with nested savepoints still open is a bug
        // (or a panic cut it short): it does not count as done.
        let nested = depth(conn).is_some_and(|d| d > 2);
        let kept = matches!(ran, Ok(Ok(_))) && !nested;
        self.outcome = Some(match ran {
            Ok(Ok(_)) if nested => Ok(Err(StoreError::Internal(
                "a write left a nested transaction open".into(),
            ))),
            Ok(result) => Ok(result.map_err(StoreError::from)),
            Err(panic) => Err(panic),
        });
        // Undo nested savepoints down to ours (undoing ours would undo
        // them anyway; this keeps Diesel's count of them right).
        while depth(conn).is_some_and(|d| d > 2) {
            if <DbConnection as TransactionManager<DbConnection>>::rollback_transaction(conn)
                .is_err()
            {
                return Ran::Broken;
            }
        }
        if depth(conn) != Some(2) {
            // SQLite ended the whole transaction itself (I/O error, full
            // disk): nothing of the group can be trusted.
            return Ran::Broken;
        }
        let end = if kept {
            <DbConnection as TransactionManager<DbConnection>>::commit_transaction(conn)
        } else {
            <DbConnection as TransactionManager<DbConnection>>::rollback_transaction(conn)
        };
        match (end, kept) {
            (Ok(()), true) => Ran::Kept,
            (Ok(()), false) => Ran::Undone,
            (Err(error), _) => {
                if kept {
                    self.outcome = Some(Ok(Err(DbError::from(error).into())));
                }
                Ran::Broken
            }
        }
    }

    fn finish(self: Box<Self>, commit: Option<&StoreError>) {
        let outcome = match (self.outcome, commit) {
            // A change that failed on its own says why; one that worked
            // (or never ran) shares the group's failure.
            (Some(Ok(Err(own))), _) => Ok(Err(own)),
            (Some(Err(panic)), _) => Err(panic),
            (_, Some(error)) => Ok(Err(error.clone())),
            (Some(outcome), None) => outcome,
            (None, None) => Ok(Err(StoreError::Internal("write was not run".into()))),
        };
        // The caller may have gone away (its request was cancelled); the
        // change is committed regardless, as with any write.
        let _ = self.reply.send(outcome);
    }
}

/// The handle callers send writes through; the thread ends when the last
/// handle is dropped.
#[derive(Clone)]
pub(super) struct GroupWriter {
    jobs: mpsc::SyncSender<Box<dyn Job>>,
    /// How long a caller waits for its commit before it gives up (503).
    wait: std::time::Duration,
}

impl GroupWriter {
    /// Starts the writer thread; `connect` opens (and, after a failure that
    /// leaves it unusable, reopens) its connection.
    pub(super) fn start(
        connect: impl Fn() -> Result<DbConnection, String> + Send + 'static,
        wait: std::time::Duration,
        cache: Arc<ReadCache>,
    ) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::sync_channel::<Box<dyn Job>>(MAX_QUEUE);
        std::thread::Builder::new()
            .name("reviewloop-sqlite-writer".into())
            .spawn(move || {
                // A panic outside the jobs (they are caught one by one) must
                // not end SQLite writes for the rest of the process.
                while catch_unwind(AssertUnwindSafe(|| write_groups(&queue, &connect, &cache)))
                    .is_err()
                {
                    tracing::error!("the SQLite writer panicked; restarting it");
                }
            })?;
        Ok(Self { jobs, wait })
    }

    /// Runs `change` in the next group and answers after its commit. A
    /// panic inside `change` is resumed here, in the caller.
    pub(super) async fn write<T, F>(&self, change: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = TypedJob {
            change: Some(change),
            tally: reviewloop_ports::tally::current(),
            outcome: None,
            reply,
        };
        self.jobs.try_send(Box::new(job)).map_err(|e| match e {
            mpsc::TrySendError::Full(_) => {
                StoreError::Unavailable("too many writes are waiting".into())
            }
            mpsc::TrySendError::Disconnected(_) => {
                StoreError::Unavailable("the database writer has stopped".into())
            }
        })?;
        match tokio::time::timeout(self.wait, answer).await {
            Ok(Ok(Ok(result))) => result,
            Ok(Ok(Err(panic))) => std::panic::resume_unwind(panic),
            Ok(Err(_)) => Err(StoreError::Unavailable(
                "the database writer has stopped".into(),
            )),
            // Dropping `answer` marks the job abandoned: if it has not run
            // yet, it will not.
            Err(_) => Err(StoreError::Unavailable(
                "the database is too busy to take this write in time".into(),
            )),
        }
    }
}

fn write_groups(
    queue: &mpsc::Receiver<Box<dyn Job>>,
    connect: &dyn Fn() -> Result<DbConnection, String>,
    cache: &ReadCache,
) {
    let mut conn: Option<DbConnection> = None;
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        group.retain(|job| !job.abandoned());
        if group.is_empty() {
            continue;
        }
        let c = match conn.take().map_or_else(connect, Ok) {
            Ok(c) => conn.insert(c),
            Err(why) => {
                let error = StoreError::Unavailable(format!("cannot open the database: {why}"));
                for job in group {
                    job.finish(Some(&error));
                }
                continue;
            }
        };
        // Whatever the group changed is no longer what a copy holds (and
        // if it did not commit, dropping copies costs only a read). This
        // comes before any caller is answered, so a caller that reads
        // what it just wrote reads it from the database; and the guard
        // does it even if the commit panics after it landed.
        let committed = {
            let _settle = cache.settle_on_drop();
            commit_group(c, &mut group)
        };
        if let Err(error) = committed {
            // Nothing of the group landed; the connection may be in any
            // state, so the next group gets a fresh one.
            conn = None;
            for job in group {
                job.finish(Some(&error));
            }
            continue;
        }
        for job in group {
            job.finish(None);
        }
    }
}

/// Runs every job of `group` in one transaction and commits it; an error
/// means the group's transaction did not commit.
fn commit_group(conn: &mut DbConnection, group: &mut [Box<dyn Job>]) -> Result<(), StoreError> {
    let DbConnection::Sqlite(sqlite) = conn else {
        return Err(StoreError::Internal(
            "the group writer is for SQLite".into(),
        ));
    };
    AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN IMMEDIATE")
        .map_err(|e| StoreError::from(DbError::from(e)))?;
    for job in group.iter_mut() {
        if let Ran::Broken = job.run(conn) {
            rollback_all(conn);
            // The others did nothing wrong: theirs is worth retrying.
            return Err(StoreError::Unavailable(
                "a write failed the transaction it shared; try again".into(),
            ));
        }
    }
    <DbConnection as TransactionManager<DbConnection>>::commit_transaction(conn).map_err(|e| {
        rollback_all(conn);
        StoreError::from(DbError::from(e))
    })
}

fn rollback_all(conn: &mut DbConnection) {
    while depth(conn).is_some() {
        if <DbConnection as TransactionManager<DbConnection>>::rollback_transaction(conn).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdb::TestDb;
    use super::*;
    use diesel::RunQueryDsl;

    fn insert(conn: &mut Conn, start: i64) -> Result<(), DbError> {
        diesel::sql_query(format!(
            "INSERT INTO rate_limit_windows (api_key_id, window_start, calls) VALUES ('k', {start}, 1)"
        ))
        .execute(conn)?;
        Ok(())
    }

    fn stored(conn: &mut Conn) -> Result<Vec<i64>, DbError> {
        #[derive(diesel::QueryableByName)]
        struct Start {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            window_start: i64,
        }
        let rows: Vec<Start> =
            diesel::sql_query("SELECT window_start FROM rate_limit_windows ORDER BY window_start")
                .load(conn)?;
        Ok(rows.into_iter().map(|r| r.window_start).collect())
    }

    /// Many writers at once land in shared groups; the ones that fail (a
    /// duplicate key, a panic) fail alone, and every answer comes after a
    /// commit: a read on another connection right after it sees the row.
    #[tokio::test]
    async fn concurrent_writes_commit_together_and_fail_alone() {
        let tdb = TestDb::sqlite();
        let db = Arc::new(tdb.db.clone());
        let writes = (0..200i64).map(|n| {
            let db = db.clone();
            tokio::spawn(async move {
                let result = db
                    .write(move |conn| {
                        insert(conn, n)?;
                        match n % 50 {
                            // Breaks the primary key: this change alone fails.
                            7 => insert(conn, n),
                            13 => panic!("a bug in write {n}"),
                            _ => Ok(()),
                        }
                    })
                    .await;
                if result.is_ok() {
                    let seen = db.run(stored).await.unwrap();
                    assert!(seen.contains(&n), "answered before its commit: {n}");
                }
                result
            })
        });
        let mut ok = 0;
        let (mut failed, mut panicked) = (0, 0);
        for write in writes.collect::<Vec<_>>() {
            match write.await {
                Ok(Ok(())) => ok += 1,
                Ok(Err(StoreError::Conflict(_))) => failed += 1,
                Ok(Err(other)) => panic!("unexpected {other:?}"),
                Err(join) => {
                    assert!(join.is_panic(), "the panic reaches its caller");
                    panicked += 1;
                }
            }
        }
        assert_eq!((ok, failed, panicked), (192, 4, 4));
        let rows = db.run(stored).await.unwrap();
        assert_eq!(
            rows.len(),
            192,
            "exactly the changes that worked are stored"
        );
        assert!(!rows.iter().any(|n| n % 50 == 7 || n % 50 == 13));
        // The writer is still good for more.
        db.write(|conn| insert(conn, 1_000)).await.unwrap();
    }
}
