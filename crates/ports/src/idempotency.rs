//! Storage of the first outcome of a retried create call.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::ApiKeyId;

use crate::StoreError;

/// What to do with a call that carries an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// Run the call: the key is new (or its record expired), or an earlier
    /// attempt died while running and this one takes over.
    Started {
        /// When the key was first used. A call taken over must create what
        /// the dead attempt may already have created, so resources made
        /// under a key take ids derived from it and from this time.
        since: DateTime<Utc>,
    },
    /// The same call already finished: answer this again.
    Replay {
        /// The first answer's HTTP status.
        status: u16,
        /// The first answer's body, as sent.
        body: String,
    },
    /// The key was used with a different body.
    Mismatch,
    /// The first call with this key is still running.
    InProgress,
}

/// Idempotency records, one per API key and idempotency key.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `key` for a call with `fingerprint`, in one transaction.
    /// Records created before `expired_before` count as absent; running
    /// records whose attempt started before `stale_before` belonged to a
    /// call that died and are taken over.
    async fn begin(
        &self,
        api_key: &ApiKeyId,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        expired_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError>;
    /// Stores the outcome to replay.
    async fn finish(
        &self,
        api_key: &ApiKeyId,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError>;
    /// Marks the call as ended without an outcome to keep, so that a retry
    /// runs it again at once, taking it over under the same first-use time.
    async fn abandon(&self, api_key: &ApiKeyId, key: &str) -> Result<(), StoreError>;
    /// Deletes records created before `before`; returns how many.
    async fn purge(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}
