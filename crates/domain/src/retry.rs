//! When a failed delivery or notice is tried again: a schedule of pauses,
//! spread a little so that receivers coming back are not hit at once.
//! Webhook deliveries and notices (email, Slack) share it.

use chrono::Duration;

/// The default pauses between attempts, in seconds: quick at first, then
/// spread over about three days (5 s, 5 min, 30 min, 2 h, 5 h, then 10 h six
/// times: 67 h 35 min in all, 12 attempts).
pub const DEFAULT_RETRY_SCHEDULE: [i64; 11] = [
    5, 300, 1800, 7200, 18_000, 36_000, 36_000, 36_000, 36_000, 36_000, 36_000,
];

/// The pause after `attempts_made` attempts in a schedule of seconds.
pub(crate) fn retry_delay_in(schedule: &[i64], attempts_made: u32) -> Option<Duration> {
    let index = usize::try_from(attempts_made).ok()?.checked_sub(1)?;
    schedule.get(index).map(|s| Duration::seconds(*s))
}

/// Parses a schedule written as comma-separated seconds (`5,300,1800`).
pub fn parse_retry_schedule(raw: &str) -> Result<Vec<i64>, String> {
    raw.split(',')
        .map(|part| {
            part.trim()
                .parse::<i64>()
                .ok()
                .filter(|s| (1..=7 * 24 * 3600).contains(s))
                .ok_or_else(|| {
                    format!(
                        "'{}' is not a number of seconds from 1 to 604800",
                        part.trim()
                    )
                })
        })
        .collect()
}

/// Spreads a delay by up to ±10 % so that receivers coming back from an
/// outage are not hit by every retry at once. `spread` is in [-1, 1].
pub(crate) fn with_jitter(delay: Duration, spread: f64) -> Duration {
    let spread = spread.clamp(-1.0, 1.0);
    let millis = delay.num_milliseconds() as f64;
    Duration::milliseconds((millis * (1.0 + 0.1 * spread)).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_spans_about_three_days_then_stops() {
        let total: i64 = (1..=11)
            .map(|n| {
                retry_delay_in(&DEFAULT_RETRY_SCHEDULE, n)
                    .unwrap()
                    .num_seconds()
            })
            .sum();
        assert_eq!(total, 67 * 3600 + 35 * 60 + 5);
        assert_eq!(
            retry_delay_in(&DEFAULT_RETRY_SCHEDULE, 1),
            Some(Duration::seconds(5))
        );
        assert_eq!(
            retry_delay_in(&DEFAULT_RETRY_SCHEDULE, 2),
            Some(Duration::minutes(5))
        );
        assert_eq!(retry_delay_in(&DEFAULT_RETRY_SCHEDULE, 12), None);
        assert_eq!(retry_delay_in(&DEFAULT_RETRY_SCHEDULE, 0), None);
    }

    #[test]
    fn schedules_parse_from_seconds() {
        assert_eq!(parse_retry_schedule("1, 2,3").unwrap(), vec![1, 2, 3]);
        assert!(parse_retry_schedule("1,x").is_err());
        assert!(parse_retry_schedule("0").is_err());
        assert_eq!(retry_delay_in(&[1, 2], 2), Some(Duration::seconds(2)));
        assert_eq!(retry_delay_in(&[1, 2], 3), None);
    }

    #[test]
    fn jitter_stays_within_ten_percent() {
        let base = Duration::seconds(100);
        assert_eq!(with_jitter(base, 1.0), Duration::seconds(110));
        assert_eq!(with_jitter(base, -1.0), Duration::seconds(90));
        assert_eq!(with_jitter(base, 5.0), Duration::seconds(110));
        assert_eq!(with_jitter(base, 0.0), base);
    }
}
