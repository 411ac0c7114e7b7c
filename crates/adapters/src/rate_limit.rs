//! Per-key call counting in fixed hourly windows, kept in memory: right for
//! one instance on SQLite, where it adds no database write to each call.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reviewloop_domain::ApiKeyId;
use reviewloop_ports::{RateLimitStatus, RateLimiter, StoreError};

const WINDOW_SECONDS: i64 = 3600;

/// The hourly window (aligned to the hour, UTC) `now` falls in, and when
/// it ends. Both limiters count in these windows.
pub(crate) fn hour_window(now: DateTime<Utc>) -> Result<(i64, DateTime<Utc>), StoreError> {
    let window = now.timestamp().div_euclid(WINDOW_SECONDS);
    let reset_at = DateTime::from_timestamp((window + 1) * WINDOW_SECONDS, 0)
        .ok_or_else(|| StoreError::Internal("rate limit window out of range".into()))?;
    Ok((window, reset_at))
}

/// Counts calls per key in windows aligned to the hour (UTC).
#[derive(Debug, Default)]
pub struct InMemoryRateLimiter {
    windows: Mutex<HashMap<ApiKeyId, (i64, u32)>>,
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
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<RateLimitStatus, StoreError> {
        let (window, reset_at) = hour_window(now)?;
        let mut windows = self
            .windows
            .lock()
            .map_err(|_| StoreError::Internal("rate limiter lock poisoned".into()))?;
        let entry = windows.entry(*key).or_insert((window, 0));
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
        let first = limiter.hit(&key(1), 2, at(0)).await.unwrap();
        assert_eq!((first.allowed, first.remaining), (true, 1));
        assert_eq!(first.reset_at.timestamp() % 3600, 0);
        assert!(first.reset_at > at(0));
        assert!(limiter.hit(&key(1), 2, at(1)).await.unwrap().allowed);
        let third = limiter.hit(&key(1), 2, at(2)).await.unwrap();
        assert_eq!((third.allowed, third.remaining), (false, 0));
        let next_hour = limiter.hit(&key(1), 2, first.reset_at).await.unwrap();
        assert_eq!((next_hour.allowed, next_hour.remaining), (true, 1));
    }

    #[tokio::test]
    async fn keys_are_counted_apart() {
        let limiter = InMemoryRateLimiter::new();
        assert!(limiter.hit(&key(1), 1, at(0)).await.unwrap().allowed);
        assert!(!limiter.hit(&key(1), 1, at(0)).await.unwrap().allowed);
        assert!(limiter.hit(&key(2), 1, at(0)).await.unwrap().allowed);
    }
}
