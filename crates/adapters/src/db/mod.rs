//! The Diesel store: connection pool, migrations, and the implementations
//! of the storage ports.
//!
//! Diesel is synchronous, so every call runs on tokio's blocking pool and
//! takes its pooled connection there, never on an async worker thread.

mod accounts;
mod answer_links;
mod audit;
mod backup;
mod cache;
mod changes;
mod checkpoint;
mod convert;
mod error;
mod fixed;
mod idempotency;
mod loops;
mod models;
mod notices;
mod operations;
mod outbox;
mod people;
mod push;
mod rate_limits;
mod receipts;
mod requests;
mod reviews;
pub mod schema;
mod set_based;
mod slack;
mod statements;
mod templates;
mod webhooks;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::r2d2::{ManageConnection, Pool, R2D2Connection};
use diesel::{Connection, PgConnection, SqliteConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use reviewloop_ports::StoreError;

pub use backup::{backup, restore, BackupError, Restored};
pub use changes::{Change, ChangeListener};
pub(crate) use error::DbError;
pub use rate_limits::{SharedRateLimiter, FLUSH_EVERY as RATE_LIMIT_FLUSH_EVERY};

/// One connection of either backend. Queries are written once against
/// this type; Diesel turns them into each backend's SQL.
#[derive(diesel::MultiConnection)]
pub enum DbConnection {
    /// The embedded default.
    Sqlite(SqliteConnection),
    /// For several instances sharing one database.
    Postgres(PgConnection),
}

/// The connection type every query is written against.
pub(crate) type Conn = DbConnection;

/// `native!(conn, |c| body)` runs `body` with `c` bound to the connection
/// of the backend in use, so its queries are built for that backend
/// directly; the body is compiled once per backend. Through the
/// multi-backend connection, every execution of a statement builds its SQL
/// text again and walks it to see whether it may be cached (Diesel's
/// `SerializedQuery`), which costs more than running the cached statement
/// itself: the queries of the hot paths go through here.
macro_rules! native {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::db::DbConnection::Sqlite($c) => $body,
            $crate::db::DbConnection::Postgres($c) => $body,
        }
    };
}
pub(crate) use native;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// How the connection pool is sized and how long a caller waits for a
/// connection before its call fails with 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolOptions {
    /// Connections at most; `None` picks the backend's default (8 on
    /// SQLite, 16 on PostgreSQL).
    pub max_size: Option<u32>,
    /// The longest wait for a free connection.
    pub connection_timeout: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_size: None,
            connection_timeout: Duration::from_secs(4),
        }
    }
}

const SQLITE_POOL_SIZE: u32 = 8;
const POSTGRES_POOL_SIZE: u32 = 16;
/// Settings every SQLite connection needs; Diesel sets none of them itself.
/// `temp_store = MEMORY` keeps the statement journals of the group
/// writer's savepoints in memory instead of a temporary file created and
/// deleted for each.
const SQLITE_PRAGMAS: &str = "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; \
     PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;";

/// Why the database could not be opened or migrated.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// The URL names no backend this build supports.
    #[error("unsupported database URL '{0}': use sqlite://PATH or postgres://USER@HOST/DB")]
    UnsupportedUrl(String),
    /// The database could not be opened.
    #[error("cannot open database: {0}")]
    Open(String),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migration(String),
    /// Another process already serves this SQLite database.
    #[error(
        "another reviewloop already serves {0}: an SQLite database takes one instance \
         (use PostgreSQL for several, see docs/operations.md)"
    )]
    InUse(String),
}

/// This process's claim to serve an SQLite database alone; while it is
/// held, another `reviewloop serve` on the same file refuses to start.
#[derive(Debug)]
pub struct SoleInstance {
    _lock: std::fs::File,
}

