//! Translation of Diesel's errors into the ports' [`StoreError`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use reviewloop_ports::StoreError;

/// An error inside a store call: from Diesel, or decided by the store.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DbError {
    #[error(transparent)]
    Diesel(#[from] DieselError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<DbError> for StoreError {
    fn from(error: DbError) -> Self {
        match error {
            DbError::Store(e) => e,
            DbError::Diesel(DieselError::NotFound) => StoreError::NotFound,
            DbError::Diesel(DieselError::DatabaseError(kind, info)) => match kind {
                DatabaseErrorKind::UniqueViolation => {
                    StoreError::Conflict(info.message().to_owned())
                }
                // The row referred to (a loop, a user) was deleted meanwhile.
                DatabaseErrorKind::ForeignKeyViolation => StoreError::NotFound,
                DatabaseErrorKind::SerializationFailure => {
                    StoreError::Conflict(info.message().to_owned())
                }
                DatabaseErrorKind::ClosedConnection => {
                    suspect_connections();
                    StoreError::Unavailable(info.message().to_owned())
                }
                _ if is_busy(info.message()) || is_gone(info.message()) => {
                    StoreError::Unavailable(info.message().to_owned())
                }
                // PostgreSQL ended one of two transactions that waited for
                // each other; the caller's retry runs it again.
                _ if info.message().contains("deadlock detected") => {
                    StoreError::Conflict(info.message().to_owned())
                }
                _ => StoreError::Internal(info.message().to_owned()),
            },
            DbError::Diesel(other) if is_gone(&other.to_string()) => {
                StoreError::Unavailable(other.to_string())
            }
            DbError::Diesel(other) => StoreError::Internal(other.to_string()),
        }
    }
}

/// Until when (Unix milliseconds) pooled connections are suspect: a
/// connection to the database was found gone, so others opened before
/// may be dead too. Meanwhile the pool checks each connection as it is
/// taken (one `SELECT 1`) and drops the dead ones, so that calls after the
/// database's return do not fail one by one on connections left from
/// before. One value for the process: a rare, short extra check is all a
/// wrong guess costs.
static SUSPECT_UNTIL: AtomicU64 = AtomicU64::new(0);

/// How long after a connection was found gone the pool checks the others.
const SUSPECT_FOR: Duration = Duration::from_secs(10);

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A connection was found gone: suspect the others for a while.
pub(crate) fn suspect_connections() {
    let until = now_millis().saturating_add(u64::try_from(SUSPECT_FOR.as_millis()).unwrap_or(0));
    SUSPECT_UNTIL.fetch_max(until, Ordering::Relaxed);
}

/// Whether pooled connections should be checked before use.
pub(crate) fn connections_suspect() -> bool {
    now_millis() < SUSPECT_UNTIL.load(Ordering::Relaxed)
}

/// libpq's words for a connection to the server that is gone (the server
/// stopped or restarted, the network broke): a 503 to retry, not a bug.
fn is_gone(message: &str) -> bool {
    let gone = [
        "no connection to the server",
        "server closed the connection",
        "could not send data to server",
        "could not receive data from server",
        "SSL SYSCALL error",
        "terminating connection",
        "Connection refused",
        "connection to server",
    ]
    .iter()
    .any(|gone| message.contains(gone));
    if gone {
        suspect_connections();
    }
    gone
}

/// SQLite's words for a database that cannot take a write now: locked
/// by another writer, or its disk full. A 503 until it can.
fn is_busy(message: &str) -> bool {
    [
        "database is locked",
        "database is busy",
        "database or disk is full",
    ]
    .iter()
    .any(|busy| message.contains(busy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::result::DatabaseErrorInformation;

    #[derive(Debug)]
    struct Said(&'static str);

    impl DatabaseErrorInformation for Said {
        fn message(&self) -> &str {
            self.0
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            None
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    fn from(message: &'static str) -> StoreError {
        DbError::Diesel(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(Said(message)),
        ))
        .into()
    }

    #[test]
    fn a_database_gone_full_or_locked_is_unavailable_not_a_bug() {
        for message in [
            "no connection to the server",
            "server closed the connection unexpectedly",
            "SSL SYSCALL error: EOF detected",
            "database or disk is full",
            "database is locked",
        ] {
            assert!(
                matches!(from(message), StoreError::Unavailable(_)),
                "{message}"
            );
        }
        assert!(
            connections_suspect(),
            "a gone connection makes the others suspect"
        );
        assert!(matches!(
            from("syntax error at or near"),
            StoreError::Internal(_)
        ));
    }
}
