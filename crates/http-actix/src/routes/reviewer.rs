//! The reviewer's handlers: inbox, claim, release, respond.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::RequestId;
use reviewloop_wire::requests::{AnswerIn, InboxOut, OneRequestOut, RequestOut};
use serde::Deserialize;

use crate::auth::Caller;
use crate::body::{id, Body};
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

#[derive(Deserialize)]
pub(super) struct Page {
    limit: Option<String>,
    offset: Option<String>,
}

pub(super) fn whole(name: &str, raw: Option<&str>) -> std::result::Result<Option<u32>, ApiError> {
    raw.map(|raw| {
        raw.trim()
            .parse::<u32>()
            .map_err(|_| ApiError::bad_request(format!("{name} must be a whole number")))
    })
    .transpose()
}

pub(super) async fn inbox(
    state: web::Data<AppState>,
    caller: Caller,
    page: web::Query<Page>,
) -> Result {
    let limit = whole("limit", page.limit.as_deref())?;
    let offset = whole("offset", page.offset.as_deref())?;
    let requests = state
        .requests
        .inbox(
            &caller.principal,
            reviewloop_ports::InboxView::Actionable,
            limit,
            offset,
        )
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Inbox retrieved successfully",
        InboxOut::of(&requests, &caller.principal.user_id),
    ))
}

pub(super) async fn claim(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let request = state
        .requests
        .claim(&caller.principal, &id::<RequestId>(&path)?)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Request claimed successfully",
        OneRequestOut {
            request: RequestOut::for_viewer(&request, &caller.principal.user_id),
        },
    ))
}

pub(super) async fn release(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let request = state
        .requests
        .release(&caller.principal, &id::<RequestId>(&path)?)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Request released successfully",
        OneRequestOut {
            request: RequestOut::for_viewer(&request, &caller.principal.user_id),
        },
    ))
}

pub(super) async fn respond(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<AnswerIn>,
) -> Result {
    let id = id::<RequestId>(&path)?;
    let request = state
        .requests
        .respond(
            &caller.principal,
            &id,
            body.response_data,
            body.comment.as_deref(),
        )
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Response submitted successfully",
        OneRequestOut {
            request: RequestOut::for_viewer(&request, &caller.principal.user_id),
        },
    ))
}
