//! Webhook subscriptions, one resource in two dialects: `/v1/api/webhooks`
//! answers in envelope A like the rest of the request surface, and
//! `/v1/webhooks` in the alternate envelope, where `data` is the object
//! itself.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use reviewloop_domain::{Delivery, DeliveryAttempt, DeliveryId, WebhookId};
use reviewloop_service::{ServiceError, WebhookInput, WebhookPatch, WebhookView};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::auth::Caller;
use crate::body::{present_text, Body};
use crate::envelope::{ok, ok_alternate, Surface};
use crate::error::ApiError;
use crate::fallback::request_id;
use crate::state::AppState;

type Result = std::result::Result<HttpResponse, ApiError>;

/// Renders `data` in the envelope of the path; `key` wraps it in envelope A.
fn render(
    req: &HttpRequest,
    status: StatusCode,
    msg: &str,
    key: &str,
    data: impl Serialize,
) -> HttpResponse {
    match Surface::of(req.path()) {
        Surface::Request => ok(status, msg, json!({ key: data })),
        Surface::Alternate => ok_alternate(status, data, request_id(req)),
    }
}

fn fail(req: &HttpRequest) -> impl Fn(ServiceError) -> ApiError + '_ {
    move |error| ApiError::new(error, Surface::of(req.path()))
}

fn id<T: std::str::FromStr>(req: &HttpRequest, raw: &str) -> std::result::Result<T, ApiError> {
    raw.parse().map_err(|_| {
        ApiError::new(
            ServiceError::Refused("Invalid ID format".into()),
            Surface::of(req.path()),
        )
    })
}

fn view(view: &WebhookView) -> Value {
    let mut value = json!(view.webhook);
    if let (Some(secret), Some(map)) = (&view.secret, value.as_object_mut()) {
        map.insert("secret".into(), json!(secret));
    }
    value
}

fn delivery_json(delivery: &Delivery, attempts: &[DeliveryAttempt]) -> Value {
    let mut value = json!(delivery);
    if let Some(map) = value.as_object_mut() {
        map.insert("attempts_made".into(), json!(delivery.attempts));
        map.insert("attempts".into(), json!(attempts));
    }
    value
}

#[derive(Deserialize)]
pub(super) struct CreateWebhook {
    url: Option<String>,
    events: Option<Vec<String>>,
    secret: Option<String>,
    description: Option<String>,
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    Body(body, _): Body<CreateWebhook>,
) -> Result {
    let input = WebhookInput {
        url: body.url,
        events: body.events,
        secret: body.secret,
        description: body.description,
    };
    let created = state
        .webhooks
        .create(&caller.principal, input)
        .await
        .map_err(fail(&req))?;
    Ok(render(
        &req,
        StatusCode::CREATED,
        "Webhook created successfully",
        "webhook",
        view(&created),
    ))
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller, req: HttpRequest) -> Result {
    let webhooks = state
        .webhooks
        .list(&caller.principal)
        .await
        .map_err(fail(&req))?;
    Ok(match Surface::of(req.path()) {
        Surface::Request => ok(
            StatusCode::OK,
            "Webhooks retrieved successfully",
            json!({"webhooks": webhooks, "count": webhooks.len()}),
        ),
        Surface::Alternate => ok_alternate(StatusCode::OK, &webhooks, request_id(&req)),
    })
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result {
    let webhook = state
        .webhooks
        .get(&caller.principal, &id::<WebhookId>(&req, &path)?)
        .await
        .map_err(fail(&req))?;
    Ok(render(
        &req,
        StatusCode::OK,
        "Webhook retrieved successfully",
        "webhook",
        webhook,
    ))
}

#[derive(Deserialize)]
pub(super) struct PatchWebhook {
    url: Option<String>,
    events: Option<Vec<String>>,
    active: Option<bool>,
    secret: Option<String>,
    rotate_secret: Option<bool>,
    #[serde(default, deserialize_with = "present_text")]
    description: Option<Option<String>>,
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    Body(body, _): Body<PatchWebhook>,
) -> Result {
    let webhook_id = id::<WebhookId>(&req, &path)?;
    let patch = WebhookPatch {
        url: body.url,
        events: body.events,
        active: body.active,
        secret: body.secret,
        rotate_secret: body.rotate_secret.unwrap_or(false),
        description: body.description,
    };
    let updated = state
        .webhooks
        .update(&caller.principal, &webhook_id, patch)
        .await
        .map_err(fail(&req))?;
    Ok(render(
        &req,
        StatusCode::OK,
        "Webhook updated successfully",
        "webhook",
        view(&updated),
    ))
}

pub(super) async fn delete(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result {
    let webhook_id = id::<WebhookId>(&req, &path)?;
    state
        .webhooks
        .delete(&caller.principal, &webhook_id)
        .await
        .map_err(fail(&req))?;
    Ok(match Surface::of(req.path()) {
        Surface::Request => ok(
            StatusCode::OK,
            "Webhook deleted successfully",
            json!({"webhook_id": webhook_id}),
        ),
        Surface::Alternate => ok_alternate(
            StatusCode::OK,
            json!({"id": webhook_id, "deleted": true}),
            request_id(&req),
        ),
    })
}

pub(super) async fn deliveries(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result {
    let webhook_id = id::<WebhookId>(&req, &path)?;
    let list = state
        .webhooks
        .deliveries(&caller.principal, &webhook_id)
        .await
        .map_err(fail(&req))?;
    let rendered: Vec<Value> = list.iter().map(|(d, a)| delivery_json(d, a)).collect();
    Ok(match Surface::of(req.path()) {
        Surface::Request => ok(
            StatusCode::OK,
            "Deliveries retrieved successfully",
            json!({"webhook_id": webhook_id, "deliveries": rendered, "count": list.len()}),
        ),
        Surface::Alternate => ok_alternate(StatusCode::OK, rendered, request_id(&req)),
    })
}

pub(super) async fn redeliver(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result {
    let (webhook, delivery) = path.into_inner();
    let (webhook_id, delivery_id) = (
        id::<WebhookId>(&req, &webhook)?,
        id::<DeliveryId>(&req, &delivery)?,
    );
    let queued = state
        .webhooks
        .redeliver(&caller.principal, &webhook_id, &delivery_id)
        .await
        .map_err(fail(&req))?;
    Ok(render(
        &req,
        StatusCode::ACCEPTED,
        "Delivery queued again",
        "delivery",
        delivery_json(&queued, &[]),
    ))
}
