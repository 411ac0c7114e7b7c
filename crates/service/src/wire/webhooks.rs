//! Webhook subscriptions and their deliveries as the API shows them. A
//! subscription's secret is never shown here: it is returned only when it
//! is chosen (at creation, or by an update that sets or rotates it), by the
//! caller that has it.

use reviewloop_domain::{Delivery, DeliveryAttempt, Webhook};
use serde_json::{json, Value};

/// A subscription, without its secret.
pub fn webhook_json(webhook: &Webhook) -> Value {
    json!({
        "id": webhook.id,
        "account_id": webhook.account_id,
        "url": webhook.url,
        "events": webhook.events.names(),
        "description": webhook.description,
        "active": webhook.active,
        "disabled_reason": webhook.disabled_reason,
        "created_at": webhook.created_at,
        "updated_at": webhook.updated_at,
    })
}

fn attempt_json(attempt: &DeliveryAttempt) -> Value {
    json!({
        "delivery_id": attempt.delivery_id,
        "attempt": attempt.attempt,
        "attempted_at": attempt.attempted_at,
        "status_code": attempt.status_code,
        "latency_ms": attempt.latency_ms,
        "error": attempt.error,
        "success": attempt.success,
    })
}

/// A delivery with its attempts so far.
pub fn delivery_json(delivery: &Delivery, attempts: &[DeliveryAttempt]) -> Value {
    json!({
        "id": delivery.id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type.as_str(),
        "account_id": delivery.account_id,
        "target": delivery.target.as_str(),
        "webhook_id": delivery.webhook_id,
        "url": delivery.url,
        "status": delivery.status.as_str(),
        "attempts": attempts.iter().map(attempt_json).collect::<Vec<_>>(),
        "attempts_made": delivery.attempts,
        "next_attempt_at": delivery.next_attempt_at,
        "last_attempt_at": delivery.last_attempt_at,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "created_at": delivery.created_at,
    })
}