/// A database URL fit to show: its password replaced by `***`. Every
/// message that names a database URL shows it through this.
pub fn redacted_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        // Unparsable: show only the scheme, in case a password is in there.
        return match url.split_once("://") {
            Some((scheme, _)) => format!("{scheme}://…"),
            None => "(unreadable URL)".to_owned(),
        };
    };
    if parsed.password().is_some() {
        // Fails only for URLs that cannot have a password at all.
        let _ = parsed.set_password(Some("***"));
    }
    // libpq also takes `?password=` (and `sslpassword=`) in the query.
    if parsed.query_pairs().any(|(k, _)| k.contains("password")) {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                let v = if k.contains("password") {
                    "***".into()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

/// On SQLite, claims the database for this process alone (`None` on
/// PostgreSQL, which any number of instances share). One instance is
/// all SQLite supports here: instances cannot tell each other what
/// they changed, so each would keep serving its own copies of
/// requests and loops, count rate limits alone, and sweep alone. The
/// claim is a lock on a file beside the database (`PATH.lock`), which
/// the system drops when the process ends, however it ends.
pub fn claim_sole_instance(url: &str) -> Result<Option<SoleInstance>, DatabaseError> {
    let Target::Sqlite(path) = Target::parse(url)? else {
        return Ok(None);
    };
    let at = lock_path(&path).map_err(|e| DatabaseError::Open(format!("{path}: {e}")))?;
    let shown = at.display().to_string();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&at)
        .map_err(|e| DatabaseError::Open(format!("{shown}: {e}")))?;
    match lock.try_lock() {
        Ok(()) => Ok(Some(SoleInstance { _lock: lock })),
        Err(std::fs::TryLockError::WouldBlock) => Err(DatabaseError::InUse(path)),
        Err(std::fs::TryLockError::Error(e)) => Err(DatabaseError::Open(format!("{shown}: {e}"))),
    }
}

/// The file an SQLite path names: the path itself, or a `file:` URI's
/// path without its query.
fn sqlite_file(path: &str) -> &std::path::Path {
    let file = match path.strip_prefix("file:") {
        Some(uri) => uri.split(['?', '#']).next().unwrap_or(uri),
        None => path,
    };
    std::path::Path::new(file)
}

/// The lock file of the SQLite database at `path`: beside the file SQLite
/// opens, named after it, whichever way the URL spells it (a `file:` URI
/// with a query, a relative path, a directory reached through a link), so
/// that two spellings of one database take one lock.
fn lock_path(path: &str) -> std::io::Result<std::path::PathBuf> {
    let file = sqlite_file(path);
    let name = file
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.canonicalize()?,
        _ => std::env::current_dir()?,
    };
    let mut lock = name.to_os_string();
    lock.push(".lock");
    Ok(dir.join(lock))
}

/// Which backend a URL names, chosen by its scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Sqlite(String),
    Postgres(String),
}

impl Target {
    fn parse(url: &str) -> Result<Self, DatabaseError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"));
        // An in-memory database would be a different database on every
        // pooled connection; refuse it rather than lose data between calls.
        match path {
            Some(path)
                if !path.is_empty()
                    && !path.contains(":memory:")
                    && !path.contains("mode=memory") =>
            {
                Ok(Self::Sqlite(path.to_owned()))
            }
            _ => Err(DatabaseError::UnsupportedUrl(redacted_url(url))),
        }
    }
}

/// Opens connections of the backend the URL names (Diesel's derived
/// `establish` would try each backend in turn instead).
#[derive(Debug)]
struct Manager(Target);

impl ManageConnection for Manager {
    type Connection = DbConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<DbConnection, Self::Error> {
        match &self.0 {
            Target::Sqlite(path) => {
                let mut conn = SqliteConnection::establish(path)
                    .map_err(diesel::r2d2::Error::ConnectionError)?;
                conn.batch_execute(SQLITE_PRAGMAS)
                    .map_err(diesel::r2d2::Error::QueryError)?;
                conn.set_instrumentation(statements::StatementCounter);
                Ok(DbConnection::Sqlite(conn))
            }
            Target::Postgres(url) => {
                let mut conn = PgConnection::establish(url).map_err(|e| {
                    // Unreachable: connections opened before may be dead.
                    error::suspect_connections();
                    diesel::r2d2::Error::ConnectionError(e)
                })?;
                conn.set_instrumentation(statements::StatementCounter);
                Ok(DbConnection::Postgres(conn))
            }
        }
    }

