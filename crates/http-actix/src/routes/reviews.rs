//! Reviews, on the alternate surface only (`/v1/reviews`): parse, call the
//! review service, render in envelope B.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{ReviewId, ReviewInput, ReviewPatch};
use reviewloop_service::wire::review_json;
use reviewloop_service::{ListReviewsInput, ServiceError};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::body::id;
use crate::envelope::Reply;
use crate::error::ApiError;

type Result = std::result::Result<Reply, ApiError>;
use crate::auth::Caller;
use crate::body::{present, Body};
use crate::state::AppState;

#[derive(Deserialize)]
pub(super) struct CreateReview {
    template_id: Option<Value>,
    content: Option<Value>,
    assignees: Option<Value>,
    team_id: Option<Value>,
    priority: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    due_date: Option<Value>,
    callback_url: Option<Value>,
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<CreateReview>,
) -> Result {
    let input = ReviewInput {
        template_id: body.template_id,
        content: body.content,
        assignees: body.assignees,
        team_id: body.team_id,
        priority: body.priority,
        due_date: body.due_date,
        callback_url: body.callback_url,
    };
    let review = state.reviews.create(&caller.principal, input).await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Review created successfully",
        review_json(&review),
    ))
}

#[derive(Deserialize)]
pub(super) struct ListQuery {
    role: Option<String>,
    status: Option<String>,
    template_id: Option<String>,
    assignee: Option<String>,
    team_id: Option<String>,
    priority: Option<String>,
    overdue: Option<bool>,
    limit: Option<u32>,
    offset: Option<u32>,
}

pub(super) async fn list(
    state: web::Data<AppState>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result {
    let q = query.into_inner();
    let input = ListReviewsInput {
        role: q.role,
        status: q.status,
        template_id: q.template_id,
        assignee: q.assignee,
        team_id: q.team_id,
        priority: q.priority,
        overdue: q.overdue,
        limit: q.limit,
        offset: q.offset,
    };
    let (page, limit, offset) = state.reviews.list(&caller.principal, input).await?;
    let data: Vec<Value> = page.reviews.iter().map(review_json).collect();
    let shown = data.len() as u64;
    let pagination = json!({
        "total": page.total,
        "limit": limit,
        "offset": offset,
        "has_more": u64::from(offset) + shown < page.total,
    });
    Ok(Reply::new(StatusCode::OK, "Reviews retrieved successfully", data).paged(pagination))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<ReviewId>(&path)?;
    let review = state.reviews.get(&caller.principal, &id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Review retrieved successfully",
        review_json(&review),
    ))
}

#[derive(Deserialize)]
pub(super) struct PatchReview {
    priority: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    due_date: Option<Value>,
    assignees: Option<Value>,
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<PatchReview>,
) -> Result {
    let id = id::<ReviewId>(&path)?;
    let patch = ReviewPatch {
        priority: body.priority,
        due_date: body.due_date,
        assignees: body.assignees,
    };
    let review = state.reviews.update(&caller.principal, &id, patch).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Review updated successfully",
        review_json(&review),
    ))
}

pub(super) async fn cancel(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<ReviewId>(&path)?;
    let review = state.reviews.cancel(&caller.principal, &id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Review cancelled successfully",
        review_json(&review),
    ))
}

pub(super) async fn start(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<ReviewId>(&path)?;
    let review = state.reviews.start(&caller.principal, &id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Review started successfully",
        review_json(&review),
    ))
}

#[derive(Deserialize)]
pub(super) struct Complete {
    result: Option<Value>,
}

pub(super) async fn complete(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<Complete>,
) -> Result {
    let id = id::<ReviewId>(&path)?;
    let result = body.result.ok_or_else(|| {
        ServiceError::from(reviewloop_domain::ValidationError::field(
            "result",
            "result is required: an object of field name to value",
        ))
    })?;
    let review = state
        .reviews
        .complete(&caller.principal, &id, &result)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Review completed successfully",
        review_json(&review),
    ))
}
