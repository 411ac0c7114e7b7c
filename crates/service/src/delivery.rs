//! Delivery of outbox events: the dispatcher turns each event into one
//! delivery per matching subscription (and the request's callback), and
//! workers attempt due deliveries, sign them, and retry failures on a
//! schedule of about three days.

use chrono::Duration;
use reviewloop_domain::webhook::{retry_delay_in, with_jitter, DEFAULT_RETRY_SCHEDULE};
use reviewloop_domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, DeliveryTarget, Event, EventType, UserId,
};
use reviewloop_ports::{LeasedDelivery, Outgoing, WebhookHealth};

use crate::error::ServiceError;
use crate::ports::Ports;
use crate::signing::delivery_headers;

/// How long a worker holds a delivery: twice the 10 s a receiver has, so
/// no two workers send the same attempt, yet a delivery whose worker died
/// is taken up again soon.
const LEASE_SECONDS: i64 = 20;
/// A subscription failing this long is turned off.
const DISABLE_AFTER_DAYS: i64 = 5;

/// Dispatch and delivery of events.
#[derive(Clone)]
pub struct DeliveryService {
    ports: Ports,
    schedule: Vec<i64>,
}

fn callback_url(event: &Event) -> Option<&str> {
    matches!(
        event.event_type,
        EventType::RequestCompleted | EventType::RequestTimeout
    )
    .then(|| event.data["request"]["callback_url"].as_str())
    .flatten()
}

impl DeliveryService {
    /// A service over `ports` with the default retry schedule.
    pub fn new(ports: Ports) -> Self {
        Self::with_schedule(ports, DEFAULT_RETRY_SCHEDULE.to_vec())
    }

    /// A service retrying after the given pauses, in seconds.
    pub fn with_schedule(ports: Ports, schedule: Vec<i64>) -> Self {
        Self { ports, schedule }
    }

    fn delivery(
        &self,
        event: &Event,
        target: DeliveryTarget,
        webhook: Option<&reviewloop_domain::Webhook>,
        url: &str,
    ) -> Delivery {
        let now = self.ports.clock.now();
        Delivery {
            id: DeliveryId::new(self.ports.ids.object_id(now)),
            event_id: event.id,
            event_type: event.event_type,
            account_id: event.account_id,
            target,
            webhook_id: webhook.map(|w| w.id),
            url: url.to_owned(),
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: now,
            last_attempt_at: None,
            last_status_code: None,
            last_error: None,
            created_at: now,
        }
    }

    /// Turns up to `batch` undispatched events into deliveries; returns how
    /// many events it dispatched.
    pub async fn dispatch_pending(&self, batch: u32) -> Result<usize, ServiceError> {
        let events = self.ports.deliveries.undispatched_events(batch).await?;
        if events.is_empty() {
            return Ok(0);
        }
        let mut accounts: Vec<UserId> = events.iter().map(|e| e.account_id).collect();
        accounts.sort();
        accounts.dedup();
        let webhooks = self.ports.deliveries.active_webhooks_of(&accounts).await?;
        let now = self.ports.clock.now();
        let mut dispatched = 0;
        for event in &events {
            let body = event.body().to_string();
            let mut list: Vec<(Delivery, String)> = webhooks
                .iter()
                .filter(|w| w.account_id == event.account_id && w.events.matches(event.event_type))
                .map(|w| {
                    (
                        self.delivery(event, DeliveryTarget::Webhook, Some(w), &w.url),
                        body.clone(),
                    )
                })
                .collect();
            if let Some(url) = callback_url(event) {
                list.push((
                    self.delivery(event, DeliveryTarget::Callback, None, url),
                    body.clone(),
                ));
            }
            if self
                .ports
                .deliveries
                .dispatch(&event.id, &list, now)
                .await?
            {
                dispatched += 1;
            }
        }
        Ok(dispatched)
    }

    /// Leases up to `batch` due deliveries to this worker.
    pub async fn lease(&self, batch: u32) -> Result<Vec<LeasedDelivery>, ServiceError> {
        let now = self.ports.clock.now();
        Ok(self
            .ports
            .deliveries
            .lease_due(now, now + Duration::seconds(LEASE_SECONDS), batch)
            .await?)
    }

    /// The secret that signs a delivery now (a rotated secret applies to retries too).
    async fn secret(&self, delivery: &Delivery) -> Result<Option<String>, ServiceError> {
        Ok(match (delivery.target, delivery.webhook_id) {
            (DeliveryTarget::Webhook, Some(id)) => self
                .ports
                .webhooks
                .webhook_by_id(&id)
                .await?
                .map(|w| w.secret),
            _ => self
                .ports
                .accounts
                .user_by_id(&delivery.account_id)
                .await?
                .map(|u| u.signing_secret),
        })
    }

    /// Makes one attempt at a leased delivery and records it; returns where
    /// the delivery stands afterwards.
    pub async fn attempt(&self, leased: LeasedDelivery) -> Result<DeliveryStatus, ServiceError> {
        let LeasedDelivery {
            mut delivery,
            payload,
        } = leased;
        let started = self.ports.clock.now();
        let outcome = match self.secret(&delivery).await? {
            Some(secret) => {
                let headers = delivery_headers(
                    &secret,
                    &delivery.event_id.to_string(),
                    delivery.event_type.as_str(),
                    started.timestamp(),
                    &payload,
                );
                let outgoing = Outgoing {
                    url: delivery.url.clone(),
                    headers,
                    body: payload,
                };
                self.ports.sender.send(&outgoing).await
            }
            // Its subscription or account was deleted meanwhile.
            None => reviewloop_ports::SendOutcome {
                status: None,
                latency_ms: 0,
                error: Some("receiver no longer exists".into()),
            },
        };
        let success = outcome.succeeded();
        delivery.attempts += 1;
        delivery.last_attempt_at = Some(started);
        delivery.last_status_code = outcome.status;
        delivery.last_error = outcome.error.clone();
        delivery.status = if success {
            DeliveryStatus::Succeeded
        } else if let Some(delay) = retry_delay_in(&self.schedule, delivery.attempts) {
            delivery.next_attempt_at = started + with_jitter(delay, self.ports.ids.jitter());
            DeliveryStatus::Pending
        } else {
            DeliveryStatus::Failed
        };
        let attempt = DeliveryAttempt {
            delivery_id: delivery.id,
            attempt: delivery.attempts,
            attempted_at: started,
            status_code: outcome.status,
            latency_ms: outcome.latency_ms,
            error: outcome.error.clone(),
            success,
        };
        let health = delivery.webhook_id.map(|webhook_id| WebhookHealth {
            webhook_id,
            success,
            at: started,
            disable_if_failing_since: started - Duration::days(DISABLE_AFTER_DAYS),
            disable_reason: format!(
                "Disabled after {DISABLE_AFTER_DAYS} days in which every delivery failed; last error: {}",
                outcome.error.as_deref().unwrap_or("unknown")
            ),
        });
        self.ports
            .deliveries
            .record_attempt(&delivery, &attempt, health)
            .await?;
        Ok(delivery.status)
    }
}

#[cfg(test)]
mod tests;
