//! The requester's handlers: create, list, read, change, cancel, rate.

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use reviewloop_domain::{LoopId, RequestId, RequestPatch};
use reviewloop_service::{CreatedRequest, ListRequestsInput};
use reviewloop_wire::requests::{
    FeedbackIn, FeedbackOut, FeedbackRecordedOut, NewRequestIn, NewRequestInLoopIn, OneRequestOut,
    RequestCancelledOut, RequestOut, RequestPageOut, RequestPatchIn,
};
use serde::Deserialize;

use super::once::{once, Answer};
use super::views;
use crate::auth::Caller;
use crate::body::{id, Body};
use crate::envelope::{json_response, Reply, Surface};
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

fn created(created: CreatedRequest) -> Reply {
    Reply::new(
        StatusCode::CREATED,
        "Request created successfully",
        views::created(&created),
    )
}

fn body_loop_id(raw: Option<&str>) -> std::result::Result<Option<LoopId>, ApiError> {
    raw.map(|raw| {
        raw.parse()
            .map_err(|_| ApiError::bad_request("loop_id must be 24 hexadecimal characters"))
    })
    .transpose()
}

/// `POST /requests` with `loop_id` in the body.
pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    Body(body, raw): Body<NewRequestIn>,
) -> Answer {
    let (app, principal) = (state.clone(), caller.principal.clone());
    once(&state, &caller, &req, &raw, move |id| async move {
        let loop_id = body_loop_id(body.loop_id.as_deref())?
            .ok_or_else(|| ApiError::bad_request("loop_id is required"))?;
        Ok(created(
            app.requests
                .create(&principal, &loop_id, body.fields.into_input(), id)
                .await?,
        ))
    })
    .await
}

/// `POST /loops/{id}/requests`; a `loop_id` in the body must agree with the path.
pub(super) async fn create_in_loop(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    Body(body, raw): Body<NewRequestInLoopIn>,
) -> Answer {
    let loop_id = id::<LoopId>(&path)?;
    let (app, principal) = (state.clone(), caller.principal.clone());
    once(&state, &caller, &req, &raw, move |id| async move {
        if body_loop_id(body.loop_id.as_deref())?.is_some_and(|in_body| in_body != loop_id) {
            return Err(ApiError::bad_request(
                "loop_id in the body does not match the loop in the path",
            ));
        }
        Ok(created(
            app.requests
                .create(&principal, &loop_id, body.fields.into_input(), id)
                .await?,
        ))
    })
    .await
}

#[derive(Deserialize)]
pub(super) struct ListQuery {
    status: Option<String>,
    priority: Option<String>,
    loop_id: Option<String>,
    limit: Option<String>,
    offset: Option<String>,
    sort: Option<String>,
    scope: Option<String>,
}

impl ListQuery {
    fn into_input(self) -> ListRequestsInput {
        ListRequestsInput {
            status: self.status,
            priority: self.priority,
            loop_id: self.loop_id,
            limit: self.limit,
            offset: self.offset,
            sort: self.sort,
            scope: self.scope,
        }
    }
}

pub(super) async fn list(
    state: web::Data<AppState>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result {
    let (page, query) = state
        .requests
        .list(&caller.principal, query.into_inner().into_input())
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Requests retrieved successfully",
        RequestPageOut::of(&page.requests, page.total, query.limit, query.offset),
    ))
}

pub(super) async fn list_in_loop(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    query: web::Query<ListQuery>,
) -> Result {
    let loop_id = id::<LoopId>(&path)?;
    let (page, query) = state
        .requests
        .list_in_loop(&caller.principal, &loop_id, query.into_inner().into_input())
        .await?;
    let mut data = RequestPageOut::of(&page.requests, page.total, query.limit, query.offset);
    data.loop_id = Some(loop_id);
    Ok(Reply::new(
        StatusCode::OK,
        "Requests retrieved successfully",
        data,
    ))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<GetQuery>,
) -> std::result::Result<HttpResponse, ApiError> {
    let id = id::<RequestId>(&path)?;
    let wait = long_poll_wait(query.wait.as_deref())?;
    let request = if wait.is_zero() {
        state.requests.get(&caller.principal, &id).await?
    } else {
        state
            .requests
            .get_when_settled(&caller.principal, &id, wait)
            .await?
    };
    // The whole answer is kept, in the envelope of the route's surface, so
    // a poll that finds nothing new writes bytes made once.
    let (viewer, surface) = (&caller.principal.user_id, Surface::of(&req));
    let body = state.rendered.body(&request, viewer, surface, || {
        let one = OneRequestOut {
            request: RequestOut::for_viewer(&request, viewer),
        };
        Reply::new(StatusCode::OK, "Request retrieved successfully", one).body(surface)
    });
    Ok(json_response(StatusCode::OK, body))
}

/// The longest a client may ask `GET /requests/{id}` to wait.
const LONG_POLL_MAX_SECONDS: u64 = 60;

#[derive(Deserialize)]
pub(super) struct GetQuery {
    wait: Option<String>,
}

/// `?wait=N`: up to N seconds (at most 60) for the request to be answered,
/// time out or be cancelled.
fn long_poll_wait(raw: Option<&str>) -> std::result::Result<Duration, ApiError> {
    let Some(raw) = raw else {
        return Ok(Duration::ZERO);
    };
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|s| *s <= LONG_POLL_MAX_SECONDS)
        .map(Duration::from_secs)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "wait must be a whole number of seconds from 0 to {LONG_POLL_MAX_SECONDS}"
            ))
        })
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<RequestPatchIn>,
) -> Result {
    let id = id::<RequestId>(&path)?;
    let patch = RequestPatch {
        request_text: body.request_text,
        priority: body.priority,
        context: body.context,
        response_config: body.response_config,
        default_response: body.default_response,
        timeout_seconds: body.timeout_seconds,
        tags: body.tags,
        platform: body.platform,
        callback_url: body.callback_url,
        processing_type: body.processing_type,
        response_type: body.response_type,
    };
    let request = state.requests.update(&caller.principal, &id, patch).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Request updated successfully",
        OneRequestOut {
            request: RequestOut::for_viewer(&request, &caller.principal.user_id),
        },
    ))
}

pub(super) async fn cancel(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let request = state
        .requests
        .cancel(&caller.principal, &id::<RequestId>(&path)?)
        .await?;
    let data = RequestCancelledOut {
        request_id: request.id,
        status: request.status.as_str(),
    };
    Ok(Reply::new(
        StatusCode::OK,
        "Request cancelled successfully",
        data,
    ))
}

pub(super) async fn feedback(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<FeedbackIn>,
) -> Result {
    let id = id::<RequestId>(&path)?;
    let input = body.feedback.unwrap_or(body.top).into_input();
    let request = state
        .requests
        .feedback(&caller.principal, &id, input)
        .await?;
    let data = FeedbackRecordedOut {
        request_id: request.id,
        feedback: request.feedback.as_ref().map(FeedbackOut::of),
    };
    Ok(Reply::new(
        StatusCode::OK,
        "Feedback recorded successfully",
        data,
    ))
}
