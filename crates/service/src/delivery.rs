//! Delivery of outbox events: the dispatcher turns each event into one
//! delivery per matching subscription (and the request's callback), and
//! workers attempt due deliveries, sign them, and retry failures on a
//! schedule of about three days.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::Duration;
use reviewloop_domain::DEFAULT_RETRY_SCHEDULE;
use reviewloop_domain::{
    AttemptOutcome, Delivery, DeliveryId, DeliveryStatus, DeliveryTarget, Event, EventType, UserId,
};
use reviewloop_ports::{
    AttemptResult, Dispatch, LeasedDelivery, Outgoing, SendOutcome, StoreError, TargetShares,
    WebhookHealth,
};

use crate::notices::NoticeService;
use crate::ports::DeliveryPorts;
use crate::signing::delivery_headers;

/// How long a worker holds a delivery: the 10 s a receiver has, plus up to
/// 10 s waiting for a database connection, plus recording, with room to
/// spare. A dead worker's deliveries are taken up again this long after it
/// died.
const LEASE_SECONDS: i64 = 30;
/// What must be left of the lease when the request goes out: the
/// receiver's 10 s and time to record. A worker that waited longer for the
/// database (the pool's wait is configurable) leaves the delivery to the
/// next lease rather than send it while another instance may take it over
/// and send it too.
const SEND_WINDOW_SECONDS: i64 = 15;
/// Deliveries in flight to one URL at most, so a receiver that is slow or
/// down holds a few slots, never all of them.
const PER_TARGET: u32 = 4;
/// Deliveries in flight to the one URL favoured for answering quickly: a
/// fast receiver with a backlog is not held to four at a time. Only one
/// URL holds it at a time, so if it turns slow, half of the worker's 32
/// slots stay for everyone else.
const PER_QUICK_TARGET: u32 = 16;
/// An answer within this long counts as quick.
const QUICK_MS: u64 = 500;
/// A subscription failing this long is turned off.
const DISABLE_AFTER_DAYS: i64 = 5;

/// Dispatch and delivery of events.
#[derive(Clone)]
pub struct DeliveryService {
    ports: DeliveryPorts,
    schedule: Vec<i64>,
    /// This worker's deliveries in flight per URL, and the URLs that
    /// answered its last attempt quickly.
    targets: Arc<Mutex<Targets>>,
    /// Plans the emails and Slack messages of events, when set.
    notices: Option<NoticeService>,
}

/// What one worker knows of the URLs it delivers to.
#[derive(Debug, Default)]
struct Targets {
    in_flight: HashMap<String, u32>,
    quick: std::collections::HashSet<String>,
}

impl Targets {
    /// Every URL's share: the larger one goes to one quick URL only, the
    /// one with the most in flight (so it keeps it while it stays quick).
    /// What other URLs still hold beyond the usual share (a favoured one
    /// that turned slow, with its attempts still out) comes off it, so the
    /// slots above the usual shares never add up to more than one larger
    /// share.
    fn shares(&self) -> TargetShares {
        let load = |url: &String| self.in_flight.get(url).copied().unwrap_or(0);
        let favoured = self
            .quick
            .iter()
            .max_by(|a, b| load(a).cmp(&load(b)).then_with(|| b.cmp(a)));
        let per_url = favoured.map(|url| {
            let held_elsewhere: u32 = self
                .in_flight
                .iter()
                .filter(|(other, _)| *other != url)
                .map(|(_, n)| n.saturating_sub(PER_TARGET))
                .sum();
            let share = PER_QUICK_TARGET
                .saturating_sub(held_elsewhere)
                .max(PER_TARGET);
            (url.clone(), share)
        });
        TargetShares {
            per_target: PER_TARGET,
            per_url: per_url.into_iter().collect(),
            in_flight: self.in_flight.clone(),
        }
    }
}

/// Where the event's own callback goes: a request's when it completes or
/// times out, a review's when it completes.
fn callback_url(event: &Event) -> Option<&str> {
    match event.event_type {
        EventType::RequestCompleted | EventType::RequestTimeout => {
            event.data["request"]["callback_url"].as_str()
        }
        EventType::ReviewCompleted => event.data["callback_url"].as_str(),
        _ => None,
    }
}

