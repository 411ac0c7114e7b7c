//! The requester's handlers: create, list, read, change, cancel, rate.

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use reviewloop_domain::{FeedbackInput, LoopId, RequestId, RequestInput, RequestPatch};
use reviewloop_service::wire::FeedbackView;
use reviewloop_service::{CreatedRequest, ListRequestsInput};
use serde::Deserialize;
use serde_json::{json, Value};

use super::once::{once, Answer};
use super::views::{created_json, page_json, request_json};
use crate::auth::Caller;
use crate::body::{id, present, Body};
use crate::envelope::{json_bytes, Reply};
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

/// A create-request body, loosely typed so that validation can name
/// every problem; `loop_id` is read only where the path has none.
#[derive(Deserialize)]
pub(super) struct CreateRequest {
    loop_id: Option<String>,
    request_text: Option<String>,
    #[serde(rename = "type")]
    content_type: Option<String>,
    image_url: Option<String>,
    response_type: Option<String>,
    response_config: Option<Value>,
    priority: Option<String>,
    processing_type: Option<String>,
    timeout_seconds: Option<Value>,
    default_response: Option<Value>,
    context: Option<Value>,
    platform: Option<String>,
    platform_version: Option<String>,
    callback_url: Option<String>,
    metadata: Option<Value>,
    tags: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    quorum: Option<Value>,
    exclude_requester: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    escalation: Option<Value>,
    test_response: Option<Value>,
    test_delay_seconds: Option<Value>,
}

impl CreateRequest {
    pub(super) fn into_input(self) -> RequestInput {
        RequestInput {
            request_text: self.request_text,
            content_type: self.content_type,
            image_url: self.image_url,
            response_type: self.response_type,
            response_config: self.response_config,
            priority: self.priority,
            processing_type: self.processing_type,
            timeout_seconds: self.timeout_seconds,
            default_response: self.default_response,
            context: self.context,
            platform: self.platform,
            platform_version: self.platform_version,
            callback_url: self.callback_url,
            metadata: self.metadata,
            tags: self.tags,
            quorum: self.quorum,
            exclude_requester: self.exclude_requester,
            escalation: self.escalation,
            test_response: self.test_response,
            test_delay_seconds: self.test_delay_seconds,
        }
    }
}

fn created(created: CreatedRequest) -> Reply {
    Reply::new(
        StatusCode::CREATED,
        "Request created successfully",
        created_json(&created),
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
    Body(body, raw): Body<CreateRequest>,
) -> Answer {
    let (app, principal) = (state.clone(), caller.principal.clone());
    once(&state, &caller, &req, &raw, move |id| async move {
        let loop_id = body_loop_id(body.loop_id.as_deref())?
            .ok_or_else(|| ApiError::bad_request("loop_id is required"))?;
        Ok(created(
            app.requests
                .create(&principal, &loop_id, body.into_input(), id)
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
    Body(body, raw): Body<CreateRequest>,
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
                .create(&principal, &loop_id, body.into_input(), id)
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
        page_json(&page, query.limit, query.offset),
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
    let mut data = page_json(&page, query.limit, query.offset);
    if let Some(map) = data.as_object_mut() {
        map.insert("loop_id".into(), json!(loop_id));
    }
    Ok(Reply::new(
        StatusCode::OK,
        "Requests retrieved successfully",
        data,
    ))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    query: web::Query<GetQuery>,
) -> Result {
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
    let viewer = &caller.principal.user_id;
    let data = state.rendered.body(&request, viewer, || {
        json_bytes(&request_json(&request, viewer))
    });
    Ok(Reply::made(
        StatusCode::OK,
        "Request retrieved successfully",
        data,
    ))
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

#[derive(Deserialize)]
pub(super) struct UpdateRequest {
    request_text: Option<String>,
    priority: Option<String>,
    #[serde(default, deserialize_with = "present")]
    context: Option<Value>,
    response_config: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    default_response: Option<Value>,
    timeout_seconds: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    tags: Option<Value>,
    platform: Option<String>,
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<UpdateRequest>,
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
    };
    let request = state.requests.update(&caller.principal, &id, patch).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Request updated successfully",
        request_json(&request, &caller.principal.user_id),
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
    let data = json!({"request_id": request.id, "status": request.status.as_str()});
    Ok(Reply::new(
        StatusCode::OK,
        "Request cancelled successfully",
        data,
    ))
}

#[derive(Deserialize, Default)]
pub(super) struct FeedbackFields {
    rating: Option<f64>,
    comment: Option<String>,
    accuracy: Option<f64>,
    timeliness: Option<f64>,
    helpfulness: Option<f64>,
    would_recommend: Option<bool>,
    follow_up_needed: Option<bool>,
    tags: Option<Vec<String>>,
    category: Option<String>,
}

impl FeedbackFields {
    fn into_input(self) -> FeedbackInput {
        FeedbackInput {
            rating: self.rating,
            comment: self.comment,
            accuracy: self.accuracy,
            timeliness: self.timeliness,
            helpfulness: self.helpfulness,
            would_recommend: self.would_recommend,
            follow_up_needed: self.follow_up_needed,
            tags: self.tags,
            category: self.category,
        }
    }
}

/// The feedback's fields, or the same wrapped in `{"feedback": {...}}`
/// (HITL.sh's form).
#[derive(Deserialize)]
pub(super) struct FeedbackBody {
    #[serde(flatten)]
    top: FeedbackFields,
    feedback: Option<FeedbackFields>,
}

pub(super) async fn feedback(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<FeedbackBody>,
) -> Result {
    let id = id::<RequestId>(&path)?;
    let input = body.feedback.unwrap_or(body.top).into_input();
    let request = state
        .requests
        .feedback(&caller.principal, &id, input)
        .await?;
    let data =
        json!({"request_id": request.id, "feedback": request.feedback.as_ref().map(FeedbackView)});
    Ok(Reply::new(
        StatusCode::OK,
        "Feedback recorded successfully",
        data,
    ))
}
