//! Storage of the key pairs that sign decision receipts.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::StoreError;

/// One Ed25519 key pair of the instance. Keys are never deleted: a retired
/// key signs nothing new, but the receipts it signed stay verifiable.
#[derive(Clone, PartialEq, Eq)]
pub struct ReceiptKey {
    /// The id receipts name it by.
    pub key_id: String,
    /// The 32-byte public key.
    pub public_key: Vec<u8>,
    /// The 32-byte secret seed.
    pub secret_key: Vec<u8>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When a newer key replaced it; `None` for the key that signs.
    pub retired_at: Option<DateTime<Utc>>,
}

/// Leaves the secret out, so no log line or test failure can show it.
impl std::fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiptKey")
            .field("key_id", &self.key_id)
            .field("public_key", &self.public_key)
            .field("secret_key", &"(hidden)")
            .field("created_at", &self.created_at)
            .field("retired_at", &self.retired_at)
            .finish()
    }
}

/// The receipt keys, shared by every instance on one database.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ReceiptKeyStore: Send + Sync {
    /// Every key, the newest first.
    async fn receipt_keys(&self) -> Result<Vec<ReceiptKey>, StoreError>;
    /// Adds `key` as the signing key and retires the keys still active, in
    /// one transaction.
    async fn rotate_receipt_key(&self, key: &ReceiptKey) -> Result<(), StoreError>;
    /// Adds `key` only when there is no active key yet; false when there
    /// is one (another instance made it first).
    async fn insert_first_receipt_key(&self, key: &ReceiptKey) -> Result<bool, StoreError>;
}
