//! Per-key call counting in fixed windows (hourly for the request surface,
//! per minute for the alternate surface), kept in memory: right for one
//! instance on SQLite, where it adds no database write to each call.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::ApiKeyId;
use reviewloop_ports::{RateLimitStatus, RateLimiter, RateWindow, StoreError};

/// Counts calls per key and window kind, in windows aligned to the hour or
/// the minute (UTC).
#[derive(Debug, Default)]
pub struct InMemoryRateLimiter {
    windows: Mutex<HashMap<(ApiKeyId, RateWindow), (i64, u32)>>,
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
        let (window, reset_at) = kind.at(now)?;
        let mut windows = self
            .windows
            .lock()
            .map_err(|_| StoreError::Internal("rate limiter lock poisoned".into()))?;
        let entry = windows.entry((*key, kind)).or_insert((window, 0));
        if entry.0 != window {
            *entry = (window, 0);
        }
        let allowed = entry.1 < limit;
        if allowed {
            entry.1 += 1;
        }
        Ok(RateLimitStatus {
            limit,
            remaining: limit.saturating_sub(entry.1),
            reset_at,
            allowed,
        })
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
    async fn counts_down_then_refuses_until_the_next_hour() {
        let limiter = InMemoryRateLimiter::new();
        let hour = RateWindow::Hour;
        let first = limiter.hit(&key(1), hour, 2, at(0)).await.unwrap();
        assert_eq!((first.allowed, first.remaining), (true, 1));
        assert_eq!(first.reset_at.timestamp() % 3600, 0);
        assert!(first.reset_at > at(0));
        assert!(limiter.hit(&key(1), hour, 2, at(1)).await.unwrap().allowed);
        let third = limiter.hit(&key(1), hour, 2, at(2)).await.unwrap();
        assert_eq!((third.allowed, third.remaining), (false, 0));
        let next_hour = limiter.hit(&key(1), hour, 2, first.reset_at).await.unwrap();
        assert_eq!((next_hour.allowed, next_hour.remaining), (true, 1));
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
    async fn the_minute_window_is_counted_apart_and_resets_each_minute() {
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
        assert!(
            !limiter
                .hit(&key(1), minute, 1, at(1))
                .await
                .unwrap()
                .allowed
        );
        assert!(
            limiter
                .hit(&key(1), minute, 1, first.reset_at)
                .await
                .unwrap()
                .allowed
        );
    }
}
