//! Webhook subscriptions, deliveries and the retry schedule.

use chrono::{DateTime, Duration, Utc};

use crate::error::ValidationError;
use crate::event::EventType;
use crate::id::{DeliveryId, EventId, UserId, WebhookId};
use crate::request::input::parse_http_url;
use crate::text::{char_len, check_prose};

/// Which events a subscription receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventFilter {
    /// Every event (`["*"]`).
    All,
    /// These events only.
    Only(Vec<EventType>),
}

impl EventFilter {
    /// Parses the `events` list of a subscription: event names, or `*`.
    pub fn parse(names: &[String]) -> Result<Self, ValidationError> {
        if names.is_empty() {
            return Err(ValidationError::field(
                "events",
                "events must name at least one event, or \"*\" for all",
            ));
        }
        if names.iter().any(|n| n == "*") {
            return Ok(Self::All);
        }
        let mut events = Vec::with_capacity(names.len());
        for name in names {
            let event = EventType::parse(name).ok_or_else(|| {
                let known: Vec<&str> = EventType::ALL.iter().map(EventType::as_str).collect();
                ValidationError::field(
                    "events",
                    format!("unknown event '{name}': use \"*\" or {}", known.join(", ")),
                )
            })?;
            if !events.contains(&event) {
                events.push(event);
            }
        }
        Ok(Self::Only(events))
    }

    /// True when the filter lets `event` through.
    pub fn matches(&self, event: EventType) -> bool {
        match self {
            Self::All => true,
            Self::Only(events) => events.contains(&event),
        }
    }

    /// The names, as stored and shown.
    pub fn names(&self) -> Vec<String> {
        match self {
            Self::All => vec!["*".into()],
            Self::Only(events) => events.iter().map(|e| e.as_str().to_owned()).collect(),
        }
    }
}

/// Checks a subscription's description: at most 500 characters.
pub fn parse_description(raw: &str) -> Result<Option<String>, ValidationError> {
    let description = raw.trim();
    if char_len(description) > 500 {
        return Err(ValidationError::field(
            "description",
            "description must be at most 500 characters",
        ));
    }
    check_prose("description", description)?;
    Ok((!description.is_empty()).then(|| description.to_owned()))
}

/// Checks a secret chosen by the client: 16 to 200 visible characters.
pub fn parse_secret(raw: &str) -> Result<String, ValidationError> {
    let valid = (16..=200).contains(&char_len(raw)) && raw.chars().all(|c| c.is_ascii_graphic());
    if !valid {
        return Err(ValidationError::field(
            "secret",
            "secret must be 16 to 200 visible ASCII characters",
        ));
    }
    Ok(raw.to_owned())
}

/// Checks a target URL's form (http or https, with a host).
pub fn parse_target_url(raw: &str) -> Result<String, ValidationError> {
    parse_http_url("url", raw)
}

/// A subscription: where an account's events are POSTed.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    /// The subscription's id.
    pub id: WebhookId,
    /// The account whose events it receives.
    pub account_id: UserId,
    /// Where events are POSTed.
    pub url: String,
    /// Which events.
    pub events: EventFilter,
    /// Signs every delivery; shown only when created or rotated.
    pub secret: String,
    /// A note for people.
    pub description: Option<String>,
    /// Whether deliveries are made.
    pub active: bool,
    /// Why the service turned it off, if it did.
    pub disabled_reason: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// Where a delivery goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryTarget {
    /// A webhook subscription.
    Webhook,
    /// A request's `callback_url`.
    Callback,
}

impl DeliveryTarget {
    /// The stored name, which the API also uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Callback => "callback",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "webhook" => Some(Self::Webhook),
            "callback" => Some(Self::Callback),
            _ => None,
        }
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Waiting for its next attempt.
    Pending,
    /// A receiver answered 2xx.
    Succeeded,
    /// Every attempt of the schedule failed.
    Failed,
}

