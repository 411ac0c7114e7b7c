//! Webhook subscriptions and their deliveries. A subscription's secret is
//! shown only when it is chosen (at creation, or by an update that sets or
//! rotates it), to the caller that has it.

use chrono::{DateTime, Utc};
use reviewloop_domain::{Delivery, DeliveryAttempt, DeliveryId, Webhook, WebhookId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::present::present_text;
use crate::schema;

/// A webhook subscription.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Webhook)]
pub struct WebhookOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: WebhookId,
    #[schema(value_type = schema::Id)]
    pub account_id: reviewloop_domain::UserId,
    pub url: &'a str,
    /// Event types, or `*` for every one.
    pub events: Vec<String>,
    pub description: Option<&'a str>,
    pub active: bool,
    /// Why it was turned off, when the service did so.
    pub disabled_reason: Option<&'a str>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Shown when created or rotated only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<&'a str>,
}

impl<'a> WebhookOut<'a> {
    /// `webhook`, without its secret.
    pub fn of(webhook: &'a Webhook) -> Self {
        Self {
            id: webhook.id,
            account_id: webhook.account_id,
            url: &webhook.url,
            events: webhook.events.names(),
            description: webhook.description.as_deref(),
            active: webhook.active,
            disabled_reason: webhook.disabled_reason.as_deref(),
            created_at: webhook.created_at,
            updated_at: webhook.updated_at,
            secret: None,
        }
    }

    /// With the secret just chosen.
    pub fn with_secret(mut self, secret: Option<&'a str>) -> Self {
        self.secret = secret;
        self
    }
}

/// One attempt at a delivery.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Attempt)]
pub struct AttemptOut<'a> {
    #[schema(value_type = schema::Id)]
    pub delivery_id: DeliveryId,
    pub attempt: u32,
    pub attempted_at: DateTime<Utc>,
    pub status_code: Option<u16>,
    pub latency_ms: u64,
    pub error: Option<&'a str>,
    pub success: bool,
}

/// A delivery of one event to one receiver, with its attempts so far.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Delivery)]
pub struct DeliveryOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: DeliveryId,
    #[schema(value_type = schema::Id)]
    pub event_id: reviewloop_domain::EventId,
    #[schema(value_type = schema::EventType)]
    pub event_type: &'static str,
    #[schema(value_type = schema::Id)]
    pub account_id: reviewloop_domain::UserId,
    /// `webhook` or `callback`.
    pub target: &'static str,
    #[schema(value_type = Option<schema::Id>)]
    pub webhook_id: Option<WebhookId>,
    pub url: &'a str,
    /// `pending`, `delivered` or `failed`.
    pub status: &'static str,
    pub attempts: Vec<AttemptOut<'a>>,
    pub attempts_made: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_status_code: Option<u16>,
    pub last_error: Option<&'a str>,
    pub created_at: DateTime<Utc>,
}

impl<'a> DeliveryOut<'a> {
    /// `delivery` with `attempts`.
    pub fn of(delivery: &'a Delivery, attempts: &'a [DeliveryAttempt]) -> Self {
        Self {
            id: delivery.id,
            event_id: delivery.event_id,
            event_type: delivery.event_type.as_str(),
            account_id: delivery.account_id,
            target: delivery.target.as_str(),
            webhook_id: delivery.webhook_id,
            url: &delivery.url,
            status: delivery.status.as_str(),
            attempts: attempts
                .iter()
                .map(|a| AttemptOut {
                    delivery_id: a.delivery_id,
                    attempt: a.attempt,
                    attempted_at: a.attempted_at,
                    status_code: a.status_code,
                    latency_ms: a.latency_ms,
                    error: a.error.as_deref(),
                    success: a.success,
                })
                .collect(),
            attempts_made: delivery.attempts,
            next_attempt_at: Some(delivery.next_attempt_at),
            last_attempt_at: delivery.last_attempt_at,
            last_status_code: delivery.last_status_code,
            last_error: delivery.last_error.as_deref(),
            created_at: delivery.created_at,
        }
    }
}

/// A new webhook subscription.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewWebhook, example = json!({"url": "https://example.com/hooks/reviewloop", "events": ["request.completed", "request.timeout"]}))]
pub struct NewWebhookIn {
    /// Where events are POSTed (http or https).
    #[schema(value_type = String)]
    pub url: Option<String>,
    /// Event types, or `*` for every one.
    #[schema(value_type = Vec<schema::EventType>)]
    pub events: Option<Vec<String>>,
    /// `whsec_` and base64; generated when absent.
    pub secret: Option<String>,
    pub description: Option<String>,
}

/// A change to a subscription; what is absent stays.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = WebhookPatch)]
pub struct WebhookPatchIn {
    pub url: Option<String>,
    #[schema(value_type = Option<Vec<schema::EventType>>)]
    pub events: Option<Vec<String>>,
    pub active: Option<bool>,
    pub secret: Option<String>,
    /// A new secret, shown in the answer.
    pub rotate_secret: Option<bool>,
    /// `null` clears it.
    #[serde(default, deserialize_with = "present_text")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
}

/// `{"webhook": ...}`: one subscription on the request surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = OneWebhook)]
pub struct OneWebhookOut<'a> {
    pub webhook: &'a WebhookOut<'a>,
}

/// The caller's subscriptions on the request surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WebhookList)]
pub struct WebhookListOut<'a> {
    pub webhooks: &'a [WebhookOut<'a>],
    pub count: usize,
}

/// A deleted subscription on the request surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = WebhookDeleted)]
pub struct WebhookDeletedOut {
    #[schema(value_type = schema::Id)]
    pub webhook_id: WebhookId,
}

/// A subscription's deliveries on the request surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = DeliveryList)]
pub struct DeliveryListOut<'a> {
    #[schema(value_type = schema::Id)]
    pub webhook_id: WebhookId,
    pub deliveries: &'a [DeliveryOut<'a>],
    pub count: usize,
}

/// `{"delivery": ...}`: one delivery on the request surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = OneDelivery)]
pub struct OneDeliveryOut<'a> {
    pub delivery: &'a DeliveryOut<'a>,
}
