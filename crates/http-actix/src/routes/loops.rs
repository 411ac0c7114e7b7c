//! Loop handlers: list, create, read, update, delete.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use reviewloop_domain::LoopId;
use reviewloop_service::LoopPatch;
use reviewloop_wire::loops::{
    LoopDeletedOut, LoopListOut, LoopOut, LoopPatchIn, NewLoopIn, OneLoopOut,
};
use reviewloop_wire::requests::RulesTestIn;
use serde::Deserialize;

use super::once::{once, Answer};
use super::views;
use crate::auth::Caller;
use crate::body::{id, Body};
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let loops = state.loops.list(&caller.principal).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Loops retrieved successfully",
        LoopListOut {
            loops: loops.iter().map(LoopOut::of).collect(),
            count: loops.len(),
        },
    ))
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    Body(body, raw): Body<NewLoopIn>,
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
            views::invite(&invite),
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
        OneLoopOut {
            lp: LoopOut::of(&lp),
        },
    ))
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<LoopPatchIn>,
) -> Result {
    let patch = LoopPatch {
        name: body.name,
        description: body.description,
        icon: body.icon,
        slack_webhook_url: body.slack_webhook_url,
        slack_app: body.slack_app,
        reminders: body.reminders,
        quorum: body.quorum,
        escalation: body.escalation,
        rules: body.rules,
        coalesce: body.coalesce,
        reuse_answers: body.reuse_answers,
        assignment: body.assignment,
    };
    let lp = state
        .loops
        .update(&caller.principal, &id::<LoopId>(&path)?, patch)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Loop updated successfully",
        OneLoopOut {
            lp: LoopOut::of(&lp),
        },
    ))
}

/// `POST /loops/{id}/rules/test`: what the loop's rules would do with a
/// request, without making it.
pub(super) async fn test_rules(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<RulesTestIn>,
) -> Result {
    let routing = state
        .requests
        .test_rules(
            &caller.principal,
            &id::<LoopId>(&path)?,
            body.sample.fields.into_input(),
            body.rules,
        )
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Rules tested",
        views::rules_test(&routing),
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
        LoopDeletedOut { loop_id },
    ))
}
