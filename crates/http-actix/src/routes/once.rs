//! `Idempotency-Key` on create calls: an automation that retries after a
//! network blip gets the first answer again instead of a second loop or
//! request.

use std::future::Future;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use reviewloop_domain::ObjectId;
use reviewloop_service::{
    IdempotencyError, IdempotencyRule, Idempotent, ServiceError, IN_PROGRESS_RETRY_AFTER,
};
use serde_json::Value;

use crate::auth::Caller;
use crate::envelope::{json_response, Reply, Surface};
use crate::error::ApiError;
use crate::state::AppState;

const HEADER: &str = "idempotency-key";
const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// What a handler that runs through [`once`] answers: the first answer, or
/// the one recorded for a retry, already in its envelope.
pub(super) type Answer = Result<HttpResponse, ApiError>;

/// Runs `call` at most once per idempotency key and body; without the
/// header it simply runs it. `call` gets the id the created resource must
/// take (see `IdempotencyTicket::resource_id`), or `None` without a key.
pub(super) async fn once<F, Fut>(
    state: &AppState,
    caller: &Caller,
    req: &HttpRequest,
    body: &Value,
    call: F,
) -> Answer
where
    F: FnOnce(Option<ObjectId>) -> Fut + 'static,
    Fut: Future<Output = Result<Reply, ApiError>> + 'static,
{
    // The answer is recorded as sent, so it is put in its envelope here.
    let surface = Surface::of(req);
    let Some(header) = req.headers().get(HEADER) else {
        return call(None).await.map(|reply| {
            let status = reply.status();
            json_response(status, reply.body(surface))
        });
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
    let begun = state
        .idempotency
        .begin(&caller.principal, key, &operation, body)
        .await;
    let ticket = match begun {
        // Still running here or elsewhere, or left by a process that
        // died: a retry soon finishes it or takes it over.
        Err(error @ IdempotencyError::Rule(IdempotencyRule::InProgress)) => {
            return Err(ApiError::from(error).retry_after(IN_PROGRESS_RETRY_AFTER));
        }
        Err(error) => return Err(error.into()),
        Ok(begun) => begun,
    };
    let ticket = match ticket {
        Idempotent::Replay { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut response = json_response(status, body.into());
            response
                .headers_mut()
                .insert(REPLAYED, HeaderValue::from_static("true"));
            return Ok(response);
        }
        Idempotent::Run(ticket) => ticket,
    };
    let resource_id = ticket.resource_id();
    let idempotency = state.idempotency.clone();
    // A client that hangs up makes actix drop this handler; the call and
    // the record of its outcome run in their own task so that cannot
    // happen between creating the resource and recording it.
    let task = actix_web::rt::spawn(async move {
        let (status, text, outcome) = match call(Some(resource_id)).await {
            Ok(reply) => {
                let status = reply.status();
                let body = reply.body(surface);
                let text = String::from_utf8_lossy(&body).into_owned();
                (status, text, Ok(body))
            }
            Err(error) => (
                error.status_code(),
                error.body(surface).to_string(),
                Err(error),
            ),
        };
        if let Err(error) = idempotency.finish(ticket, status.as_u16(), &text).await {
            // Only the replay record is missing: a retry runs the call
            // again, and the resource id makes it find what was created.
            tracing::warn!(%error, "could not record the idempotent outcome");
        }
        outcome.map(|body| json_response(status, body))
    });
    task.await.map_err(|e| {
        ApiError::from(ServiceError::Unexpected(format!(
            "idempotent call task failed: {e}"
        )))
    })?
}
