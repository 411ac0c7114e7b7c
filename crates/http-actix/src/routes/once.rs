//! `Idempotency-Key` on create calls: an automation that retries after a
//! network blip gets the first answer again instead of a second loop or
//! request.

use std::future::Future;

use actix_web::http::header::ContentType;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use reviewloop_service::Idempotent;
use serde_json::Value;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

const HEADER: &str = "idempotency-key";

fn json(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(ContentType::json())
        .body(body)
}

/// Runs `call` at most once per idempotency key and body; without the
/// header it simply runs it.
pub(super) async fn once<F>(
    state: &AppState,
    caller: &Caller,
    req: &HttpRequest,
    body: &Value,
    call: F,
) -> Result<HttpResponse, ApiError>
where
    F: Future<Output = Result<(StatusCode, Value), ApiError>>,
{
    let Some(header) = req.headers().get(HEADER) else {
        return call
            .await
            .map(|(status, value)| json(status, value.to_string()));
    };
    let key = header
        .to_str()
        .map_err(|_| ApiError::bad_request("Idempotency-Key must be printable ASCII"))?;
    // Both path forms name one operation.
    let operation = format!(
        "{} {}",
        req.method(),
        req.path().replacen("/v1/api/", "/v1/", 1)
    );
    let ticket = match state
        .idempotency
        .begin(&caller.principal, key, &operation, body)
        .await?
    {
        Idempotent::Replay { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut response = json(status, body);
            response.headers_mut().insert(
                actix_web::http::header::HeaderName::from_static("idempotent-replayed"),
                actix_web::http::header::HeaderValue::from_static("true"),
            );
            return Ok(response);
        }
        Idempotent::Run(ticket) => ticket,
    };
    let outcome = call.await;
    let (status, value) = match &outcome {
        Ok((status, value)) => (*status, value.clone()),
        Err(error) => (error.status_code(), error.body()),
    };
    let text = value.to_string();
    if let Err(error) = state
        .idempotency
        .finish(ticket, status.as_u16(), &text)
        .await
    {
        // The call itself succeeded or failed on its own; only the replay
        // record is missing, so a retry would run the call again.
        tracing::warn!(%error, "could not record the idempotent outcome");
    }
    outcome.map(|_| json(status, text))
}
