//! Failed sign-ins, counted per email and per client address, so that
//! guessing passwords is slow for one account and for one attacker.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use reviewloop_ports::RateLimitStatus;

use crate::error::OverLimit;

/// Failures allowed per email in a window.
pub const FAILURES_PER_EMAIL: u32 = 5;
/// Failures allowed per client address in a window (an office shares one).
pub const FAILURES_PER_CLIENT: u32 = 30;
/// The window.
pub const WINDOW_MINUTES: i64 = 15;
/// Entries kept at most; the oldest windows go first when full.
const MAX_ENTRIES: usize = 100_000;

/// In-memory counts of one instance. Behind a load balancer an attacker
/// gets each instance's allowance, which is still a few guesses a minute.
#[derive(Debug, Default)]
pub struct SignInThrottle {
    counts: Mutex<HashMap<String, (DateTime<Utc>, u32)>>,
}

impl SignInThrottle {
    fn over(
        counts: &HashMap<String, (DateTime<Utc>, u32)>,
        key: &str,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        let (start, n) = counts.get(key)?;
        let reset = *start + Duration::minutes(WINDOW_MINUTES);
        (*n >= limit && reset > now).then_some(reset)
    }

    /// Refuses with 429 while the email or the client is over its limit.
    pub fn check(&self, email: &str, client: &str, now: DateTime<Utc>) -> Result<(), OverLimit> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let email_key = format!("e:{email}");
        let client_key = format!("c:{client}");
        let (limit, reset) = match Self::over(&counts, &email_key, FAILURES_PER_EMAIL, now) {
            Some(reset) => (FAILURES_PER_EMAIL, reset),
            None => match Self::over(&counts, &client_key, FAILURES_PER_CLIENT, now) {
                Some(reset) => (FAILURES_PER_CLIENT, reset),
                None => return Ok(()),
            },
        };
        Err(OverLimit(RateLimitStatus {
            limit,
            remaining: 0,
            reset_at: reset,
            allowed: false,
        }))
    }

    /// Counts a failure against both.
    pub fn failed(&self, email: &str, client: &str, now: DateTime<Utc>) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if counts.len() >= MAX_ENTRIES {
            let horizon = now - Duration::minutes(WINDOW_MINUTES);
            counts.retain(|_, (start, _)| *start > horizon);
        }
        for key in [format!("e:{email}"), format!("c:{client}")] {
            let entry = counts.entry(key).or_insert((now, 0));
            if entry.0 + Duration::minutes(WINDOW_MINUTES) <= now {
                *entry = (now, 0);
            }
            entry.1 += 1;
        }
    }

    /// A correct password clears the email's count (not the client's).
    pub fn succeeded(&self, email: &str) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.remove(&format!("e:{email}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap() + Duration::minutes(minutes)
    }

    #[test]
    fn an_email_is_locked_after_five_failures_for_the_window() {
        let t = SignInThrottle::default();
        for _ in 0..FAILURES_PER_EMAIL {
            assert!(t.check("a@x.io", "1.1.1.1", at(0)).is_ok());
            t.failed("a@x.io", "1.1.1.1", at(0));
        }
        let Err(OverLimit(status)) = t.check("a@x.io", "2.2.2.2", at(1)) else {
            panic!("the email is locked from any address");
        };
        assert_eq!(status.reset_at, at(WINDOW_MINUTES));
        assert!(
            t.check("b@x.io", "1.1.1.1", at(1)).is_ok(),
            "others are not"
        );
        assert!(t.check("a@x.io", "1.1.1.1", at(WINDOW_MINUTES)).is_ok());
    }

    #[test]
    fn an_address_is_locked_after_many_failures_across_emails() {
        let t = SignInThrottle::default();
        for n in 0..FAILURES_PER_CLIENT {
            t.failed(&format!("u{n}@x.io"), "1.1.1.1", at(0));
        }
        assert!(t.check("new@x.io", "1.1.1.1", at(1)).is_err());
        assert!(t.check("new@x.io", "2.2.2.2", at(1)).is_ok());
    }

    #[test]
    fn success_clears_the_email() {
        let t = SignInThrottle::default();
        for _ in 0..FAILURES_PER_EMAIL - 1 {
            t.failed("a@x.io", "1.1.1.1", at(0));
        }
        t.succeeded("a@x.io");
        t.failed("a@x.io", "1.1.1.1", at(0));
        assert!(t.check("a@x.io", "1.1.1.1", at(0)).is_ok());
    }
}
