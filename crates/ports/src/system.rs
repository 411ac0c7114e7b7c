//! Ports to the world outside storage: time, randomness, rate limiting and
//! QR rendering.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::{ApiKeyId, InviteCode, ObjectId};

use crate::StoreError;

/// The current time. Implementations truncate to milliseconds, the
/// precision every store keeps, so values survive a round trip unchanged.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// Randomness: new ids, invite codes and secrets.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait IdSource: Send + Sync {
    /// A new time-ordered id created at `now`.
    fn object_id(&self, now: DateTime<Utc>) -> ObjectId;
    /// A new random invite code.
    fn invite_code(&self) -> InviteCode;
    /// `bytes` random bytes as lowercase hex, for keys and secrets.
    fn secret_hex(&self, bytes: usize) -> String;
    /// A random number in [-1, 1], to spread retries.
    fn jitter(&self) -> f64;
}

/// A QR renderer failed (the text does not fit in a QR code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot render QR code: {0}")]
pub struct QrError(pub String);

/// Renders text as a QR code image.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait QrRenderer: Send + Sync {
    /// The QR code of `text` as a PNG.
    fn png(&self, text: &str) -> Result<Vec<u8>, QrError>;
}

/// Where a key stands against its limit after one more call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitStatus {
    /// Calls allowed per window.
    pub limit: u32,
    /// Calls left in the current window.
    pub remaining: u32,
    /// When the current window ends.
    pub reset_at: DateTime<Utc>,
    /// False when this call is over the limit.
    pub allowed: bool,
}

/// The span a limit counts calls over: fixed windows aligned to the
/// hour or the minute (UTC). A key has a count per window kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateWindow {
    /// The request surface: a key's own hourly limit.
    Hour,
    /// The alternate surface: a key's plan's per-minute limit.
    Minute,
}

impl RateWindow {
    /// The window's length in seconds.
    pub fn seconds(&self) -> i64 {
        match self {
            Self::Hour => 3600,
            Self::Minute => 60,
        }
    }

    /// The number of the window `now` falls in, and when it ends.
    pub fn at(&self, now: DateTime<Utc>) -> Result<(i64, DateTime<Utc>), StoreError> {
        let length = self.seconds();
        let window = now.timestamp().div_euclid(length);
        let reset_at = DateTime::from_timestamp((window + 1) * length, 0)
            .ok_or_else(|| StoreError::Internal("rate limit window out of range".into()))?;
        Ok((window, reset_at))
    }
}

/// Counts calls per API key in fixed windows.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Counts one call by `key` at `now` against `limit` per `window`.
    async fn hit(
        &self,
        key: &ApiKeyId,
        window: RateWindow,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<RateLimitStatus, StoreError>;
}
