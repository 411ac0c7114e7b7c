//! Backups of an SQLite database while it is served, and their restore.
//!
//! A backup is `VACUUM INTO` a new file: one read transaction, so the
//! copy is the database as it was when the backup began, however much is
//! written meanwhile (WAL lets the writer go on), compacted, then synced
//! to disk. A restore checks that the file is a reviewloop database this
//! binary can migrate, that no instance serves the target, and that it
//! would not silently replace data; the old file is kept beside it.

use std::path::{Path, PathBuf};

use diesel::connection::SimpleConnection;
use diesel::migration::MigrationSource;
use diesel::prelude::*;
use diesel::sql_types::Text;

use super::{claim_sole_instance, redacted_url, sqlite_file, DatabaseError, Target};

/// Why a backup or a restore did nothing.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The database is on PostgreSQL, whose own tools do this.
    #[error(
        "{url} is a PostgreSQL database: back it up with PostgreSQL's own tool, \
         pg_dump --format=custom --file={to} '{url}' (restore with pg_restore)"
    )]
    Postgres {
        /// The database URL, its password hidden.
        url: String,
        /// Where the dump would go.
        to: String,
    },
    /// The backup's file is there already.
    #[error("{0} exists already: name a new file, so that no backup is overwritten")]
    Exists(String),
    /// The file to restore is missing.
    #[error("{0} does not exist")]
    Missing(String),
    /// The file to restore is no reviewloop database.
    #[error("{path} is not a reviewloop database: {why}")]
    NotReviewloop {
        /// The file.
        path: String,
        /// What was found.
        why: String,
    },
    /// The file to restore was made by a newer reviewloop.
    #[error(
        "{path} was made by a newer reviewloop (its schema has migration {version}, \
         which this binary does not know): restore it with that version or later"
    )]
    Newer {
        /// The file.
        path: String,
        /// The first unknown migration.
        version: String,
    },
    /// The target holds data and `--force` was not given.
    #[error("{0} holds data already: add --force to replace it (the old file is kept beside it)")]
    HasData(String),
    /// The database could not be opened, read or written.
    #[error(transparent)]
    Database(#[from] DatabaseError),
    /// A file could not be written, moved or synced.
    #[error("{0}")]
    Io(String),
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The database file now in place.
    pub database: PathBuf,
    /// Where the database it replaced was moved, if there was one.
    pub kept: Option<PathBuf>,
}

fn io(what: &str, path: &Path, e: std::io::Error) -> BackupError {
    BackupError::Io(format!("cannot {what} {}: {e}", path.display()))
}

fn sqlite(e: impl std::fmt::Display) -> BackupError {
    BackupError::Database(DatabaseError::Open(e.to_string()))
}

fn the_sqlite_file(url: &str, to: &Path) -> Result<(String, PathBuf), BackupError> {
    match Target::parse(url)? {
        Target::Sqlite(path) => {
            let file = sqlite_file(&path).to_path_buf();
            Ok((path, file))
        }
        Target::Postgres(_) => Err(BackupError::Postgres {
            url: redacted_url(url),
            to: to.display().to_string(),
        }),
    }
}

/// Writes, to the new file `file`, the database `conn` has open as it is
/// now, and syncs it (and its directory) to disk. The file is made
/// readable by its owner only first: the database holds signing keys and
/// secrets. (SQLite writes into an empty file.)
fn copy_into(conn: &mut SqliteConnection, file: &Path) -> Result<(), BackupError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let target = file
        .to_str()
        .ok_or_else(|| BackupError::Io(format!("{} is not a UTF-8 path", file.display())))?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .map_err(|e| io("create", file, e))?;
    conn.batch_execute("PRAGMA busy_timeout = 10000;")
        .map_err(sqlite)?;
    diesel::sql_query("VACUUM INTO ?")
        .bind::<Text, _>(target)
        .execute(conn)
        .map_err(sqlite)?;
    std::fs::File::open(file)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("sync", file, e))?;
    sync_directory_of(file)
}

fn sync_directory_of(file: &Path) -> Result<(), BackupError> {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io("sync", dir, e))
}

/// A consistent copy of the SQLite database of `url` in the new file `to`,
/// taken while it is served; returns its size in bytes.
pub fn backup(url: &str, to: &Path) -> Result<u64, BackupError> {
    let (path, file) = the_sqlite_file(url, to)?;
    if to.exists() {
        return Err(BackupError::Exists(to.display().to_string()));
    }
    // Opening a missing file would make an empty database, and an empty
    // backup of it.
    if !file.is_file() {
        return Err(BackupError::Missing(file.display().to_string()));
    }
    let mut conn = SqliteConnection::establish(&path).map_err(sqlite)?;
    copy_into(&mut conn, to)?;
    let size = std::fs::metadata(to).map_err(|e| io("read", to, e))?.len();
    Ok(size)
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Text)]
    version: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// Checks that `conn` holds a reviewloop database of a schema this binary
