//! `POST /slack/interactions`: clicks on the answer buttons that loops'
//! Slack apps post. The signature is checked on the raw body before any of
//! it is read; Slack wants a quick 200, and the clicker hears of a refusal
//! in a message only they see.

use actix_web::web::{Bytes, Data};
use actix_web::{HttpRequest, HttpResponse};
use reviewloop_domain::ValidationError;
use reviewloop_service::ServiceError;

use crate::error::ApiError;
use crate::state::AppState;

/// The most a Slack interaction may weigh (Slack's own are a few KiB).
const MAX_BODY: usize = 64 * 1024;

pub(crate) async fn interactions(
    req: HttpRequest,
    state: Data<AppState>,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    if body.len() > MAX_BODY {
        return Err(ApiError::with_status(
            actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
            "Slack interaction too large",
        ));
    }
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let signed = state
        .slack
        .verify(
            header("x-slack-request-timestamp"),
            header("x-slack-signature"),
            &body,
        )
        .await?;
    let payload = url::form_urlencoded::parse(&body)
        .find(|(name, _)| name == "payload")
        .map(|(_, value)| value.into_owned())
        .ok_or_else(|| {
            ServiceError::from(ValidationError::field(
                "payload",
                "the body must be a form with a payload field",
            ))
        })?;
    let payload: serde_json::Value = serde_json::from_str(&payload).map_err(|_| {
        ServiceError::from(ValidationError::field("payload", "payload must be JSON"))
    })?;
    state.slack.act(&signed, &payload).await?;
    Ok(HttpResponse::Ok().finish())
}
