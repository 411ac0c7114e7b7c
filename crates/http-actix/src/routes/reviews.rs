//! Reviews, on the alternate surface only (`/v1/reviews`): parse, call the
//! review service, render in envelope B.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{ReviewId, ReviewInput, ReviewPatch};
use reviewloop_service::{ListReviewsInput, ServiceError};
use reviewloop_wire::alternate::{NewReviewIn, PageMeta, ReviewOut, ReviewPatchIn, ReviewResultIn};
use serde::Deserialize;

use crate::body::id;
use crate::envelope::Reply;
use crate::error::ApiError;

use crate::auth::Caller;
use crate::body::Body;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<NewReviewIn>,
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
        ReviewOut::of(&review),
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
    let data: Vec<ReviewOut> = page.reviews.iter().map(ReviewOut::of).collect();
    let shown = data.len() as u64;
    let pagination = PageMeta {
        total: page.total,
        limit,
        offset,
        has_more: u64::from(offset) + shown < page.total,
    };
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
        ReviewOut::of(&review),
    ))
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<ReviewPatchIn>,
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
        ReviewOut::of(&review),
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
        ReviewOut::of(&review),
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
        ReviewOut::of(&review),
    ))
}

pub(super) async fn complete(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<ReviewResultIn>,
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
        ReviewOut::of(&review),
    ))
}
