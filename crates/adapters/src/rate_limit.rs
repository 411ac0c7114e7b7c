//! Per-key call counting over a sliding hour (request surface) or minute
//! (alternate surface), kept in memory: right for one instance on SQLite,
//! where it adds no database write to each call.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::ApiKeyId;
use reviewloop_ports::{RateLimitStatus, RateLimiter, RateWindow, StoreError};

/// One key's counts: the window they are of, its calls, and the calls of
/// the window before it.
#[derive(Debug, Clone, Copy)]
struct Counts {
    window: i64,
    current: u32,
    previous: u32,
}

/// Counts calls per key and window kind, in windows aligned to the hour or
/// the minute (UTC), and judges each call by the sliding estimate.
#[derive(Debug, Default)]
pub struct InMemoryRateLimiter {
    windows: Mutex<HashMap<(ApiKeyId, RateWindow), Counts>>,
}

impl InMemoryRateLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl RateLimiter for InMemoryRateLimiter {
    async fn hit(
        &self,
        key: &ApiKeyId,
        kind: RateWindow,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<RateLimitStatus, StoreError> {
        let (window, _) = kind.at(now)?;
        let mut windows = self
            .windows
            .lock()
            .map_err(|_| StoreError::Internal("rate limiter lock poisoned".into()))?;
        let counts = windows.entry((*key, kind)).or_insert(Counts {
            window,
            current: 0,
            previous: 0,
        });
        if counts.window != window {
            // The window just past carries over; older ones do not.
            let previous = if counts.window + 1 == window {
                counts.current
            } else {
                0
            };
            *counts = Counts {
                window,
                current: 0,
                previous,
            };
        }
        let status = kind.decide(counts.previous, counts.current, limit, now)?;
        if status.allowed {
            counts.current += 1;
        }
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reviewloop_domain::ObjectId;

    fn key(n: u8) -> ApiKeyId {
        ApiKeyId::new(ObjectId::from_parts(1, [n; 8]))
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    #[tokio::test]
    async fn counts_down_then_refuses_until_the_last_hours_calls_weigh_less() {
        let limiter = InMemoryRateLimiter::new();
        let hour = RateWindow::Hour;
        let first = limiter.hit(&key(1), hour, 2, at(0)).await.unwrap();
        assert_eq!((first.allowed, first.remaining), (true, 1));
        assert_eq!(first.reset_at.timestamp() % 3600, 0);
        assert!(first.reset_at > at(0));
        assert!(limiter.hit(&key(1), hour, 2, at(1)).await.unwrap().allowed);
        let third = limiter.hit(&key(1), hour, 2, at(2)).await.unwrap();
        assert_eq!((third.allowed, third.remaining), (false, 0));
        assert_eq!(third.reset_at, at(3601), "told when it may call again");
        assert!(
            !limiter
                .hit(&key(1), hour, 2, at(3600))
                .await
                .unwrap()
                .allowed,
            "a new hour does not wipe the last one's calls: no burst of twice the limit"
        );
        let next_hour = limiter.hit(&key(1), hour, 2, third.reset_at).await.unwrap();
        assert_eq!((next_hour.allowed, next_hour.remaining), (true, 0));
        let later = limiter
            .hit(&key(1), hour, 2, at(3600 + 3599))
            .await
            .unwrap();
        assert!(
            later.allowed,
            "by the end of the hour the last one hardly counts"
        );
    }

    #[tokio::test]
    async fn keys_are_counted_apart() {
        let limiter = InMemoryRateLimiter::new();
        let hour = RateWindow::Hour;
        assert!(limiter.hit(&key(1), hour, 1, at(0)).await.unwrap().allowed);
        assert!(!limiter.hit(&key(1), hour, 1, at(0)).await.unwrap().allowed);
        assert!(limiter.hit(&key(2), hour, 1, at(0)).await.unwrap().allowed);
    }

    #[tokio::test]
    async fn the_minute_window_is_counted_apart_and_slides_by_the_minute() {
        let limiter = InMemoryRateLimiter::new();
        let minute = RateWindow::Minute;
        assert!(
            limiter
                .hit(&key(1), RateWindow::Hour, 1, at(0))
                .await
                .unwrap()
                .allowed
        );
        let first = limiter.hit(&key(1), minute, 1, at(0)).await.unwrap();
        assert!(first.allowed, "the hourly count does not use the minute's");
        assert_eq!(first.reset_at.timestamp() % 60, 0);
        assert!(first.reset_at - at(0) <= chrono::Duration::seconds(60));
        let refused = limiter.hit(&key(1), minute, 1, at(1)).await.unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.reset_at, at(61));
        assert!(
            limiter
                .hit(&key(1), minute, 1, refused.reset_at)
                .await
                .unwrap()
                .allowed
        );
    }
}
