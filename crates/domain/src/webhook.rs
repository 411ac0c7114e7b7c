//! Webhook subscriptions, deliveries and the retry schedule.

use chrono::{DateTime, Utc};

use crate::error::{TransitionError, ValidationError};
use crate::event::{Event, EventType};
use crate::id::{DeliveryId, EventId, UserId, WebhookId};
use crate::retry::{retry_delay_in, with_jitter};
use crate::text::parse_http_url;
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

/// What a subscription is, as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookRecord {
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
    /// Made with a test-mode key: it receives test events only (and a
    /// live one live events only).
    pub test: bool,
}

/// A subscription: where an account's events are POSTed. Facts are read
/// through `Deref` to [`WebhookRecord`]; it changes only through
/// [`Webhook::change`], which keeps its owner and its reason for being off.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    record: WebhookRecord,
}

kept_in_record!(Webhook, WebhookRecord);

/// What a new subscription is made of. The URL is one the caller has
/// already found safe to call (see [`parse_target_url`] for its form).
#[derive(Debug, Clone, PartialEq)]
pub struct NewWebhook {
    /// Where events are POSTed.
    pub url: String,
    /// Which events.
    pub events: EventFilter,
    /// Signs every delivery.
    pub secret: String,
    /// A note for people.
    pub description: Option<String>,
    /// Made with a test-mode key.
    pub test: bool,
}

/// A change to a subscription; what is `None` stays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebhookChange {
    /// Another target.
    pub url: Option<String>,
    /// Other events.
    pub events: Option<EventFilter>,
    /// Another secret.
    pub secret: Option<String>,
    /// Another note; `Some(None)` clears it.
    pub description: Option<Option<String>>,
    /// On or off.
    pub active: Option<bool>,
}

impl Webhook {
    /// A new subscription of `account_id`, on from the start.
    pub fn create(
        id: WebhookId,
        account_id: UserId,
        fields: NewWebhook,
        now: DateTime<Utc>,
    ) -> Self {
        Self::restore(WebhookRecord {
            id,
            account_id,
            url: fields.url,
            events: fields.events,
            secret: fields.secret,
            description: fields.description,
            active: true,
            disabled_reason: None,
            created_at: now,
            updated_at: now,
            test: fields.test,
        })
    }

    /// Applies `change`. Turning a subscription back on forgets why the
    /// service turned it off; turning it off keeps that reason.
    pub fn change(&mut self, change: WebhookChange, now: DateTime<Utc>) {
        let record = &mut self.record;
        if let Some(url) = change.url {
            record.url = url;
        }
        if let Some(events) = change.events {
            record.events = events;
        }
        if let Some(secret) = change.secret {
            record.secret = secret;
        }
        if let Some(description) = change.description {
            record.description = description;
        }
        if let Some(active) = change.active {
            record.active = active;
            if active {
                record.disabled_reason = None;
            }
        }
        record.updated_at = now;
    }

    /// True when deliveries of `event` go to this subscription now.
    pub fn receives(&self, event: EventType) -> bool {
        self.active && self.events.matches(event)
    }

    /// Whether `event` is for it: its account's, of its mode (test or
    /// live), of a type it asked for.
    pub fn is_for(&self, event: &crate::Event) -> bool {
        self.account_id == event.account_id
            && self.test == event.test
            && self.events.matches(event.event_type)
    }
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

/// What a delivery is, as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRecord {
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

/// One event on its way to one receiver. Facts are read through `Deref` to
/// [`DeliveryRecord`]; attempts and redeliveries move it along its states.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    record: DeliveryRecord,
}

