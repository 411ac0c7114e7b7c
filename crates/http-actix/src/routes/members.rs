//! Membership handlers: list, invite, remove, join, new invite code.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{LoopId, UserId};
use reviewloop_wire::loops::{
    InviteIn, JoinIn, JoinedOut, LoopMemberOut, LoopOut, MemberListOut, MemberOut,
    MemberRemovedOut, NotifyIn,
};

use super::views;
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
    Ok(Reply::new(
        StatusCode::OK,
        "Members retrieved successfully",
        MemberListOut::of(&lp),
    ))
}

pub(super) async fn invite(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<InviteIn>,
) -> Result {
    let loop_id = id::<LoopId>(&path)?;
    let member = state
        .loops
        .invite(&caller.principal, &loop_id, body.email.as_deref())
        .await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Member invited successfully",
        LoopMemberOut {
            loop_id,
            member: MemberOut::of(&member),
        },
    ))
}

/// `PUT /loops/{id}/notifications`: which requests the caller hears about.
pub(super) async fn notifications(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<NotifyIn>,
) -> Result {
    let loop_id = id::<LoopId>(&path)?;
    let member = state
        .loops
        .set_notify(&caller.principal, &loop_id, body.notify.as_deref())
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Notification preference saved",
        LoopMemberOut {
            loop_id,
            member: MemberOut::of(&member),
        },
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
    let data = MemberRemovedOut {
        loop_id: removed.loop_id,
        user_id: removed.user_id,
        removed_at: removed.removed_at,
    };
    Ok(Reply::new(
        StatusCode::OK,
        "Member removed successfully",
        data,
    ))
}

pub(super) async fn join(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<JoinIn>,
) -> Result {
    let code = body
        .invite_code
        .ok_or_else(|| ApiError::bad_request("invite_code is required"))?;
    let (lp, member) = state.loops.join(&caller.principal, &code).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Joined loop successfully",
        JoinedOut {
            lp: LoopOut::of(&lp),
            member: MemberOut::of(&member),
        },
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
        views::invite(&invite),
    ))
}
