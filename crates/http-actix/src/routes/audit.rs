//! The caller's audit log: JSON pages, or JSON Lines for export.

use actix_web::http::header::{self, HeaderMap};
use actix_web::http::StatusCode;
use actix_web::{web, Either, HttpRequest, HttpResponse};
use reviewloop_wire::account::{AuditEntryOut, AuditLogOut};
use serde::Deserialize;

use super::reviewer::whole;
use crate::auth::Caller;
use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

/// The media type of JSON Lines.
const NDJSON: &str = "application/x-ndjson";

#[derive(Deserialize)]
pub(super) struct Page {
    limit: Option<String>,
    offset: Option<String>,
}

fn wants_lines(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| {
            accept
                .split(',')
                .any(|part| part.split(';').next().map(str::trim) == Some(NDJSON))
        })
}

pub(super) async fn list(
    state: web::Data<AppState>,
    caller: Caller,
    http: HttpRequest,
    page: web::Query<Page>,
) -> Result<Either<HttpResponse, Reply>, ApiError> {
    let limit = whole("limit", page.limit.as_deref())?;
    let offset = whole("offset", page.offset.as_deref())?;
    let found = state
        .audit
        .entries(&caller.principal, limit, offset)
        .await?;
    if wants_lines(http.headers()) {
        let mut body = String::new();
        for entry in &found.entries {
            body.push_str(&serde_json::to_string(&AuditEntryOut::of(entry)).unwrap_or_default());
            body.push('\n');
        }
        return Ok(Either::Left(
            HttpResponse::Ok().content_type(NDJSON).body(body),
        ));
    }
    let entries: Vec<_> = found.entries.iter().map(AuditEntryOut::of).collect();
    Ok(Either::Right(Reply::new(
        StatusCode::OK,
        "Audit log retrieved successfully",
        AuditLogOut {
            entries,
            total: found.total,
            limit: limit.unwrap_or(reviewloop_service::AUDIT_DEFAULT_LIMIT),
            offset: offset.unwrap_or(0),
        },
    )))
}
