//! Templates, on the alternate surface only (`/v1/templates`): parse, call
//! the template service, render in envelope B.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{TemplateId, TemplateInput, TemplatePatch};
use reviewloop_service::wire::template_json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::alternate::{parse_id, Result};
use crate::auth::Caller;
use crate::body::{present_text, Body};
use crate::envelope::ok_alternate;
use crate::state::AppState;

#[derive(Deserialize)]
pub(super) struct CreateTemplate {
    name: Option<String>,
    description: Option<String>,
    fields: Option<Value>,
}

pub(super) async fn create(
    state: web::Data<AppState>,
    caller: Caller,
    Body(body, _): Body<CreateTemplate>,
) -> Result {
    let input = TemplateInput {
        name: body.name,
        description: body.description,
        fields: body.fields,
    };
    let template = state.templates.create(&caller.principal, input).await?;
    Ok(ok_alternate(StatusCode::CREATED, template_json(&template)))
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let templates = state.templates.list(&caller.principal).await?;
    let data: Vec<Value> = templates.iter().map(template_json).collect();
    Ok(ok_alternate(StatusCode::OK, data))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = parse_id::<TemplateId>(&path)?;
    let template = state.templates.get(&caller.principal, &id).await?;
    Ok(ok_alternate(StatusCode::OK, template_json(&template)))
}

#[derive(Deserialize)]
pub(super) struct PatchTemplate {
    name: Option<String>,
    #[serde(default, deserialize_with = "present_text")]
    description: Option<Option<String>>,
    fields: Option<Value>,
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<PatchTemplate>,
) -> Result {
    let id = parse_id::<TemplateId>(&path)?;
    let patch = TemplatePatch {
        name: body.name,
        description: body.description,
        fields: body.fields,
    };
    let template = state
        .templates
        .update(&caller.principal, &id, patch)
        .await?;
    Ok(ok_alternate(StatusCode::OK, template_json(&template)))
}

pub(super) async fn delete(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = parse_id::<TemplateId>(&path)?;
    state.templates.delete(&caller.principal, &id).await?;
    Ok(ok_alternate(
        StatusCode::OK,
        json!({"id": id, "deleted": true}),
    ))
}
