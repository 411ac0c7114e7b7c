//! Templates, on the alternate surface only (`/v1/templates`): parse, call
//! the template service, render in envelope B.

use actix_web::http::StatusCode;
use actix_web::web;
use reviewloop_domain::{TemplateId, TemplateInput, TemplatePatch};
use reviewloop_wire::alternate::{DeletedOut, NewTemplateIn, TemplateOut, TemplatePatchIn};

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
    Body(body, _): Body<NewTemplateIn>,
) -> Result {
    let input = TemplateInput {
        name: body.name,
        description: body.description,
        fields: body.fields,
    };
    let template = state.templates.create(&caller.principal, input).await?;
    Ok(Reply::new(
        StatusCode::CREATED,
        "Template created successfully",
        TemplateOut::of(&template),
    ))
}

pub(super) async fn list(state: web::Data<AppState>, caller: Caller) -> Result {
    let templates = state.templates.list(&caller.principal).await?;
    let data: Vec<TemplateOut> = templates.iter().map(TemplateOut::of).collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Templates retrieved successfully",
        data,
    ))
}

pub(super) async fn get(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<TemplateId>(&path)?;
    let template = state.templates.get(&caller.principal, &id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Template retrieved successfully",
        TemplateOut::of(&template),
    ))
}

pub(super) async fn update(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
    Body(body, _): Body<TemplatePatchIn>,
) -> Result {
    let id = id::<TemplateId>(&path)?;
    let patch = TemplatePatch {
        name: body.name,
        description: body.description,
        fields: body.fields,
    };
    let template = state
        .templates
        .update(&caller.principal, &id, patch)
        .await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Template updated successfully",
        TemplateOut::of(&template),
    ))
}

pub(super) async fn delete(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<String>,
) -> Result {
    let id = id::<TemplateId>(&path)?;
    state.templates.delete(&caller.principal, &id).await?;
    Ok(Reply::new(
        StatusCode::OK,
        "Template deleted successfully",
        DeletedOut {
            id: id.to_string(),
            deleted: true,
        },
    ))
}
