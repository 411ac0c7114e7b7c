//! Loop handlers: list, create, read, update, delete.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use reviewloop_domain::LoopId;
use reviewloop_service::LoopPatch;
use serde::Deserialize;
use serde_json::{json, Value};

use super::once::{once, Answer};
use super::views::{invite_json, loop_json};
use crate::auth::Caller;
use crate::body::{id, present, present_text, Body};
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let loops = state.loops.list(&caller.principal).await?;
    let rendered: Vec<_> = loops.iter().map(loop_json).collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Loops retrieved successfully",
        json!({"loops": rendered, "count": loops.len()}),
    ))
}

#[derive(Deserialize)]
pub(super) struct CreateLoop {
    name: Option<String>,
    description: Option<String>,
    icon: Option<String>,
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    Body(body, raw): Body<CreateLoop>,
) -> Answer {
    let (app, principal) = (state.clone(), caller.principal.clone());
    once(&state, &caller, &req, &raw, move |id| async move {
        let (name, description, icon) = (
            body.name.as_deref(),
            body.description.as_deref(),
            body.icon.as_deref(),
        );
        let invite = app
            .loops
            .create(&principal, name, description, icon, id)
            .await?;
        Ok(Reply::new(
            StatusCode::CREATED,
            "Loop created successfully",
            invite_json(&invite),
        ))
    })
    .await
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let lp = state
        .loops
        .get(&caller.principal, &id::<LoopId>(&path)?)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Loop retrieved successfully",
        json!({"loop": loop_json(&lp)}),
    ))
}

#[derive(Deserialize)]
pub(super) struct UpdateLoop {
    name: Option<String>,
    #[serde(default, deserialize_with = "present_text")]
    description: Option<Option<String>>,
    icon: Option<String>,
    #[serde(default, deserialize_with = "present_text")]
    slack_webhook_url: Option<Option<String>>,
    reminders: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    quorum: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    escalation: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    rules: Option<Value>,
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<UpdateLoop>,
) -> Result {
    let patch = LoopPatch {
        name: body.name,
        description: body.description,
        icon: body.icon,
        slack_webhook_url: body.slack_webhook_url,
        reminders: body.reminders,
        quorum: body.quorum,
        escalation: body.escalation,
        rules: body.rules,
    };
    let lp = state
        .loops
        .update(&caller.principal, &id::<LoopId>(&path)?, patch)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Loop updated successfully",
        json!({"loop": loop_json(&lp)}),
    ))
}

/// A sample request, and optionally rules to try in place of the loop's.
#[derive(Deserialize)]
pub(super) struct TestRules {
    #[serde(flatten)]
    sample: super::requests::CreateRequest,
    rules: Option<Value>,
}

/// `POST /loops/{id}/rules/test`: what the loop's rules would do with a
/// request, without making it.
pub(super) async fn test_rules(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<TestRules>,
) -> Result {
    let routing = state
        .requests
        .test_rules(
            &caller.principal,
            &id::<LoopId>(&path)?,
            body.sample.into_input(),
            body.rules,
        )
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Rules tested",
        reviewloop_service::wire::routing_json(&routing),
    ))
}

#[derive(Deserialize)]
pub(super) struct DeleteLoop {
    force: Option<String>,
}

pub(super) async fn delete(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    query: web::Query<DeleteLoop>,
) -> Result {
    let force = match query.force.as_deref() {
        None | Some("false") | Some("0") => false,
        Some("true") | Some("1") => true,
        Some(_) => return Err(ApiError::bad_request("force must be true or false")),
    };
    let loop_id = state
        .loops
        .delete(&caller.principal, &id::<LoopId>(&path)?, force)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Loop deleted successfully",
        json!({"loop_id": loop_id}),
    ))
}
