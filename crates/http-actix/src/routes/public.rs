//! Routes that need no API key: health, readiness, metrics, the OpenAPI
//! document and the QR code image.
//! An invite code is a shared secret by design: whoever has it may join,
//! so showing its QR code to anyone adds nothing. (The join page belongs
//! to the web application.)

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use reviewloop_wire::account::{ReceiptKeyOut, ReceiptKeysOut, StatusOut};

use crate::envelope::Reply;
use crate::error::ApiError;
use crate::state::AppState;

pub(crate) async fn health() -> Reply {
    Reply::new(StatusCode::OK, "ok", StatusOut { status: "ok" })
}

/// `GET /ready`: 200 while the database answers, 503 otherwise.
pub(super) async fn ready(state: web::Data<AppState>) -> Result<Reply, ApiError> {
    state.operations.ready().await?;
    Ok(Reply::new(
        StatusCode::OK,
        "ready",
        StatusOut { status: "ready" },
    ))
}

/// `GET /metrics`: Prometheus' text format (OpenMetrics 1.0).
pub(super) async fn metrics(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let text = state.operations.metrics().await?;
    Ok(HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .body(text))
}

/// `GET /v1/openapi.json`: the document, built once.
pub(super) async fn openapi() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(crate::openapi::json_text())
}

/// `GET /v1/receipts/keys`: every key that ever signed a receipt.
pub(super) async fn receipt_keys(state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let keys = state.receipts.public_keys().await?;
    let keys = keys
        .into_iter()
        .map(|k| ReceiptKeyOut {
            key_id: k.key_id,
            alg: k.alg,
            public_key: k.public_key,
            created_at: k.created_at,
            retired_at: k.retired_at,
        })
        .collect();
    Ok(Reply::new(
        StatusCode::OK,
        "Receipt keys",
        ReceiptKeysOut { keys },
    ))
}

pub(super) async fn qr_png(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let code = path.strip_suffix(".png").unwrap_or(&path);
    let png = state.loops.qr_png(code).await?;
    Ok(HttpResponse::Ok()
        .content_type("image/png")
        // A code can be regenerated; keep caches short.
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(300),
        ]))
        .body(png))
}
