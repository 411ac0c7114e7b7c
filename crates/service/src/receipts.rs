//! Decision receipts: each request that ends with a decision is sealed
//! with an Ed25519 signature of its statement (see
//! [`reviewloop_domain::ReviewRequest::receipt_statement`]), so anyone holding the public
//! key can check who decided what, and when, without trusting the database.
//!
//! The instance's key pairs live in the database, shared by every instance.
//! A rotation adds a new key and retires the old one, which stays listed:
//! receipts it signed remain verifiable for good. Each instance keeps the
//! signing key in memory and looks for a newer one every [`REFRESH`], so a
//! rotation made by the command line reaches running instances within it.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Utc};
use ed25519_dalek::{Signer, SigningKey};
use reviewloop_domain::ReviewRequest;
use reviewloop_domain::{sha256_hex, Receipt, RECEIPT_ALG};
use reviewloop_ports::{Clock, IdSource, ReceiptKey, ReceiptKeyStore, StoreError};

use crate::error::{use_case_error, Bug};
use crate::fresh::Fresh;

use_case_error! {
    /// Why the receipt signing key could not be loaded, made or rotated.
    pub enum ReceiptKeyError {
        Store(StoreError),
        Bug(Bug),
    }

    /// Why a sweep over due requests stopped: a store failure, or a
    /// receipt key that cannot sign.
    pub enum SweepError {
        Store(StoreError),
        Bug(Bug),
    }
}

impl From<ReceiptKeyError> for SweepError {
    fn from(error: ReceiptKeyError) -> Self {
        match error {
            ReceiptKeyError::Store(e) => Self::Store(e),
            ReceiptKeyError::Bug(e) => Self::Bug(e),
        }
    }
}

/// How long an instance signs with the key it loaded before it looks for
/// a newer one.
pub const REFRESH: std::time::Duration = std::time::Duration::from_secs(60);

/// A public key as `/v1/receipts/keys` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PublicKey {
    /// The id receipts name it by.
    pub key_id: String,
    /// Always `Ed25519`.
    pub alg: &'static str,
    /// base64url (no padding) of the 32-byte public key.
    pub public_key: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When a newer key replaced it; `null` for the key that signs now.
    pub retired_at: Option<DateTime<Utc>>,
}

/// A key ready to seal requests with.
#[derive(Clone)]
pub(crate) struct Sealer {
    key_id: String,
    key: SigningKey,
}

impl Sealer {
    /// Signs `request`'s statement and keeps the receipt on it, if it has
    /// just ended with a decision and has no receipt yet; anything else is
    /// left as it is.
    pub(crate) fn seal(&self, request: &mut ReviewRequest) {
        if request.receipt.is_some() {
            return;
        }
        let Some(statement) = request.receipt_statement() else {
            return;
        };
        let signature = self.key.sign(&statement);
        // Refused only for a request that is not sealable, checked above.
        let _ = request.seal(Receipt {
            key_id: self.key_id.clone(),
            signed: URL_SAFE_NO_PAD.encode(&statement),
            signature: URL_SAFE_NO_PAD.encode(signature.to_bytes()),
        });
    }
}

/// The instance's receipt keys: makes, rotates, lists and signs with them.
pub struct ReceiptKeys {
    store: Arc<dyn ReceiptKeyStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
    loaded: Fresh<Sealer>,
}

/// A key's id: the start of the SHA-256 of its public key, so the id says
/// which key it is without a lookup.
fn key_id(public_key: &[u8]) -> String {
    format!("rk_{}", &sha256_hex(public_key)[..16])
}

impl ReceiptKeys {
    /// Keys kept in `store`; new ones are made from `ids`' randomness.
    pub fn new(
        store: Arc<dyn ReceiptKeyStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdSource>,
    ) -> Self {
        Self {
            store,
            clock,
            ids,
            loaded: Fresh::new(REFRESH),
        }
    }

    fn new_key(&self) -> Result<ReceiptKey, Bug> {
        let seed: [u8; 32] = hex::decode(self.ids.secret_hex(32))
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| Bug::new("random source gave no 32 bytes"))?;
        let signing = SigningKey::from_bytes(&seed);
        let public_key = signing.verifying_key().to_bytes().to_vec();
        Ok(ReceiptKey {
            key_id: key_id(&public_key),
            public_key,
            secret_key: seed.to_vec(),
            created_at: self.clock.now(),
            retired_at: None,
        })
    }

    /// Makes the first key pair when there is none: at the first start, so
    /// its public key is listed before any receipt needs it.
    pub async fn ensure_key(&self) -> Result<(), ReceiptKeyError> {
        self.active().await.map(|_| ())
    }

    /// Replaces the signing key with a new one; the old one is retired and
    /// stays listed. Returns the new key's id.
    pub async fn rotate(&self) -> Result<String, ReceiptKeyError> {
        let key = self.new_key()?;
        self.store.rotate_receipt_key(&key).await?;
        self.forget();
        Ok(key.key_id)
    }

    /// Every public key, the newest first.
    pub async fn public_keys(&self) -> Result<Vec<PublicKey>, StoreError> {
        Ok(self
            .store
            .receipt_keys()
            .await?
            .into_iter()
            .map(|key| PublicKey {
                key_id: key.key_id,
                alg: RECEIPT_ALG,
                public_key: URL_SAFE_NO_PAD.encode(&key.public_key),
                created_at: key.created_at,
                retired_at: key.retired_at,
            })
            .collect())
    }

    fn forget(&self) {
        self.loaded.forget();
    }

    /// The key to sign with now: the one in memory while it is fresh,
    /// else the newest active key in the store (made if there is none).
    pub(crate) async fn sealer(&self) -> Result<Sealer, ReceiptKeyError> {
        let now = self.clock.now();
        if let Some(sealer) = self.loaded.get(now) {
            return Ok(sealer);
        }
        let sealer = self.active().await?;
        self.loaded.keep(sealer.clone(), now);
        Ok(sealer)
    }

    async fn active(&self) -> Result<Sealer, ReceiptKeyError> {
        // Two instances starting on one empty database may both make a
        // first key; the newest signs, and both stay listed.
        for _ in 0..2 {
            let keys = self.store.receipt_keys().await?;
            if let Some(key) = keys.into_iter().find(|k| k.retired_at.is_none()) {
                let seed: [u8; 32] = key
                    .secret_key
                    .as_slice()
                    .try_into()
                    .map_err(|_| Bug::new(format!("receipt key {} is damaged", key.key_id)))?;
                return Ok(Sealer {
                    key_id: key.key_id,
                    key: SigningKey::from_bytes(&seed),
                });
            }
            self.store
                .insert_first_receipt_key(&self.new_key()?)
                .await?;
        }
        Err(Bug::new("no receipt key could be made").into())
    }
}

#[cfg(test)]
pub(crate) mod tests;
