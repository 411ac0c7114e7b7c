//! The Diesel store: connection pool, migrations, and the implementations
//! of the storage ports.
//!
//! Diesel is synchronous, so every call runs on tokio's blocking pool and
//! takes its pooled connection there, never on an async worker thread.

mod accounts;
mod convert;
mod error;
mod idempotency;
mod loops;
mod models;
mod outbox;
mod requests;
pub mod schema;
mod webhooks;

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::SqliteConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use reviewloop_ports::StoreError;

pub(crate) use error::DbError;

/// The connection type every query is written against.
pub(crate) type Conn = SqliteConnection;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POOL_SIZE: u32 = 8;

/// Why the database could not be opened or migrated.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// The URL names no backend this build supports.
    #[error("unsupported database URL '{0}': use sqlite://PATH")]
    UnsupportedUrl(String),
    /// The database could not be opened.
    #[error("cannot open database: {0}")]
    Open(String),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migration(String),
}

/// Settings every SQLite connection gets when the pool hands it out:
/// Diesel sets none of them itself.
#[derive(Debug)]
struct SqlitePragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(
            "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
        )
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

fn sqlite_path(url: &str) -> Option<&str> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    // An in-memory database would be a different database on every pooled
    // connection; refuse it rather than lose data between calls.
    (!path.is_empty() && !path.contains(":memory:")).then_some(path)
}

/// An open, migrated database with its connection pool.
#[derive(Clone)]
pub struct Database {
    pool: Pool<ConnectionManager<Conn>>,
}

impl Database {
    /// Opens the database at `url` (`sqlite://PATH`), creating the file if
    /// needed, and runs pending migrations. Returns the migrations applied.
    pub fn open(url: &str) -> Result<(Self, Vec<String>), DatabaseError> {
        let path = sqlite_path(url).ok_or_else(|| DatabaseError::UnsupportedUrl(url.to_owned()))?;
        let manager = ConnectionManager::<Conn>::new(path);
        let pool = Pool::builder()
            .max_size(POOL_SIZE)
            .connection_timeout(Duration::from_secs(10))
            .connection_customizer(Box::new(SqlitePragmas))
            .build(manager)
            .map_err(|e| DatabaseError::Open(e.to_string()))?;
        let mut conn = pool.get().map_err(|e| DatabaseError::Open(e.to_string()))?;
        // WAL lets readers go on while one writer writes; it is a property
        // of the file, so setting it once is enough.
        conn.batch_execute("PRAGMA journal_mode = WAL;")
            .map_err(|e| DatabaseError::Open(e.to_string()))?;
        let applied = conn
            .run_pending_migrations(SQLITE_MIGRATIONS)
            .map_err(|e| DatabaseError::Migration(e.to_string()))?
            .iter()
            .map(ToString::to_string)
            .collect();
        drop(conn);
        Ok((Self { pool }, applied))
    }

    /// Runs `f` with a pooled connection on the blocking thread pool.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
    {
        let pool = self.pool.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut conn = pool
                .get()
                .map_err(|e| StoreError::Unavailable(e.to_string()))?;
            f(&mut conn).map_err(StoreError::from)
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

/// Runs `f` in a write transaction. On SQLite it starts with `BEGIN
/// IMMEDIATE`, so a transaction that reads before it writes waits for the
/// write lock up front instead of failing with "database is locked" when
/// it upgrades.
pub(crate) fn write<T, F>(conn: &mut Conn, f: F) -> Result<T, DbError>
where
    F: FnOnce(&mut Conn) -> Result<T, DbError>,
{
    conn.immediate_transaction(f)
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
