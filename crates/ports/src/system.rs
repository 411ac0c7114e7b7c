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

/// The span a limit counts calls over: the last hour or the last minute,
/// estimated from counts kept in windows aligned to the hour or the minute
/// (UTC): the current window's calls plus the previous window's, weighted
/// by the share of it the sliding span still covers. Fixed windows alone
/// would let twice the limit through across a boundary. A key has a count
/// per window kind.
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

    /// How far into its window `now` is, from 0 (its start) to below 1.
    pub fn progress(&self, now: DateTime<Utc>) -> f64 {
        let length = self.seconds() * 1000;
        now.timestamp_millis().rem_euclid(length) as f64 / length as f64
    }

    /// The calls that count against a limit at `now`: the current
    /// window's, plus the previous window's share still inside the span.
    pub fn sliding(&self, previous: u32, current: u32, now: DateTime<Utc>) -> u32 {
        let carried = (f64::from(previous) * (1.0 - self.progress(now))).floor() as u32;
        carried.saturating_add(current)
    }

    /// When a key refused at `now` (with `previous` and `current` calls
    /// counted) may call again, to the next whole second.
    pub fn admits_again(
        &self,
        previous: u32,
        current: u32,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, StoreError> {
        let (_, end) = self.at(now)?;
        let length = self.seconds() as f64;
        let start = end.timestamp() as f64 - length;
        let at = if current >= limit {
            // Only in the next window, once this one's calls weigh less.
            let share = 1.0 - f64::from(limit) / f64::from(current.max(1));
            end.timestamp() as f64 + length * share
        } else {
            let share = 1.0 - f64::from(limit - current) / f64::from(previous.max(1));
            start + length * share
        };
        // The count must fall strictly under the limit: the next second
        // after the moment it reaches it.
        let at = (at.floor() as i64 + 1).max(now.timestamp() + 1);
        DateTime::from_timestamp(at, 0)
            .ok_or_else(|| StoreError::Internal("rate limit window out of range".into()))
    }

    /// The answer to one call, given the counts before it: admitted while
    /// the sliding count is under `limit`. `reset_at` is when the current
    /// window ends, or, for a refused call, when a call will be admitted
    /// again.
    pub fn decide(
        &self,
        previous: u32,
        current: u32,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<RateLimitStatus, StoreError> {
        let used = self.sliding(previous, current, now);
        let allowed = used < limit;
        let reset_at = if allowed {
            self.at(now)?.1
        } else {
            self.admits_again(previous, current, limit, now)?
        };
        Ok(RateLimitStatus {
            limit,
            remaining: limit.saturating_sub(used + u32::from(allowed)),
            reset_at,
            allowed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 / 3600 * 3600 + seconds, 0).unwrap()
    }

    #[test]
    fn the_previous_hour_weighs_less_as_the_hour_goes_on() {
        let hour = RateWindow::Hour;
        // 100 calls in the last minute of the previous hour.
        assert!(
            !hour.decide(100, 0, 100, at(0)).unwrap().allowed,
            "no room at the boundary"
        );
        let next = hour.decide(100, 0, 100, at(36)).unwrap();
        assert_eq!(
            (next.allowed, next.remaining),
            (true, 0),
            "a hundredth of an hour frees one call"
        );
        let half = hour.decide(100, 0, 100, at(1800)).unwrap();
        assert_eq!(
            (half.allowed, half.remaining),
            (true, 49),
            "half of them still count"
        );
        assert!(!hour.decide(100, 50, 100, at(1800)).unwrap().allowed);
        assert!(hour.decide(0, 99, 100, at(10)).unwrap().allowed);
    }

    #[test]
    fn a_refused_call_is_told_when_it_will_be_admitted() {
        let hour = RateWindow::Hour;
        // Used up this hour: admitted again in the next one, at once when
        // exactly the limit was used, later when more was counted.
        let full = hour.decide(0, 100, 100, at(600)).unwrap();
        assert_eq!(full.reset_at, at(3601));
        assert!(hour.decide(100, 0, 100, full.reset_at).unwrap().allowed);
        assert!(!hour.decide(100, 0, 100, at(3600)).unwrap().allowed);
        let over = hour.admits_again(0, 200, 100, at(600)).unwrap();
        assert_eq!(over, at(3600 + 1801));
        // Refused for the previous hour's weight: when enough of it has gone.
        let carried = hour.decide(100, 50, 100, at(900)).unwrap();
        assert_eq!(carried.reset_at, at(1801));
        assert!(hour.decide(100, 50, 100, carried.reset_at).unwrap().allowed);
        assert!(!hour.decide(100, 50, 100, at(1800)).unwrap().allowed);
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
