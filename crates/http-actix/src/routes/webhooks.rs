//! Webhook subscriptions, one resource on both surfaces: `/v1/api/webhooks`
//! answers in envelope A like the rest of the request surface, and
//! `/v1/webhooks` in the alternate envelope, where `data` is the object
//! itself. The handlers are mounted twice ([`routes`], [`resources`]) and
//! answer a [`Reply`] that takes the shape of whichever surface routed it.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{DeliveryId, WebhookId};
use reviewloop_service::wire::{delivery_json, webhook_json};
use reviewloop_service::{WebhookInput, WebhookPatch, WebhookView};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::auth::Caller;
use crate::body::{id, present_text, Body};
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

/// The webhook routes of `/v1/api`, under `/webhooks`.
pub(super) fn routes(t: &mut super::Table) {
    let seen = &mut *t.seen;
    t.cfg.service(
        web::scope("/webhooks")
            .configure(|cfg| resources(&mut super::Table::scoped(cfg, "/v1/api/webhooks", seen))),
    );
}

/// The webhook resources, relative to where they are mounted.
pub(super) fn resources(t: &mut super::Table) {
    use super::resource;
    resource!(t, "", get => list, post => create);
    resource!(t, "/{id}", get => get, patch => update, delete => delete);
    resource!(t, "/{id}/deliveries", get => deliveries);
    resource!(t, "/{id}/deliveries/{delivery_id}/redeliver", post => redeliver);
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

pub(super) async fn create(
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
    let created = state.webhooks.create(&caller.principal, input).await?;
    Ok(Reply::named(
        StatusCode::CREATED,
        "Webhook created successfully",
        "webhook",
        view(&created),
    ))
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let webhooks = state.webhooks.list(&caller.principal).await?;
    let list = webhooks.iter().map(webhook_json).collect();
    Ok(Reply::list(
        "Webhooks retrieved successfully",
        "webhooks",
        list,
        Map::new(),
    ))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let webhook = state
        .webhooks
        .get(&caller.principal, &id::<WebhookId>(&path)?)
        .await?;
    Ok(Reply::named(
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

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<PatchWebhook>,
) -> Result {
    let webhook_id = id::<WebhookId>(&path)?;
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
        .await?;
    Ok(Reply::named(
        StatusCode::OK,
        "Webhook updated successfully",
        "webhook",
        view(&updated),
    ))
}

pub(super) async fn delete(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let webhook_id = id::<WebhookId>(&path)?;
    state
        .webhooks
        .delete(&caller.principal, &webhook_id)
        .await?;
    // Each surface has its own way to say a deletion happened.
    Ok(Reply::each(
        StatusCode::OK,
        "Webhook deleted successfully",
        json!({"webhook_id": webhook_id}),
        json!({"id": webhook_id, "deleted": true}),
    ))
}

pub(super) async fn deliveries(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let webhook_id = id::<WebhookId>(&path)?;
    let list = state
        .webhooks
        .deliveries(&caller.principal, &webhook_id)
        .await?;
    let rendered: Vec<Value> = list.iter().map(|(d, a)| delivery_json(d, a)).collect();
    let mut about = Map::new();
    about.insert("webhook_id".into(), json!(webhook_id));
    Ok(Reply::list(
        "Deliveries retrieved successfully",
        "deliveries",
        rendered,
        about,
    ))
}

pub(super) async fn redeliver(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
) -> Result {
    let (webhook, delivery) = path.into_inner();
    let (webhook_id, delivery_id) = (id::<WebhookId>(&webhook)?, id::<DeliveryId>(&delivery)?);
    let queued = state
        .webhooks
        .redeliver(&caller.principal, &webhook_id, &delivery_id)
        .await?;
    Ok(Reply::named(
        StatusCode::ACCEPTED,
        "Delivery queued again",
        "delivery",
        delivery_json(&queued, &[]),
    ))
}
