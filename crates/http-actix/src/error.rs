//! The error policy, in one place: every service outcome gets one status
//! code and a message in the envelope of the path's surface. Anything
//! unexpected is logged in full and shown as a bare 500.

use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use chrono::Utc;
use reviewloop_service::ServiceError;

use crate::auth::rate_limit_headers;
use crate::envelope::{alternate_code, alternate_failure, failure_body, Surface};
use reviewloop_service::{REVIEW_NOT_FOUND, TEMPLATE_NOT_FOUND};
use serde_json::{json, Value};

/// What the alternate surface calls a loop it cannot find.
pub const TEAM_NOT_FOUND: &str = "Team not found";

/// A failed request: what went wrong and which envelope to answer in.
#[derive(Debug)]
pub struct ApiError {
    error: ServiceError,
    surface: Surface,
    /// For failures of the HTTP layer itself that have a status of their
    /// own (413, 415) but no counterpart among the service outcomes.
    status: Option<StatusCode>,
}

impl ApiError {
    /// An error answered in the envelope of `surface`.
    pub fn new(error: impl Into<ServiceError>, surface: Surface) -> Self {
        Self {
            error: error.into(),
            surface,
            status: None,
        }
    }

    /// A client error about one part of the request (`field`: a path in the
    /// body, or `body`, `id`, `query`), with its own status: on the
    /// alternate surface `details` names the part.
    pub fn invalid(status: StatusCode, field: &str, message: String, surface: Surface) -> Self {
        Self {
            error: ServiceError::Invalid(reviewloop_domain::ValidationError::field(field, message)),
            surface,
            status: Some(status),
        }
    }

    /// A client error with its own status and message.
    pub fn with_status(status: StatusCode, message: String, surface: Surface) -> Self {
        Self {
            error: ServiceError::Refused(message),
            surface,
            status: Some(status),
        }
    }

    /// The failure body this error is answered with. On the alternate
    /// surface a validation error lists every field at fault in `details`,
    /// and a missing resource has the code of its kind.
    pub fn body(&self) -> Value {
        let status = self.status_code();
        let message = self.error.to_string();
        if self.surface == Surface::Request {
            let mut body = failure_body(self.surface, status, &message, None);
            // Where the key stands, as HITL.sh's clients read it.
            if let ServiceError::RateLimited(limit) = &self.error {
                body["data"] = json!({
                    "usage_count": limit.limit.saturating_sub(limit.remaining),
                    "usage_limit": limit.limit,
                    "remaining": limit.remaining,
                    "reset_at": limit.reset_at,
                });
            }
            return body;
        }
        let code = match &self.error {
            ServiceError::NotFound(TEMPLATE_NOT_FOUND) => "template_not_found",
            ServiceError::NotFound(REVIEW_NOT_FOUND) => "review_not_found",
            ServiceError::NotFound(TEAM_NOT_FOUND) => "team_not_found",
            _ => alternate_code(status),
        };
        let details = match &self.error {
            ServiceError::Invalid(invalid) => Value::Array(
                invalid
                    .errors
                    .iter()
                    .map(|e| json!({"field": e.field, "message": e.message}))
                    .collect(),
            ),
            _ => Value::Null,
        };
        alternate_failure(code, &message, details, None)
    }

    /// A 400 with `message`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ServiceError::Refused(message.into()), Surface::Request)
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        Self::new(error, Surface::Request)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.error, f)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        if let Some(status) = self.status {
            return status;
        }
        match &self.error {
            ServiceError::Invalid(_) | ServiceError::Refused(_) => StatusCode::BAD_REQUEST,
            ServiceError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
            ServiceError::NotFound(_) => StatusCode::NOT_FOUND,
            ServiceError::Conflict(_) => StatusCode::CONFLICT,
            ServiceError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ServiceError::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            ServiceError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ServiceError::Unexpected(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match &self.error {
            ServiceError::Unexpected(cause) => {
                tracing::error!(%cause, "request failed unexpectedly")
            }
            ServiceError::Unavailable(cause) => tracing::warn!(%cause, "store unavailable"),
            _ => {}
        }
        let mut response = HttpResponse::build(self.status_code()).json(self.body());
        if let ServiceError::RateLimited(status) = &self.error {
            rate_limit_headers(response.headers_mut(), status);
            let wait = (status.reset_at - Utc::now()).num_seconds().max(1);
            if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
        }
        response
    }
}