impl DeliveryStatus {
    /// The stored name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "succeeded" => Some(Self::Succeeded),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// One event on its way to one receiver.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The delivery's id.
    pub id: DeliveryId,
    /// The event delivered; also the `webhook-id` receivers deduplicate by.
    pub event_id: EventId,
    /// The event's name.
    pub event_type: EventType,
    /// The account the event belongs to.
    pub account_id: UserId,
    /// Subscription or callback.
    pub target: DeliveryTarget,
    /// The subscription, for webhook deliveries.
    pub webhook_id: Option<WebhookId>,
    /// Where it is POSTed.
    pub url: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made so far, in all.
    pub attempts: u32,
    /// The attempt count when the retry schedule last started (0, or the
    /// count at the last redelivery).
    pub schedule_start: u32,
    /// When the next attempt is due (pending deliveries).
    pub next_attempt_at: DateTime<Utc>,
    /// When the last attempt was made.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// HTTP status of the last attempt, if the receiver answered.
    pub last_status_code: Option<u16>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When the delivery was created.
    pub created_at: DateTime<Utc>,
}

/// One attempt at a delivery, kept for the record.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryAttempt {
    /// The delivery.
    pub delivery_id: DeliveryId,
    /// Its number, from 1.
    pub attempt: u32,
    /// When it started.
    pub attempted_at: DateTime<Utc>,
    /// HTTP status, if the receiver answered.
    pub status_code: Option<u16>,
    /// How long it took.
    pub latency_ms: u64,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Whether the receiver answered 2xx.
    pub success: bool,
}

/// What one attempt to deliver came to.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptOutcome {
    /// HTTP status, if the receiver answered.
    pub status_code: Option<u16>,
    /// How long it took.
    pub latency_ms: u64,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Whether the receiver answered 2xx.
    pub success: bool,
}

impl Delivery {
    /// Records one attempt that started `at`. A success ends the delivery;
    /// a failure is tried again after the schedule's next pause (spread by
    /// `jitter`, from -1 to 1) while there is still a receiver and the
    /// schedule lasts, and otherwise ends it failed. Returns the attempt,
    /// for the record.
    pub fn record_attempt(
        &mut self,
        at: DateTime<Utc>,
        outcome: AttemptOutcome,
        receiver_exists: bool,
        schedule: &[i64],
        jitter: f64,
    ) -> DeliveryAttempt {
        self.attempts += 1;
        self.last_attempt_at = Some(at);
        self.last_status_code = outcome.status_code;
        self.last_error.clone_from(&outcome.error);
        let retry = self.attempts.saturating_sub(self.schedule_start);
        self.status = match (
            outcome.success,
            receiver_exists,
            retry_delay_in(schedule, retry),
        ) {
            (true, _, _) => DeliveryStatus::Succeeded,
            // Nobody left to deliver to, or the schedule is spent.
            (false, false, _) | (false, true, None) => DeliveryStatus::Failed,
            (false, true, Some(pause)) => {
                self.next_attempt_at = at + with_jitter(pause, jitter);
                DeliveryStatus::Pending
            }
        };
        DeliveryAttempt {
            delivery_id: self.id,
            attempt: self.attempts,
            attempted_at: at,
            status_code: outcome.status_code,
            latency_ms: outcome.latency_ms,
            error: outcome.error,
            success: outcome.success,
        }
    }
}

/// The default pauses between attempts, in seconds: quick at first, then
/// spread over about three days (5 s, 5 min, 30 min, 2 h, 5 h, then 10 h six
/// times: 67 h 35 min in all, 12 attempts).
pub const DEFAULT_RETRY_SCHEDULE: [i64; 11] = [
    5, 300, 1800, 7200, 18_000, 36_000, 36_000, 36_000, 36_000, 36_000, 36_000,
];