/// knows (it may be older: it is migrated when served).
fn check_schema(conn: &mut SqliteConnection, shown: &str) -> Result<(), BackupError> {
    let not_ours = |why: String| BackupError::NotReviewloop {
        path: shown.to_owned(),
        why,
    };
    let versions: Vec<Version> =
        diesel::sql_query("SELECT version FROM __diesel_schema_migrations ORDER BY version")
            .load(conn)
            .map_err(|e| not_ours(e.to_string()))?;
    if versions.is_empty() {
        return Err(not_ours("it has no reviewloop migrations".into()));
    }
    let known: Vec<String> =
        MigrationSource::<diesel::sqlite::Sqlite>::migrations(&super::SQLITE_MIGRATIONS)
            .map_err(|e| BackupError::Io(e.to_string()))?
            .iter()
            .map(|m| m.name().version().to_string())
            .collect();
    match versions.iter().find(|v| !known.contains(&v.version)) {
        Some(unknown) => Err(BackupError::Newer {
            path: shown.to_owned(),
            version: unknown.version.clone(),
        }),
        None => Ok(()),
    }
}

/// Whether the database at `file` holds any account.
fn has_data(path: &str) -> Result<bool, BackupError> {
    let mut conn = SqliteConnection::establish(path).map_err(sqlite)?;
    let tables: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'users'",
    )
    .get_result(&mut conn)
    .map_err(sqlite)?;
    if tables.n == 0 {
        return Ok(false);
    }
    let users: Count = diesel::sql_query("SELECT count(*) AS n FROM users")
        .get_result(&mut conn)
        .map_err(sqlite)?;
    Ok(users.n > 0)
}

/// The restored file takes the replaced one's owner and mode, so that the
/// service's own user (a restore usually runs as root) can still write it.
fn copy_owner_and_mode(from: &Path, to: &Path) -> Result<(), BackupError> {
    use std::os::unix::fs::MetadataExt as _;
    let old = std::fs::metadata(from).map_err(|e| io("read", from, e))?;
    std::fs::set_permissions(to, old.permissions()).map_err(|e| io("set the mode of", to, e))?;
    // Only root may give a file away; anyone else already owns both.
    match std::os::unix::fs::chown(to, Some(old.uid()), Some(old.gid())) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Ok(()),
        Err(e) => Err(io("set the owner of", to, e)),
    }
}

/// `file` with `suffix` after its name.
fn beside(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    file.with_file_name(name)
}

/// Puts the backup `from` in place of the SQLite database of `url`. No
/// instance may serve it; one holding data is replaced only with `force`,
/// and is moved beside it (`….before-restore-TIME`, with its WAL files).
pub fn restore(url: &str, from: &Path, force: bool) -> Result<Restored, BackupError> {
    let (path, file) = the_sqlite_file(url, from)?;
    let shown = from.display().to_string();
    if !from.is_file() {
        return Err(BackupError::Missing(shown));
    }
    let from_text = from
        .to_str()
        .ok_or_else(|| BackupError::Io(format!("{shown} is not a UTF-8 path")))?;
    let mut source = SqliteConnection::establish(from_text).map_err(sqlite)?;
    check_schema(&mut source, &shown)?;
    // Held until the new file is in place: no instance starts meanwhile.
    let _sole = claim_sole_instance(url)?;
    if file.exists() && has_data(&path)? && !force {
        return Err(BackupError::HasData(file.display().to_string()));
    }
    let incoming = beside(&file, ".restoring");
    for stale in [incoming.clone(), beside(&incoming, "-journal")] {
        if stale.exists() {
            std::fs::remove_file(&stale).map_err(|e| io("remove", &stale, e))?;
        }
    }
    copy_into(&mut source, &incoming)?;
    drop(source);
    // The WAL files belong to the old database: they go with it (or, left
    // behind by a database that is gone, aside), or SQLite would replay
    // them into the new one.
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let kept_name = beside(&file, &format!(".before-restore-{stamp}"));
    for suffix in ["-wal", "-shm"] {
        let part = beside(&file, suffix);
        if part.exists() {
            let to = beside(&kept_name, suffix);
            std::fs::rename(&part, &to).map_err(|e| io("move", &part, e))?;
        }
    }
    let kept = if file.exists() {
        // Keep the old file under a second name, then put the new one in
        // its place in one rename: there is never a moment without a
        // database at the configured path.
        std::fs::hard_link(&file, &kept_name).map_err(|e| io("keep", &file, e))?;
        copy_owner_and_mode(&file, &incoming)?;
        Some(kept_name)
    } else {
        None
    };
    std::fs::rename(&incoming, &file).map_err(|e| io("move", &incoming, e))?;
    sync_directory_of(&file)?;
    Ok(Restored {
        database: file,
        kept,
    })
}
