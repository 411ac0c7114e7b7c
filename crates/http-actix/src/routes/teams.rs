//! Teams, on the alternate surface only (`/v1/teams`): a team is a loop, so
//! every handler calls the loop service and renders in envelope B. A loop
//! made on either surface is visible on both.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::LoopId;
use reviewloop_service::wire::MemberView;
use reviewloop_service::LoopInvite;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::body::id;
use crate::envelope::Reply;
use crate::error::ApiError;

type Result = std::result::Result<Reply, ApiError>;
use super::views::loop_json;
use crate::auth::Caller;
use crate::body::Body;
use crate::state::AppState;

fn created_json(invite: &LoopInvite) -> Value {
    let mut team = loop_json(&invite.lp);
    if let Some(map) = team.as_object_mut() {
        map.insert("invite_code".into(), json!(invite.lp.invite_code.as_str()));
        map.insert("join_url".into(), json!(invite.join_url));
        map.insert("qr_code_url".into(), json!(invite.qr_code_url));
    }
    team
}

#[derive(Deserialize)]
pub(super) struct CreateTeam {
    name: Option<String>,
    description: Option<String>,
    icon: Option<String>,
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<CreateTeam>,
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
        created_json(&invite),
    ))
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let loops = state.loops.list(&caller.principal).await?;
    let data: Vec<Value> = loops.iter().map(loop_json).collect();
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
        loop_json(&lp),
    ))
}

pub(super) async fn members(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<LoopId>(&path)?;
    let lp = state.loops.members(&caller.principal, &id).await?;
    let members: Vec<_> = lp.members.iter().map(MemberView::of).collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Members retrieved successfully",
        &members,
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
    let id = id::<LoopId>(&path)?;
    let member = state
        .loops
        .invite(&caller.principal, &id, body.email.as_deref())
        .await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Member invited successfully",
        MemberView::of(&member),
    ))
}