/// The pause after `attempts_made` attempts in a schedule of seconds.
pub fn retry_delay_in(schedule: &[i64], attempts_made: u32) -> Option<Duration> {
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
pub fn with_jitter(delay: Duration, spread: f64) -> Duration {
    let spread = spread.clamp(-1.0, 1.0);
    let millis = delay.num_milliseconds() as f64;
    Duration::milliseconds((millis * (1.0 + 0.1 * spread)).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn pending() -> Delivery {
        use crate::id::ObjectId;
        Delivery {
            id: DeliveryId::new(ObjectId::from_parts(1, [1; 8])),
            event_id: EventId::new(ObjectId::from_parts(1, [2; 8])),
            event_type: EventType::RequestCompleted,
            account_id: UserId::new(ObjectId::from_parts(1, [3; 8])),
            target: DeliveryTarget::Webhook,
            webhook_id: Some(WebhookId::new(ObjectId::from_parts(1, [4; 8]))),
            url: "https://hooks.example.com/in".into(),
            status: DeliveryStatus::Pending,
            attempts: 0,
            schedule_start: 0,
            next_attempt_at: t(0),
            last_attempt_at: None,
            last_status_code: None,
            last_error: None,
            created_at: t(0),
        }
    }

    fn failed(code: u16) -> AttemptOutcome {
        AttemptOutcome {
            status_code: Some(code),
            latency_ms: 12,
            error: Some(format!("HTTP {code}")),
            success: false,
        }
    }

    #[test]
    fn a_failed_attempt_waits_for_the_next_pause_then_the_schedule_runs_out() {
        let mut d = pending();
        let first = d.record_attempt(t(0), failed(500), true, &[5, 60], 0.0);
        assert_eq!((first.attempt, first.success), (1, false));
        assert_eq!(d.status, DeliveryStatus::Pending);
        assert_eq!(d.next_attempt_at, t(5));
        assert_eq!(d.last_error.as_deref(), Some("HTTP 500"));
        d.record_attempt(t(5), failed(502), true, &[5, 60], 1.0);
        assert_eq!(d.next_attempt_at, t(5 + 66), "60 s spread by 10 %");
        d.record_attempt(t(71), failed(503), true, &[5, 60], 0.0);
        assert_eq!(d.status, DeliveryStatus::Failed);
        assert_eq!(d.attempts, 3);
    }

    #[test]
    fn a_success_ends_it_and_a_missing_receiver_fails_it_at_once() {
        let mut d = pending();
        let ok = AttemptOutcome {
            status_code: Some(204),
            latency_ms: 3,
            error: None,
            success: true,
        };
        let attempt = d.record_attempt(t(1), ok, true, &DEFAULT_RETRY_SCHEDULE, 0.0);
        assert!(attempt.success);
        assert_eq!(d.status, DeliveryStatus::Succeeded);
        assert_eq!(d.last_status_code, Some(204));

        let mut orphan = pending();
        orphan.record_attempt(t(1), failed(500), false, &DEFAULT_RETRY_SCHEDULE, 0.0);
        assert_eq!(orphan.status, DeliveryStatus::Failed);

        let mut redelivered = pending();
        redelivered.attempts = 12;
        redelivered.schedule_start = 12;
        redelivered.record_attempt(t(1), failed(500), true, &[5], 0.0);
        assert_eq!(
            redelivered.status,
            DeliveryStatus::Pending,
            "a redelivery starts the schedule again"
        );
    }

    #[test]
    fn filters_parse_star_names_and_refuse_unknown() {
        assert_eq!(
            EventFilter::parse(&["*".into(), "request.created".into()]).unwrap(),
            EventFilter::All
        );
        let only =
            EventFilter::parse(&["request.completed".into(), "request.completed".into()]).unwrap();
        assert_eq!(only, EventFilter::Only(vec![EventType::RequestCompleted]));
        assert!(only.matches(EventType::RequestCompleted));
        assert!(!only.matches(EventType::RequestCreated));
        assert!(EventFilter::All.matches(EventType::LoopDeleted));
        assert!(EventFilter::parse(&[]).is_err());
        let err = EventFilter::parse(&["request.exploded".into()]).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("unknown event 'request.exploded'"));
        assert_eq!(only.names(), ["request.completed"]);
        assert_eq!(EventFilter::All.names(), ["*"]);
    }

    #[test]
    fn secrets_descriptions_and_urls_are_checked() {
        assert!(parse_secret("short").is_err());
        assert!(parse_secret("has a space in it!!").is_err());
        assert!(parse_secret("a-long-enough-secret").is_ok());
        assert!(parse_description(&"d".repeat(501)).is_err());
        assert_eq!(parse_description("  ").unwrap(), None);
        assert!(parse_target_url("ftp://x").is_err());
        assert!(parse_target_url("https://hooks.example.com/x").is_ok());
    }

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

    #[test]
    fn statuses_round_trip() {
        for s in [
            DeliveryStatus::Pending,
            DeliveryStatus::Succeeded,
            DeliveryStatus::Failed,
        ] {
            assert_eq!(DeliveryStatus::parse(s.as_str()), Some(s));
        }
    }
}