    // Asked at every checkout, but a statement is run only while
    // connections are suspect (one was found gone: the database went away
    // and may be back); otherwise a statement per checkout would cost more
    // than the rare dead connection, which fails its own call.
    fn is_valid(&self, conn: &mut DbConnection) -> Result<(), Self::Error> {
        if !error::connections_suspect() {
            return Ok(());
        }
        conn.batch_execute("SELECT 1")
            .map_err(diesel::r2d2::Error::QueryError)
    }

    /// Asked as a connection goes back to the pool: one still inside a
    /// transaction, with its transaction manager in error, or handed back
    /// by a thread that is unwinding from a panic is dropped, never reused.
    fn has_broken(&self, conn: &mut DbConnection) -> bool {
        std::thread::panicking() || conn.is_broken()
    }
}

fn migrate<C: MigrationHarness<B>, B: diesel::backend::Backend>(
    conn: &mut C,
    migrations: EmbeddedMigrations,
) -> Result<Vec<String>, DatabaseError> {
    Ok(conn
        .run_pending_migrations(migrations)
        .map_err(|e| DatabaseError::Migration(e.to_string()))?
        .iter()
        .map(ToString::to_string)
        .collect())
}

/// Reports each checkout's wait to the meter.
struct PoolWaits(Arc<dyn reviewloop_ports::Meter>);

impl std::fmt::Debug for PoolWaits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PoolWaits")
    }
}

impl diesel::r2d2::HandleEvent for PoolWaits {
    fn handle_checkout(&self, event: diesel::r2d2::event::CheckoutEvent) {
        self.0.pool_wait(event.duration().as_secs_f64());
    }
}

/// An open, migrated database with its connection pool.
#[derive(Clone)]
pub struct Database {
    pool: Pool<Manager>,
    postgres: bool,
    target: Target,
    /// SQLite's one writer (group commit); `None` on PostgreSQL, where
    /// writers run side by side on pooled connections.
    writer: Option<writer::GroupWriter>,
    /// Copies of requests and loops read by id; SQLite only, where this
    /// process is the only writer (see `cache`).
    cache: Option<Arc<cache::ReadCache>>,
    /// SQLite's WAL checkpoints, off the writer thread; stops with the
    /// last clone.
    _checkpointer: Option<Arc<checkpoint::Checkpointer>>,
}

/// What one process serving an SQLite file runs beside its pool: the
/// group writer, the copies it keeps up to date, and the WAL checkpoints.
fn sqlite_workers(
    target: &Target,
    wait: Duration,
) -> Result<
    (
        writer::GroupWriter,
        Arc<cache::ReadCache>,
        Arc<checkpoint::Checkpointer>,
    ),
    DatabaseError,
> {
    let cache = Arc::new(cache::ReadCache::new());
    let manager = Manager(target.clone());
    let connect = move || {
        let mut conn = manager.connect().map_err(|e| e.to_string())?;
        // The checkpoint thread copies the WAL back; the writer only does
        // if that thread falls far behind.
        conn.batch_execute(&format!(
            "PRAGMA wal_autocheckpoint = {}",
            checkpoint::WRITER_CHECKPOINT_PAGES
        ))
        .map_err(|e| e.to_string())?;
        Ok(conn)
    };
    let writer = writer::GroupWriter::start(connect, wait, cache.clone())
        .map_err(|e| DatabaseError::Open(e.to_string()))?;
    let manager = Manager(target.clone());
    let checkpointer =
        checkpoint::Checkpointer::start(move || manager.connect().map_err(|e| e.to_string()))
            .map_err(|e| DatabaseError::Open(e.to_string()))?;
    Ok((writer, cache, Arc::new(checkpointer)))
}

impl Database {
    /// Opens the database at `url` (`sqlite://PATH` or `postgres://...`),
    /// creating an SQLite file if needed, and runs pending migrations.
    /// Returns the migrations applied.
    pub fn open(url: &str) -> Result<(Self, Vec<String>), DatabaseError> {
        Self::open_with(url, PoolOptions::default())
    }

    /// [`Database::open`] with a pool sized and timed by `options`.
    pub fn open_with(
        url: &str,
        options: PoolOptions,
    ) -> Result<(Self, Vec<String>), DatabaseError> {
        Self::open_measured(url, options, Arc::new(reviewloop_ports::NoMeter))
    }

