//! Webhook subscriptions, one resource in two dialects: `/v1/api/webhooks`
//! answers in envelope A like the rest of the request surface, and
//! `/v1/webhooks` in the alternate envelope, where `data` is the object
//! itself. The route table picks the dialect ([`routes`] is mounted once
//! per scope with its [`Dialect`]); each handler calls one service and
//! renders in it.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use reviewloop_domain::{DeliveryId, WebhookId};
use reviewloop_service::wire::{delivery_json, webhook_json};
use reviewloop_service::{ServiceError, WebhookInput, WebhookPatch, WebhookView};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::auth::Caller;
use crate::body::{present_text, Body};
use crate::envelope::{ok, ok_alternate, Surface};
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<HttpResponse, ApiError>;

/// The envelope a mount of these routes answers in.
pub(super) trait Dialect: 'static {
    /// Its surface.
    const SURFACE: Surface;
}

/// `/v1/api/webhooks`: envelope A.
pub(super) struct EnvelopeA;
impl Dialect for EnvelopeA {
    const SURFACE: Surface = Surface::Request;
}

/// `/v1/webhooks`: envelope B.
pub(super) struct EnvelopeB;
impl Dialect for EnvelopeB {
    const SURFACE: Surface = Surface::Alternate;
}

/// The webhook routes, answering in `D`.
pub(super) fn routes<D: Dialect>(t: &mut super::Table) {
    use super::resource;
    resource!(t, "/webhooks", get => list::<D>, post => create::<D>);
    resource!(t, "/webhooks/{id}", get => get::<D>, patch => update::<D>, delete => delete::<D>);
    resource!(t, "/webhooks/{id}/deliveries", get => deliveries::<D>);
    resource!(t, "/webhooks/{id}/deliveries/{delivery_id}/redeliver", post => redeliver::<D>);
}

/// Renders `data` in `D`; `key` wraps it in envelope A.
fn render<D: Dialect>(
    status: StatusCode,
    msg: &str,
    key: &str,
    data: impl Serialize,
) -> HttpResponse {
    match D::SURFACE {
        Surface::Request => ok(status, msg, json!({ key: data })),
        Surface::Alternate => ok_alternate(status, data),
    }
}

/// Renders a list: `{key: [...], "count"}` in envelope A, the list itself in B.
fn render_list<D: Dialect>(msg: &str, extra: Value, key: &str, list: Vec<Value>) -> HttpResponse {
    match D::SURFACE {
        Surface::Request => {
            let mut data = extra;
            data["count"] = json!(list.len());
            data[key] = Value::Array(list);
            ok(StatusCode::OK, msg, data)
        }
        Surface::Alternate => ok_alternate(StatusCode::OK, list),
    }
}

fn fail<D: Dialect>(error: ServiceError) -> ApiError {
    ApiError::new(error, D::SURFACE)
}

fn id<D: Dialect, T: std::str::FromStr>(raw: &str) -> std::result::Result<T, ApiError> {
    crate::body::id_in(raw, D::SURFACE)
}

fn view(view: &WebhookView) -> Value {
    let mut value = webhook_json(&view.webhook);
    if let (Some(secret), Some(map)) = (&view.secret, value.as_object_mut()) {
        map.insert("secret".into(), json!(secret));
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

pub(super) async fn create<D: Dialect>(
    state: web::Data<AppState>,
    caller: Caller,
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
        .map_err(fail::<D>)?;
    Ok(render::<D>(
        StatusCode::CREATED,
        "Webhook created successfully",
        "webhook",
        view(&created),
    ))
}

pub(super) async fn list<D: Dialect>(state: web::Data<AppState>, caller: Caller) -> Result {
    let webhooks = state
        .webhooks
        .list(&caller.principal)
        .await
        .map_err(fail::<D>)?;
    let list = webhooks.iter().map(webhook_json).collect();
    Ok(render_list::<D>(
        "Webhooks retrieved successfully",
        json!({}),
        "webhooks",
        list,
    ))
}

pub(super) async fn get<D: Dialect>(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let webhook = state
        .webhooks
        .get(&caller.principal, &id::<D, WebhookId>(&path)?)
        .await
        .map_err(fail::<D>)?;
    Ok(render::<D>(
        StatusCode::OK,
        "Webhook retrieved successfully",
        "webhook",
        webhook_json(&webhook),
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

pub(super) async fn update<D: Dialect>(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<PatchWebhook>,
) -> Result {
    let webhook_id = id::<D, WebhookId>(&path)?;
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
        .map_err(fail::<D>)?;
    Ok(render::<D>(
        StatusCode::OK,
        "Webhook updated successfully",
        "webhook",
        view(&updated),
    ))
}

pub(super) async fn delete<D: Dialect>(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let webhook_id = id::<D, WebhookId>(&path)?;
    state
        .webhooks
        .delete(&caller.principal, &webhook_id)
        .await
        .map_err(fail::<D>)?;
    Ok(match D::SURFACE {
        Surface::Request => ok(
            StatusCode::OK,
            "Webhook deleted successfully",
            json!({"webhook_id": webhook_id}),
        ),
        Surface::Alternate => {
            ok_alternate(StatusCode::OK, json!({"id": webhook_id, "deleted": true}))
        }
    })
}

pub(super) async fn deliveries<D: Dialect>(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let webhook_id = id::<D, WebhookId>(&path)?;
    let list = state
        .webhooks
        .deliveries(&caller.principal, &webhook_id)
        .await
        .map_err(fail::<D>)?;
    let rendered: Vec<Value> = list.iter().map(|(d, a)| delivery_json(d, a)).collect();
    Ok(render_list::<D>(
        "Deliveries retrieved successfully",
        json!({"webhook_id": webhook_id}),
        "deliveries",
        rendered,
    ))
}

pub(super) async fn redeliver<D: Dialect>(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
) -> Result {
    let (webhook, delivery) = path.into_inner();
    let (webhook_id, delivery_id) = (
        id::<D, WebhookId>(&webhook)?,
        id::<D, DeliveryId>(&delivery)?,
    );
    let queued = state
        .webhooks
        .redeliver(&caller.principal, &webhook_id, &delivery_id)
        .await
        .map_err(fail::<D>)?;
    Ok(render::<D>(
        StatusCode::ACCEPTED,
        "Delivery queued again",
        "delivery",
        delivery_json(&queued, &[]),
    ))
}
