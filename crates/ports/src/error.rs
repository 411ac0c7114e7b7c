//! The one error type every store speaks. Adapters translate their
//! database's errors into it, so nothing above them sees Diesel.

/// Why a store call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A write lost a race: a unique value is taken, or the row changed
    /// since it was read (optimistic concurrency).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The row to change does not exist (any more).
    #[error("not found")]
    NotFound,
    /// The database could not be reached or was too busy; worth retrying.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// Anything else: a bug or damaged data. Logged, shown to nobody.
    #[error("store failure: {0}")]
    Internal(String),
}
