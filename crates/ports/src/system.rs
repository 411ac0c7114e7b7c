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

    /// Milliseconds since the start of the window `now` falls in.
    fn elapsed_ms(&self, now: DateTime<Utc>) -> u64 {
        now.timestamp_millis().rem_euclid(self.seconds() * 1000) as u64
    }

    /// The calls that count against a limit at `now`: the current
    /// window's, plus the previous window's share still inside the span
    /// (rounded down). Whole-number arithmetic, so it is exact.
    pub fn sliding(&self, previous: u32, current: u32, now: DateTime<Utc>) -> u32 {
        let length = self.seconds() as u64 * 1000;
        let carried = u64::from(previous) * (length - self.elapsed_ms(now)) / length;
        u32::try_from(carried)
            .unwrap_or(u32::MAX)
            .saturating_add(current)
    }

    /// When a key refused at `now` (with `previous` and `current` calls
    /// counted) may call again: the first whole second at which the
    /// sliding count is under `limit`.
    pub fn admits_again(
        &self,
        previous: u32,
        current: u32,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, StoreError> {
        let (_, end) = self.at(now)?;
        let length = self.seconds() as u64 * 1000;
        let end_ms = end.timestamp_millis();
        // A carried count c·(L−e)/L is under n exactly when e > L·(c−n)/c,
        // so the first such millisecond is that quotient plus one.
        let first_ms = |carried: u32, room: u32| -> u64 {
            let over = u64::from(carried.saturating_sub(room));
            length * over / u64::from(carried.max(1)) + 1
        };
        let at_ms = if current >= limit {
            // Only in the next window, where this one's calls are carried.
            end_ms + first_ms(current, limit) as i64
        } else {
            end_ms - length as i64 + first_ms(previous, limit - current) as i64
        };
        let at = (at_ms + 999).div_euclid(1000).max(now.timestamp() + 1);
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

/// Counts calls per API key over a sliding window (see [`RateWindow`]).
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

    #[test]
    fn the_time_given_is_the_first_second_a_call_is_admitted() {
        for kind in [RateWindow::Hour, RateWindow::Minute] {
            for (previous, current, limit) in [
                (7, 3, 5),
                (100, 0, 60),
                (0, 9, 9),
                (3, 40, 17),
                (1000, 999, 1000),
            ] {
                for offset in [0, 1, 17, kind.seconds() / 2, kind.seconds() - 1] {
                    let now = at(offset);
                    if kind.decide(previous, current, limit, now).unwrap().allowed {
                        continue;
                    }
                    let again = kind.admits_again(previous, current, limit, now).unwrap();
                    // Counted as the limiters do: this window's calls carry
                    // over once `again` is in the next window.
                    let counts = |t: DateTime<Utc>| {
                        if kind.at(t).unwrap().0 == kind.at(now).unwrap().0 {
                            (previous, current)
                        } else {
                            (current, 0)
                        }
                    };
                    let (p, c) = counts(again);
                    assert!(
                        kind.decide(p, c, limit, again).unwrap().allowed,
                        "{kind:?} {previous} {current} {limit} +{offset}"
                    );
                    let before = again - chrono::Duration::seconds(1);
                    if before > now {
                        let (p, c) = counts(before);
                        assert!(
                            !kind.decide(p, c, limit, before).unwrap().allowed,
                            "{kind:?} {previous} {current} {limit} +{offset}: not the first"
                        );
                    }
                }
            }
        }
    }
}