impl DeliveryService {
    /// Deletes what only history needs (finished deliveries and their
    /// attempts, dispatched events, run-out sweep leases) older than
    /// `keep`, a batch per transaction; returns how many rows went.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn purge_history(&self, keep: chrono::Duration) -> Result<u64, StoreError> {
        const BATCH: u32 = 1000;
        let before = self.ports.clock.now() - keep;
        let mut purged = 0;
        loop {
            let deleted = self.ports.deliveries.purge_history(before, BATCH).await?;
            purged += deleted;
            if deleted == 0 {
                return Ok(purged);
            }
        }
    }

    /// A service over `ports` with the default retry schedule.
    pub fn new(ports: DeliveryPorts) -> Self {
        Self::with_schedule(ports, DEFAULT_RETRY_SCHEDULE.to_vec())
    }

    /// A service retrying after the given pauses, in seconds.
    pub fn with_schedule(ports: DeliveryPorts, schedule: Vec<i64>) -> Self {
        Self {
            ports,
            schedule,
            targets: Arc::default(),
            notices: None,
        }
    }

    /// Also writes the notices each event causes, in the transaction that
    /// dispatches it: they cannot be lost, nor written twice.
    pub fn announcing(mut self, notices: NoticeService) -> Self {
        self.notices = Some(notices);
        self
    }

    fn delivery(
        &self,
        event: &Event,
        target: DeliveryTarget,
        webhook: Option<&reviewloop_domain::Webhook>,
        url: &str,
    ) -> Delivery {
        let now = self.ports.clock.now();
        Delivery::create(
            DeliveryId::new(self.ports.ids.object_id(now)),
            event,
            target,
            webhook.map(|w| w.id),
            url,
            now,
        )
    }

    /// Turns up to `batch` undispatched events into deliveries; returns how
    /// many events it dispatched.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn dispatch_pending(&self, batch: u32) -> Result<usize, StoreError> {
        let events = self.ports.deliveries.undispatched_events(batch).await?;
        if events.is_empty() {
            return Ok(0);
        }
        let mut accounts: Vec<UserId> = events.iter().map(|e| e.account_id).collect();
        accounts.sort();
        accounts.dedup();
        let webhooks = self.ports.deliveries.active_webhooks_of(&accounts).await?;
        let now = self.ports.clock.now();
        let mut plans = match &self.notices {
            Some(planner) => planner.plan_all(&events).await?,
            None => Vec::new(),
        }
        .into_iter();
        let mut batch = Vec::with_capacity(events.len());
        for event in &events {
            let body = serde_json::to_string(&reviewloop_wire::events::EventBody::of(event))
                .unwrap_or_default();
            let mut list: Vec<(Delivery, String)> = webhooks
                .iter()
                .filter(|w| w.is_for(event))
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
            let planned = plans.next().unwrap_or_default();
            batch.push(Dispatch {
                event: event.id,
                deliveries: list,
                notices: planned.notices,
                answer_links: planned.answer_links,
            });
        }
        // The whole pass in one transaction.
        self.ports.deliveries.dispatch_all(&batch, now).await
    }

    /// Leases up to `batch` due deliveries to this worker.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn lease(&self, batch: u32) -> Result<Vec<LeasedDelivery>, StoreError> {
        let now = self.ports.clock.now();
        let until = now + Duration::seconds(LEASE_SECONDS);
        let shares = self
            .targets
            .lock()
            .map(|t| t.shares())
            .unwrap_or_else(|_| TargetShares::each(PER_TARGET));
        let leased = self
            .ports
            .deliveries
            .lease_due(now, until, batch, &shares)
            .await?;
        if let Ok(mut targets) = self.targets.lock() {
            for l in &leased {
                *targets.in_flight.entry(l.delivery.url.clone()).or_default() += 1;
            }
        }
        Ok(leased)
    }

    /// An attempt at `url` ended: `Some(quick)` when it reached the
    /// receiver (quick: a success within `QUICK_MS`), `None` when nothing
    /// was learnt of the receiver.
    fn done_with(&self, url: &str, quick: Option<bool>) {
        if let Ok(mut targets) = self.targets.lock() {
            if let Some(count) = targets.in_flight.get_mut(url) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    targets.in_flight.remove(url);
                }
            }
            match quick {
                Some(true) => {
                    targets.quick.insert(url.to_owned());
                }
                Some(false) => {
                    targets.quick.remove(url);
                }
                None => {}
            }
        }
    }

    /// Makes one attempt at a leased delivery and records it; returns where
    /// the delivery stands afterwards.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn attempt(&self, leased: LeasedDelivery) -> Result<DeliveryStatus, StoreError> {
        let url = leased.delivery.url.clone();
        let outcome = self.attempt_leased(leased).await;
        let quick = outcome.as_ref().ok().and_then(|(_, quick)| *quick);
        self.done_with(&url, quick);
        outcome.map(|(status, _)| status)
    }

    /// Where a delivery goes now and what signs it: a subscription's current
    /// URL and secret (so an edit or rotation applies to retries too), or the
    /// callback URL and the account's signing secret. `None` when the
    /// subscription or account is gone.
    async fn receiver(&self, delivery: &Delivery) -> Result<Option<(String, String)>, StoreError> {
        Ok(match (delivery.target, delivery.webhook_id) {
            (DeliveryTarget::Webhook, Some(id)) => {
                self.ports.webhooks.webhook_by_id(&id).await?.map(|w| {
                    let w = w.into_record();
                    (w.url, w.secret)
                })
            }
            _ => self
                .ports
                .accounts
                .user_by_id(&delivery.account_id)
                .await?
                .map(|u| (delivery.url.clone(), u.into_record().signing_secret)),
        })
    }

    /// The delivery's state after the attempt, and whether the receiver
    /// answered it quickly (`None`: nothing was sent).
    async fn attempt_leased(
        &self,
        leased: LeasedDelivery,
    ) -> Result<(DeliveryStatus, Option<bool>), StoreError> {
        let LeasedDelivery {
            mut delivery,
            payload,
            leased_until,
        } = leased;
        let receiver = self.receiver(&delivery).await?;
        let started = self.ports.clock.now();
        if leased_until - started < Duration::seconds(SEND_WINDOW_SECONDS) {
            tracing::warn!(
                delivery = %delivery.id,
                "the lease is nearly over before the attempt; left to the next lease"
            );
            return Ok((DeliveryStatus::Pending, None));
        }
        let outcome = match &receiver {
            Some((url, secret)) => {
                let event_id = delivery.event_id.to_string();
                let headers = delivery_headers(
                    secret,
                    &event_id,
                    delivery.event_type.as_str(),
                    started.timestamp(),
                    &payload,
                );
                delivery.retarget(url);
                self.ports
                    .sender
                    .send(&Outgoing {
                        url: url.clone(),
                        headers,
                        body: payload,
                    })
                    .await
            }
            None => SendOutcome {
                status: None,
                latency_ms: 0,
                error: Some("the receiver no longer exists".into()),
            },
        };
        let success = outcome.succeeded();
        // A receiver that no longer exists was not asked.
        let quick = receiver
            .is_some()
            .then_some(success && outcome.latency_ms < QUICK_MS);
        let attempt = delivery.record_attempt(
            started,
            AttemptOutcome {
                status_code: outcome.status,
                latency_ms: outcome.latency_ms,
                error: outcome.error.clone(),
                success,
            },
            receiver.is_some(),
            &self.schedule,
            self.ports.ids.jitter(),
        );
        let health = delivery.webhook_id.filter(|_| receiver.is_some()).map(|webhook_id| WebhookHealth {
            webhook_id,
            success,
            at: started,
            disable_if_failing_since: started - Duration::days(DISABLE_AFTER_DAYS),
            disable_reason: format!(
                "Disabled after {DISABLE_AFTER_DAYS} days in which every delivery failed; last error: {}",
                outcome.error.as_deref().unwrap_or("unknown")
            ),
        });
        match self
            .ports
            .deliveries
            .record_attempt(&delivery, &attempt, health, leased_until)
            .await
        {
            Ok(()) => {
                self.ports.meter.delivery_attempt(match delivery.status {
                    DeliveryStatus::Succeeded => AttemptResult::Succeeded,
                    DeliveryStatus::Pending => AttemptResult::Retrying,
                    DeliveryStatus::Failed => AttemptResult::GaveUp,
                });
                Ok((delivery.status, quick))
            }
            Err(StoreError::Conflict(why)) => {
                // Another worker took the delivery over; its record stands.
                tracing::warn!(delivery = %delivery.id, %why, "attempt not recorded");
                Ok((DeliveryStatus::Pending, quick))
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests;
