//! The audit chain. Entries are written by the stores themselves, inside
//! the transaction of each change they record, unlinked; this port links
//! them into their accounts' chains and reads them.

use async_trait::async_trait;
use reviewloop_domain::{AuditEntry, UserId};

use crate::StoreError;

/// The accounts' audit logs.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Links up to `batch` unlinked entries into their accounts' chains,
    /// in the order they were written; returns how many.
    async fn link_audit(&self, batch: u32) -> Result<usize, StoreError>;
    /// Up to `limit` linked entries of `account`'s log after number `after`, in order.
    async fn audit_entries(
        &self,
        account: &UserId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError>;
    /// The last linked entry of `account`'s log.
    async fn audit_head(&self, account: &UserId) -> Result<Option<AuditEntry>, StoreError>;
    /// Every account with a linked entry in its log (link first to
    /// include entries still waiting).
    async fn audit_accounts(&self) -> Result<Vec<UserId>, StoreError>;
}
