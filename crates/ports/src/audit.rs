//! Reading the audit chain. Entries are appended by the stores themselves,
//! inside the transaction of each change they record, so no port writes
//! them.

use async_trait::async_trait;
use reviewloop_domain::{AuditEntry, UserId};

use crate::StoreError;

/// The accounts' audit logs.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Up to `limit` entries of `account`'s log after number `after`, in order.
    async fn audit_entries(
        &self,
        account: &UserId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError>;
    /// The last entry of `account`'s log.
    async fn audit_head(&self, account: &UserId) -> Result<Option<AuditEntry>, StoreError>;
    /// Every account that has a log.
    async fn audit_accounts(&self) -> Result<Vec<UserId>, StoreError>;
}
