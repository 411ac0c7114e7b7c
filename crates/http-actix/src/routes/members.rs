//! Membership handlers: list, invite, remove, join, new invite code.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{LoopId, UserId};
use reviewloop_service::wire::MemberView;
use serde::Deserialize;
use serde_json::json;

use super::views::{invite_json, loop_json};
use crate::auth::Caller;
use crate::body::{id, Body};
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

pub(super) async fn list(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let lp = state
        .loops
        .members(&caller.principal, &id::<LoopId>(&path)?)
        .await?;
    let data = json!({
        "loop_id": lp.id,
        "members": lp.members.iter().map(MemberView::of).collect::<Vec<_>>(),
        "count": lp.member_count(),
        "member_count": lp.member_count(),
        "total_count": lp.member_count(),
        "active_count": lp.active_count(),
        "pending_count": lp.pending_count(),
    });
    Ok(Reply::new(
        StatusCode::OK,
        "Members retrieved successfully",
        data,
    ))
}

#[derive(Deserialize)]
pub(super) struct Invite {
    email: Option<String>,
}

pub(super) async fn invite(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<Invite>,
) -> Result {
    let loop_id = id::<LoopId>(&path)?;
    let member = state
        .loops
        .invite(&caller.principal, &loop_id, body.email.as_deref())
        .await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Member invited successfully",
        json!({"loop_id": loop_id, "member": MemberView::of(&member)}),
    ))
}

#[derive(Deserialize)]
pub(super) struct Notifications {
    notify: Option<String>,
}

/// `PUT /loops/{id}/notifications`: which requests the caller hears about.
pub(super) async fn notifications(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<Notifications>,
) -> Result {
    let loop_id = id::<LoopId>(&path)?;
    let member = state
        .loops
        .set_notify(&caller.principal, &loop_id, body.notify.as_deref())
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Notification preference saved",
        json!({"loop_id": loop_id, "member": MemberView::of(&member)}),
    ))
}

pub(super) async fn remove(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<(String, String)>,
) -> Result {
    let (loop_id, user_id) = path.into_inner();
    let removed = state
        .loops
        .remove_member(
            &caller.principal,
            &id::<LoopId>(&loop_id)?,
            &id::<UserId>(&user_id)?,
        )
        .await?;
    let data = json!({"loop_id": removed.loop_id, "user_id": removed.user_id, "removed_at": removed.removed_at});
    Ok(Reply::new(
        StatusCode::OK,
        "Member removed successfully",
        data,
    ))
}

#[derive(Deserialize)]
pub(super) struct Join {
    invite_code: Option<String>,
}

pub(super) async fn join(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<Join>,
) -> Result {
    let code = body
        .invite_code
        .ok_or_else(|| ApiError::bad_request("invite_code is required"))?;
    let (lp, member) = state.loops.join(&caller.principal, &code).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Joined loop successfully",
        json!({"loop": loop_json(&lp), "member": MemberView::of(&member)}),
    ))
}

pub(super) async fn new_invite_code(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let invite = state
        .loops
        .regenerate_code(&caller.principal, &id::<LoopId>(&path)?)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Invite code regenerated successfully",
        invite_json(&invite),
    ))
}
