//! Web Push on the request surface: the server's public key, and the
//! caller's devices. Called by programs with an API key and by the web
//! application's account page with its session and anti-forgery token.

use actix_web::http::header::USER_AGENT;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use reviewloop_domain::PushSubscriptionId;
use reviewloop_service::TestPush;
use reviewloop_wire::push::{
    OnePushSubscriptionOut, PushSubscriptionDeletedOut, PushSubscriptionIn,
    PushSubscriptionListOut, PushSubscriptionOut, TestPushOut, VapidKeyOut,
};

use crate::auth::KeyOrSession;
use crate::body::{id, Body};
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

/// The resources, relative to `/v1/api/push`.
pub(super) fn resources(t: &mut super::Table) {
    use super::resource;
    resource!(t, "/vapid-key", get => vapid_key);
    resource!(t, "/subscriptions", get => list, post => subscribe);
    resource!(t, "/subscriptions/{id}", delete => unsubscribe);
    resource!(t, "/subscriptions/{id}/test", post => test);
}

pub(super) async fn vapid_key(state: web::Data<AppState>, _caller: KeyOrSession) -> Result {
    let public_key = state.push.public_key().await?;
    Ok(Reply::new(
        StatusCode::OK,
        "VAPID public key retrieved successfully",
        VapidKeyOut { public_key },
    ))
}

pub(super) async fn subscribe(
    state: web::Data<AppState>,
    KeyOrSession(caller): KeyOrSession,
    req: HttpRequest,
    // Read loosely, so that the domain names every bad field at once.
    Body(_, body): Body<PushSubscriptionIn>,
) -> Result {
    let agent = req.headers().get(USER_AGENT).and_then(|v| v.to_str().ok());
    let sub = state.push.subscribe(&caller, &body, agent).await?;
    let shown = PushSubscriptionOut::of(&sub);
    Ok(Reply::new(
        StatusCode::CREATED,
        "Device subscribed successfully",
        OnePushSubscriptionOut {
            subscription: &shown,
        },
    ))
}

pub(super) async fn list(state: web::Data<AppState>, KeyOrSession(caller): KeyOrSession) -> Result {
    let devices = state.push.devices(&caller).await?;
    let shown: Vec<PushSubscriptionOut> = devices.iter().map(PushSubscriptionOut::of).collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Devices retrieved successfully",
        PushSubscriptionListOut {
            subscriptions: &shown,
            count: shown.len(),
        },
    ))
}

pub(super) async fn unsubscribe(
    state: web::Data<AppState>,
    KeyOrSession(caller): KeyOrSession,
    path: web::Path<String>,
) -> Result {
    let subscription_id = id::<PushSubscriptionId>(&path)?;
    state.push.unsubscribe(&caller, &subscription_id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Device removed successfully",
        PushSubscriptionDeletedOut { subscription_id },
    ))
}

pub(super) async fn test(
    state: web::Data<AppState>,
    KeyOrSession(caller): KeyOrSession,
    path: web::Path<String>,
) -> Result {
    let subscription_id = id::<PushSubscriptionId>(&path)?;
    let outcome = state.push.test(&caller, &subscription_id).await?;
    let (result, error) = match outcome {
        TestPush::Sent => ("sent", None),
        TestPush::Removed => ("removed", None),
        TestPush::Failed(why) => ("failed", Some(why)),
    };
    Ok(Reply::new(
        StatusCode::OK,
        "Test push attempted",
        TestPushOut {
            subscription_id,
            result,
            error,
        },
    ))
}