kept_in_record!(Delivery, DeliveryRecord);

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
    /// A delivery of `event` to `url`, due at once. `webhook_id` names the
    /// subscription of a webhook delivery.
    pub fn create(
        id: DeliveryId,
        event: &Event,
        target: DeliveryTarget,
        webhook_id: Option<WebhookId>,
        url: &str,
        now: DateTime<Utc>,
    ) -> Self {
        Self::restore(DeliveryRecord {
            id,
            event_id: event.id,
            event_type: event.event_type,
            account_id: event.account_id,
            target,
            webhook_id,
            url: url.to_owned(),
            status: DeliveryStatus::Pending,
            attempts: 0,
            schedule_start: 0,
            next_attempt_at: now,
            last_attempt_at: None,
            last_status_code: None,
            last_error: None,
            created_at: now,
        })
    }

    /// Points it at `url`: a webhook delivery goes where its subscription
    /// points when it is attempted, not where it pointed when it was made.
    pub fn retarget(&mut self, url: &str) {
        url.clone_into(&mut self.record.url);
    }

    /// Sends it again from `now` with a fresh retry schedule. Only a
    /// delivery that has ended (succeeded or failed) can be sent again: one
    /// still pending is being attempted.
    pub fn redeliver(&mut self, now: DateTime<Utc>) -> Result<(), TransitionError> {
        if self.status == DeliveryStatus::Pending {
            return Err(TransitionError::StillPending);
        }
        let record = &mut self.record;
        record.status = DeliveryStatus::Pending;
        record.schedule_start = record.attempts;
        record.next_attempt_at = now;
        Ok(())
    }

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
        let record = &mut self.record;
        record.attempts += 1;
        record.last_attempt_at = Some(at);
        record.last_status_code = outcome.status_code;
        record.last_error.clone_from(&outcome.error);
        let retry = record.attempts.saturating_sub(record.schedule_start);
        record.status = match (
            outcome.success,
            receiver_exists,
            retry_delay_in(schedule, retry),
        ) {
            (true, _, _) => DeliveryStatus::Succeeded,
            // Nobody left to deliver to, or the schedule is spent.
            (false, false, _) | (false, true, None) => DeliveryStatus::Failed,
            (false, true, Some(pause)) => {
                record.next_attempt_at = at + with_jitter(pause, jitter);
                DeliveryStatus::Pending
            }
        };
        DeliveryAttempt {
            delivery_id: record.id,
            attempt: record.attempts,
            attempted_at: at,
            status_code: outcome.status_code,
            latency_ms: outcome.latency_ms,
            error: outcome.error,
            success: outcome.success,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retry::DEFAULT_RETRY_SCHEDULE;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn pending() -> Delivery {
        use crate::id::ObjectId;
        let event = Event {
            id: EventId::new(ObjectId::from_parts(1, [2; 8])),
            event_type: EventType::RequestCompleted,
            account_id: UserId::new(ObjectId::from_parts(1, [3; 8])),
            request_id: None,
            loop_id: None,
            data: serde_json::Value::Null,
            created_at: t(0),
            test: false,
            facts: Default::default(),
        };
        Delivery::create(
            DeliveryId::new(ObjectId::from_parts(1, [1; 8])),
            &event,
            DeliveryTarget::Webhook,
            Some(WebhookId::new(ObjectId::from_parts(1, [4; 8]))),
            "https://hooks.example.com/in",
            t(0),
        )
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
        redelivered.record_attempt(t(1), failed(500), true, &[], 0.0);
        assert_eq!(redelivered.status, DeliveryStatus::Failed);
        redelivered.redeliver(t(9)).unwrap();
        assert_eq!(
            (redelivered.status, redelivered.next_attempt_at),
            (DeliveryStatus::Pending, t(9))
        );
        redelivered.record_attempt(t(9), failed(500), true, &[5], 0.0);
        assert_eq!(
            redelivered.status,
            DeliveryStatus::Pending,
            "a redelivery starts the schedule again"
        );
    }

    #[test]
    fn only_an_ended_delivery_is_sent_again() {
        let mut d = pending();
        assert_eq!(d.redeliver(t(1)), Err(TransitionError::StillPending));
        let ok = AttemptOutcome {
            status_code: Some(200),
            latency_ms: 1,
            error: None,
            success: true,
        };
        d.record_attempt(t(1), ok, true, &[5], 0.0);
        d.redeliver(t(2)).unwrap();
        assert_eq!((d.schedule_start, d.attempts), (1, 1));
    }

    #[test]
    fn turning_a_subscription_on_forgets_why_it_was_off() {
        use crate::id::ObjectId;
        let mut record = Webhook::create(
            WebhookId::new(ObjectId::from_parts(1, [4; 8])),
            UserId::new(ObjectId::from_parts(1, [3; 8])),
            NewWebhook {
                url: "https://hooks.example.com/in".into(),
                events: EventFilter::All,
                secret: "whsec_0123456789abcdef".into(),
                description: None,
                test: false,
            },
            t(0),
        )
        .into_record();
        record.active = false;
        record.disabled_reason = Some("failing for 5 days".into());
        let mut hook = Webhook::restore(record);
        assert!(!hook.receives(EventType::RequestCreated));
        hook.change(
            WebhookChange {
                description: Some(Some("still off".into())),
                ..WebhookChange::default()
            },
            t(1),
        );
        assert_eq!(hook.disabled_reason.as_deref(), Some("failing for 5 days"));
        hook.change(
            WebhookChange {
                active: Some(true),
                ..WebhookChange::default()
            },
            t(2),
        );
        assert!(hook.receives(EventType::RequestCreated));
        assert_eq!(
            (hook.disabled_reason.clone(), hook.updated_at),
            (None, t(2))
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
