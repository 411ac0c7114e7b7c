//! Teams, on the alternate surface only (`/v1/teams`): a team is a loop, so
//! every handler calls the loop service and renders in envelope B. A loop
//! made on either surface is visible on both.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::LoopId;
use reviewloop_wire::alternate::NewTeamIn;
use reviewloop_wire::loops::{InviteIn, MemberOut, TeamOut};

use crate::body::id;
use crate::envelope::Reply;
use crate::error::ApiError;

use super::views;
use crate::auth::Caller;
use crate::body::Body;
use crate::state::AppState;

type Result = std::result::Result<Reply, ApiError>;

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<NewTeamIn>,
) -> Result {
    let invite = state
        .loops
        .create(
            &caller.principal,
            body.name.as_deref(),
            body.description.as_deref(),
            body.icon.as_deref(),
            None,
        )
        .await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Team created successfully",
        views::new_team(&invite),
    ))
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let loops = state.loops.list(&caller.principal).await?;
    let data: Vec<TeamOut> = loops.iter().map(TeamOut::of).collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Teams retrieved successfully",
        data,
    ))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<LoopId>(&path)?;
    let lp = state.loops.get(&caller.principal, &id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Team retrieved successfully",
        TeamOut::of(&lp),
    ))
}

pub(super) async fn members(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<LoopId>(&path)?;
    let lp = state.loops.members(&caller.principal, &id).await?;
    let members: Vec<_> = lp.members.iter().map(MemberOut::of).collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Members retrieved successfully",
        &members,
    ))
}

pub(super) async fn invite(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<InviteIn>,
) -> Result {
    let id = id::<LoopId>(&path)?;
    let member = state
        .loops
        .invite(&caller.principal, &id, body.email.as_deref())
        .await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Member invited successfully",
        MemberOut::of(&member),
    ))
}