    /// [`Database::open_with`], telling `meter` how long each caller
    /// waited for a pooled connection.
    pub fn open_measured(
        url: &str,
        options: PoolOptions,
        meter: Arc<dyn reviewloop_ports::Meter>,
    ) -> Result<(Self, Vec<String>), DatabaseError> {
        let target = Target::parse(url)?;
        let open = |e: diesel::ConnectionError| DatabaseError::Open(e.to_string());
        let applied = match &target {
            Target::Sqlite(path) => {
                let mut conn = SqliteConnection::establish(path).map_err(open)?;
                // WAL lets readers go on while one writer writes; it is a
                // property of the file, so setting it once is enough.
                conn.batch_execute("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;")
                    .map_err(|e| DatabaseError::Open(e.to_string()))?;
                migrate(&mut conn, SQLITE_MIGRATIONS)?
            }
            Target::Postgres(url) => {
                let mut conn = PgConnection::establish(url).map_err(open)?;
                // Instances started together (a compose file, a deploy
                // that starts them all) would run one migration at once,
                // and all but one would fail. The session-level lock is
                // released by the unlock or, should that fail, when the
                // connection closes at the end of this block.
                use diesel::RunQueryDsl as _;
                // Bounded: a lock left by a session PostgreSQL has not yet
                // found dead must not hang every start for good.
                conn.batch_execute("SET lock_timeout = '10min'")
                    .map_err(|e| DatabaseError::Open(e.to_string()))?;
                diesel::sql_query("SELECT pg_advisory_lock($1)")
                    .bind::<diesel::sql_types::BigInt, _>(MIGRATING_LOCK)
                    .execute(&mut conn)
                    .map_err(|e| {
                        DatabaseError::Migration(format!(
                            "another instance has been migrating for 10 minutes, or left its lock: {e}"
                        ))
                    })?;
                let _ = conn.batch_execute("RESET lock_timeout");
                let applied = migrate(&mut conn, POSTGRES_MIGRATIONS);
                let _ = diesel::sql_query("SELECT pg_advisory_unlock($1)")
                    .bind::<diesel::sql_types::BigInt, _>(MIGRATING_LOCK)
                    .execute(&mut conn);
                applied?
            }
        };
        let postgres = matches!(target, Target::Postgres(_));
        let size = options.max_size.unwrap_or(if postgres {
            POSTGRES_POOL_SIZE
        } else {
            SQLITE_POOL_SIZE
        });
        let pool = Pool::builder()
            .max_size(size)
            // Connections are opened as calls need them, not all at
            // start, and ones idle for ten minutes are closed. None is
            // kept open in reserve: r2d2 refills a reserve on its own
            // thread, and a PostgreSQL connection still being opened
            // there when the process exits meets OpenSSL's exit-time
            // clean-up (libpq's TLS) and crashes it: a CLI command that
            // had done its work ended with SIGSEGV.
            .min_idle(Some(0))
            // r2d2 opens connections and closes idle ones on a pool of
            // its own; one thread does (it starts with three).
            .thread_pool(std::sync::Arc::new(
                scheduled_thread_pool::ScheduledThreadPool::builder()
                    .num_threads(1)
                    .thread_name_pattern("r2d2-worker-{}")
                    .build(),
            ))
            .test_on_check_out(true)
            .connection_timeout(options.connection_timeout)
            .event_handler(Box::new(PoolWaits(meter)))
            .build(Manager(target.clone()))
            .map_err(|e| DatabaseError::Open(e.to_string()))?;
        let (writer, cache, checkpointer) = if postgres {
            (None, None, None)
        } else {
            let (writer, cache, checkpointer) =
                sqlite_workers(&target, options.connection_timeout)?;
            (Some(writer), Some(cache), Some(checkpointer))
        };
        Ok((
            Self {
                pool,
                postgres,
                target,
                writer,
                cache,
                _checkpointer: checkpointer,
            },
            applied,
        ))
    }

    /// True on PostgreSQL, where several instances may share the database.
    pub fn is_postgres(&self) -> bool {
        self.postgres
    }

