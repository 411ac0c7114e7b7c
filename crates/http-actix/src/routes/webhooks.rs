//! Webhook subscriptions, one resource on both surfaces: `/v1/api/webhooks`
//! answers in envelope A like the rest of the request surface, and
//! `/v1/webhooks` in the alternate envelope, where `data` is the object
//! itself. The handlers are mounted twice ([`routes`], [`resources`]) and
//! answer a [`Reply`] that takes the shape of whichever surface routed it.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{DeliveryId, WebhookId};
use reviewloop_service::{WebhookInput, WebhookPatch, WebhookView};
use reviewloop_wire::alternate::DeletedOut;
use reviewloop_wire::webhooks::{
    DeliveryListOut, DeliveryOut, NewWebhookIn, OneDeliveryOut, OneWebhookOut, WebhookDeletedOut,
    WebhookListOut, WebhookOut, WebhookPatchIn,
};

use crate::auth::Caller;
use crate::body::{id, Body};
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

fn view(view: &WebhookView) -> WebhookOut<'_> {
    WebhookOut::of(&view.webhook).with_secret(view.secret.as_deref())
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<NewWebhookIn>,
) -> Result {
    let input = WebhookInput {
        url: body.url,
        events: body.events,
        secret: body.secret,
        description: body.description,
    };
    let created = state.webhooks.create(&caller.principal, input).await?;
    Ok(one(
        StatusCode::CREATED,
        "Webhook created successfully",
        view(&created),
    ))
}

/// One subscription: `{"webhook": ...}` in envelope A, itself in B.
fn one(status: StatusCode, msg: &'static str, webhook: WebhookOut<'_>) -> Reply {
    Reply::each(status, msg, OneWebhookOut { webhook: &webhook }, &webhook)
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let webhooks = state.webhooks.list(&caller.principal).await?;
    let shown: Vec<WebhookOut> = webhooks.iter().map(WebhookOut::of).collect();
    Ok(Reply::each(
        StatusCode::OK,
        "Webhooks retrieved successfully",
        WebhookListOut {
            webhooks: &shown,
            count: shown.len(),
        },
        &shown,
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
    Ok(one(
        StatusCode::OK,
        "Webhook retrieved successfully",
        WebhookOut::of(&webhook),
    ))
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<WebhookPatchIn>,
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
    Ok(one(
        StatusCode::OK,
        "Webhook updated successfully",
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
        WebhookDeletedOut { webhook_id },
        DeletedOut {
            id: webhook_id.to_string(),
            deleted: true,
        },
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
    let shown: Vec<DeliveryOut> = list.iter().map(|(d, a)| DeliveryOut::of(d, a)).collect();
    Ok(Reply::each(
        StatusCode::OK,
        "Deliveries retrieved successfully",
        DeliveryListOut {
            webhook_id,
            deliveries: &shown,
            count: shown.len(),
        },
        &shown,
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
    let delivery = DeliveryOut::of(&queued, &[]);
    Ok(Reply::each(
        StatusCode::ACCEPTED,
        "Delivery queued again",
        OneDeliveryOut {
            delivery: &delivery,
        },
        &delivery,
    ))
}
