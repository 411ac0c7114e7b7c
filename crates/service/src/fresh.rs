//! A value read from the store and kept in memory for a while: each use
//! need not read the store, and a change another instance makes (a rotated
//! key) is seen once the while is over.

use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// One value and when it was read.
pub(crate) struct Fresh<T> {
    ttl: Duration,
    kept: Mutex<Option<(T, DateTime<Utc>)>>,
}

impl<T: Clone> Fresh<T> {
    /// Keeps a value for `ttl` after it was read.
    pub(crate) fn new(ttl: std::time::Duration) -> Self {
        Self {
            ttl: Duration::from_std(ttl).unwrap_or_default(),
            kept: Mutex::new(None),
        }
    }

    /// The value, if it was read less than the while before `now` (a clock
    /// that went back makes it stale too).
    pub(crate) fn get(&self, now: DateTime<Utc>) -> Option<T> {
        let kept = self.kept.lock().ok()?;
        let (value, at) = kept.as_ref()?;
        let age = now - *at;
        (age >= Duration::zero() && age < self.ttl).then(|| value.clone())
    }

    /// Keeps `value`, read at `now`.
    pub(crate) fn keep(&self, value: T, now: DateTime<Utc>) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = Some((value, now));
        }
    }

    /// Drops the value: the next use reads the store.
    pub(crate) fn forget(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_kept_for_its_while_and_no_longer() {
        let fresh = Fresh::new(std::time::Duration::from_secs(60));
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert_eq!(fresh.get(at), None);
        fresh.keep(7, at);
        assert_eq!(fresh.get(at + Duration::seconds(59)), Some(7));
        assert_eq!(fresh.get(at + Duration::seconds(60)), None);
        assert_eq!(
            fresh.get(at - Duration::seconds(1)),
            None,
            "the clock went back"
        );
        fresh.forget();
        assert_eq!(fresh.get(at), None);
    }
}