    /// Runs `f` with a pooled connection on the blocking thread pool.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
    {
        let pool = self.pool.clone();
        let tally = reviewloop_ports::tally::current();
        let cache = self.cache.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut conn = pool
                .get()
                .map_err(|e| StoreError::Unavailable(e.to_string()))?;
            // A write run here (not through the writer) has committed or
            // failed when `f` returns (or panics): drop the copies of what
            // it changed.
            let _settle = cache.as_deref().map(cache::ReadCache::settle_on_drop);
            statements::counted(tally.as_deref(), || f(&mut conn)).map_err(StoreError::from)
        })
        .await;
        match outcome {
            Ok(result) => result,
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            Err(_) => Err(StoreError::Unavailable(
                "database task was cancelled".into(),
            )),
        }
    }
}

impl Database {
    /// Runs `change` in a write transaction and answers after it commits.
    /// On SQLite it joins the writer thread's next group commit; on
    /// PostgreSQL it runs in its own transaction on a pooled connection.
    pub(crate) async fn write<T, F>(&self, change: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
    {
        match &self.writer {
            Some(writer) => writer.write(change).await,
            None => self.run(move |conn| write(conn, change)).await,
        }
    }
}

/// The advisory lock held while an instance migrates PostgreSQL.
const MIGRATING_LOCK: i64 = 0x006d_6967_7261_7465;

/// On PostgreSQL, takes the transaction-scoped advisory lock `key`, so one
/// transaction at a time across instances runs the work it guards; SQLite
/// runs one write transaction at a time anyway.
pub(crate) fn exclusive(conn: &mut Conn, key: i64) -> Result<(), DbError> {
    use diesel::RunQueryDsl;
    if let DbConnection::Postgres(pg) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<diesel::sql_types::BigInt, _>(key)
            .execute(pg)?;
    }
    Ok(())
}

/// Runs `f` in a write transaction. On SQLite it begins with `BEGIN
/// IMMEDIATE`, so a transaction that reads before it writes takes the write
/// lock up front instead of failing with "database is locked" when it
/// upgrades; PostgreSQL takes row locks as it writes.
///
/// Both go through Diesel's transaction manager, so it always knows whether
/// the connection is inside a transaction: if `f` panics, the connection is
/// still marked as in one and the pool drops it ([`Manager::has_broken`])
/// instead of handing the open transaction to the next caller.
pub(crate) fn write<T, F>(conn: &mut Conn, f: F) -> Result<T, DbError>
where
    F: FnOnce(&mut Conn) -> Result<T, DbError>,
{
    match conn {
        DbConnection::Postgres(_) => conn.transaction(f),
        DbConnection::Sqlite(sqlite) => {
            AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN IMMEDIATE")?;
            match f(conn) {
                Ok(value) => {
                    match <DbConnection as TransactionManager<DbConnection>>::commit_transaction(
                        conn,
                    ) {
                        Ok(()) => Ok(value),
                        Err(error) => {
                            // A failed COMMIT (busy, disk full) leaves the
                            // transaction open; end it here.
                            let _ = <DbConnection as TransactionManager<DbConnection>>::rollback_transaction(conn);
                            Err(error.into())
                        }
                    }
                }
                Err(error) => {
                    let _ =
                        <DbConnection as TransactionManager<DbConnection>>::rollback_transaction(
                            conn,
                        );
                    Err(error)
                }
            }
        }
    }
}

/// Implements every storage port over one [`Database`].
#[derive(Clone)]
pub struct SqlStore {
    db: Database,
}

impl SqlStore {
    /// A store over `db`.
    pub fn new(db: Database) -> Self {
        Self { db }
    }
}

#[cfg(test)]
pub(crate) mod testdb;

#[cfg(test)]
mod tests {
    use super::testdb::{on_every_backend, TestDb};
    use super::*;
    use diesel::RunQueryDsl;

