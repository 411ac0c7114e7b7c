//! Translation of Diesel's errors into the ports' [`StoreError`].

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
                    StoreError::Unavailable(info.message().to_owned())
                }
                _ if is_busy(info.message()) => StoreError::Unavailable(info.message().to_owned()),
                // PostgreSQL ended one of two transactions that waited for
                // each other; the caller's retry runs it again.
                _ if info.message().contains("deadlock detected") => {
                    StoreError::Conflict(info.message().to_owned())
                }
                _ => StoreError::Internal(info.message().to_owned()),
            },
            DbError::Diesel(other) => StoreError::Internal(other.to_string()),
        }
    }
}

fn is_busy(message: &str) -> bool {
    message.contains("database is locked") || message.contains("database is busy")
}
