//! The system clock.

use chrono::{DateTime, Utc};
use reviewloop_ports::Clock;

/// The real time, truncated to milliseconds: the precision the stores keep
/// and the API shows, so a value reads back exactly as it was written.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_has_whole_milliseconds() {
        let now = SystemClock.now();
        assert_eq!(now.timestamp_subsec_nanos() % 1_000_000, 0);
        assert!((Utc::now() - now).num_seconds().abs() < 5);
    }
}