    /// However the URL spells one database file, one lock guards it.
    #[test]
    fn every_spelling_of_one_sqlite_file_takes_one_lock() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("data");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let db = |d: &std::path::Path| d.join("x.db").display().to_string();
        let held = claim_sole_instance(&format!("sqlite://{}", db(&real)))
            .unwrap()
            .expect("a lock on SQLite");
        for other in [
            format!("sqlite://{}", db(&link)),
            format!("sqlite://file:{}?cache=shared", db(&real)),
            format!("sqlite:{}/../data/x.db", real.display()),
        ] {
            assert!(
                matches!(claim_sole_instance(&other), Err(DatabaseError::InUse(_))),
                "{other} is the same file"
            );
        }
        assert!(
            claim_sole_instance(&format!("sqlite://{}", real.join("y.db").display()))
                .unwrap()
                .is_some()
        );
        drop(held);
        assert!(claim_sole_instance(&format!("sqlite://{}", db(&link)))
            .unwrap()
            .is_some());
        assert!(claim_sole_instance("sqlite://file:x.db?mode=memory").is_err());
        assert!(claim_sole_instance("postgres://u@h/db").unwrap().is_none());
    }

    fn count_windows(conn: &mut Conn) -> Result<i64, DbError> {
        #[derive(diesel::QueryableByName)]
        struct Count {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let row: Count =
            diesel::sql_query("SELECT COUNT(*) AS n FROM rate_limit_windows").get_result(conn)?;
        Ok(row.n)
    }

    fn insert_window(conn: &mut Conn, start: i64) -> Result<(), DbError> {
        diesel::sql_query(format!(
            "INSERT INTO rate_limit_windows (api_key_id, window_start, calls) VALUES ('k', {start}, 1)"
        ))
        .execute(conn)?;
        Ok(())
    }

    /// A pool of one connection: the write after the panic gets the same
    /// slot at once. Had the panicked connection gone back still inside its
    /// transaction, the second write would fail to begin (or, worse, commit
    /// the first one's half-done row).
    async fn a_panic_inside_a_write_leaves_no_transaction_open(tdb: TestDb) {
        let options = PoolOptions {
            max_size: Some(1),
            connection_timeout: Duration::from_secs(5),
        };
        let (db, _) = Database::open_with(&tdb.url, options).unwrap();
        let first = db.clone();
        let panicked = tokio::spawn(async move {
            first
                .run(|conn| {
                    write(conn, |conn| -> Result<(), DbError> {
                        insert_window(conn, 1)?;
                        panic!("a bug in the middle of a write")
                    })
                })
                .await
        })
        .await;
        assert!(panicked.unwrap_err().is_panic());
        let started = std::time::Instant::now();
        let count = db
            .run(|conn| {
                write(conn, |conn| insert_window(conn, 2))?;
                count_windows(conn)
            })
            .await
            .unwrap();
        assert_eq!(
            count, 1,
            "the panicked write's row is gone, the new one is there"
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "no wait for a lost connection"
        );
        // A write that fails rolls back too, and leaves the connection usable.
        let failed = db
            .run(|conn| {
                write(conn, |conn| {
                    insert_window(conn, 3)?;
                    insert_window(conn, 3)
                })
            })
            .await;
        assert!(failed.is_err(), "the second insert breaks the primary key");
        assert_eq!(db.run(count_windows).await.unwrap(), 1);
    }

    on_every_backend!(a_panic_inside_a_write_leaves_no_transaction_open);

    #[test]
    fn no_message_shows_a_database_password() {
        let url = "postgres://app:hunter2@db.internal:5432/reviews";
        assert_eq!(
            redacted_url(url),
            "postgres://app:***@db.internal:5432/reviews"
        );
        assert_eq!(
            redacted_url("sqlite://reviewloop.db"),
            "sqlite://reviewloop.db"
        );
        assert!(!redacted_url("mysql://u:hunter2@x/db").contains("hunter2"));
        assert!(!redacted_url("bad://u:hunter2@[x/db").contains("hunter2"));
        let Err(error) = Database::open("mysql://u:hunter2@x/db") else {
            panic!("mysql is not a backend");
        };
        assert!(!error.to_string().contains("hunter2"), "{error}");
        // A server that refuses the connection: the message names no password.
        let Err(error) = Database::open("postgres://app:hunter2@127.0.0.1:1/reviews") else {
            panic!("nothing listens on port 1");
        };
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
}
