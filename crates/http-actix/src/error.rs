//! The error policy, in one place: every service outcome gets one status
//! code and a body in each envelope. Anything unexpected is logged in full
//! and shown as a bare 500. Which envelope an error is sent in is the
//! route's surface ([`crate::envelope`]), never the handler's choice.

use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use chrono::Utc;
use reviewloop_service::{Failure, Missing, ServiceError};
use reviewloop_wire::envelope::{ErrorA, FieldProblem, UsageOut};
use serde_json::Value;

use crate::auth::rate_limit_headers;
use crate::envelope::{alternate_code, alternate_failure, Surface};

/// A failed request: what went wrong.
#[derive(Debug)]
pub struct ApiError {
    error: ServiceError,
    /// For failures of the HTTP layer itself that have a status of their
    /// own (408, 413) but no counterpart among the service outcomes.
    status: Option<StatusCode>,
    /// Seconds after which a retry may succeed (`Retry-After`), where the
    /// failure is one that passes.
    retry_after: Option<i64>,
}

/// How long a client waits before retrying when the database is away: it
/// is back, or the service knows it is not, within this.
pub(crate) const UNAVAILABLE_RETRY_AFTER: i64 = 5;

impl ApiError {
    /// A client error about one part of the request (`field`: a path in the
    /// body, or `body`, `id`, `query`), with its own status: on the
    /// alternate surface `details` names the part.
    pub fn invalid(status: StatusCode, field: &str, message: String) -> Self {
        Self {
            error: ServiceError::Invalid(reviewloop_domain::ValidationError::field(field, message)),
            status: Some(status),
            retry_after: None,
        }
    }

    /// A client error with its own status and message.
    pub fn with_status(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            error: ServiceError::Refused(message.into()),
            status: Some(status),
            retry_after: None,
        }
    }

    /// A 400 with `message`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ServiceError::Refused(message.into()).into()
    }

    /// The message the client reads. The alternate surface calls loops
    /// teams.
    fn message(&self, surface: Surface) -> String {
        match (&self.error, surface) {
            (ServiceError::NotFound(Missing::Loop), Surface::Alternate) => "Team not found".into(),
            (error, _) => error.to_string(),
        }
    }

    /// The failure body in the envelope of `surface`. On the alternate
    /// surface a validation error lists every field at fault in `details`,
    /// and a missing resource has the code of its kind.
    pub fn body(&self, surface: Surface) -> Value {
        let status = self.status_code();
        let message = self.message(surface);
        let body = if surface == Surface::Request {
            serde_json::to_value(ErrorA {
                error: true,
                msg: &message,
                // Where the key stands, as HITL.sh's clients read it.
                data: match &self.error {
                    ServiceError::RateLimited(limit) => Some(UsageOut {
                        usage_count: limit.limit.saturating_sub(limit.remaining),
                        usage_limit: limit.limit,
                        remaining: limit.remaining,
                        reset_at: limit.reset_at,
                    }),
                    _ => None,
                },
            })
        } else {
            let code = match &self.error {
                ServiceError::NotFound(Missing::Template) => "template_not_found",
                ServiceError::NotFound(Missing::Review) => "review_not_found",
                ServiceError::NotFound(Missing::Loop) => "team_not_found",
                _ => alternate_code(status),
            };
            let details = match &self.error {
                ServiceError::Invalid(invalid) => Some(
                    invalid
                        .errors
                        .iter()
                        .map(|e| FieldProblem {
                            field: &e.field,
                            message: &e.message,
                        })
                        .collect(),
                ),
                _ => None,
            };
            serde_json::to_value(alternate_failure(code, &message, details, None))
        };
        // Failure bodies hold no map with keys that are not strings.
        body.unwrap_or(Value::Null)
    }

    /// This failure, saying when a retry may succeed.
    pub(crate) fn retry_after(mut self, seconds: i64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// The whole answer in the envelope of `surface`, with the headers
    /// its kind carries (rate-limit state and `Retry-After` on a 429;
    /// `Retry-After` on a 503 and wherever a retry was named).
    pub(crate) fn render(&self, surface: Surface) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code()).json(self.body(surface));
        let wait = match &self.error {
            ServiceError::RateLimited(status) => {
                rate_limit_headers(response.headers_mut(), status);
                Some((status.reset_at - Utc::now()).num_seconds().max(1))
            }
            ServiceError::Unavailable(_) => {
                Some(self.retry_after.unwrap_or(UNAVAILABLE_RETRY_AFTER))
            }
            // Another instance answers a retry at once.
            ServiceError::Stopping => Some(self.retry_after.unwrap_or(1)),
            _ => self.retry_after,
        };
        if let Some(Ok(value)) = wait.map(|w| HeaderValue::from_str(&w.max(1).to_string())) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        response
    }
}

/// Every use case's error reaches the client through its class.
impl<E: Failure> From<E> for ApiError {
    fn from(error: E) -> Self {
        Self {
            error: error.into(),
            status: None,
            retry_after: None,
        }
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
            ServiceError::Unavailable(_) | ServiceError::Stopping => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ServiceError::Unexpected(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Envelope A; an alternate-surface scope renders the error again in
    /// its own ([`crate::envelope`]). Called once per failed request, so
    /// the cause is logged here.
    fn error_response(&self) -> HttpResponse {
        match &self.error {
            ServiceError::Unexpected(cause) => {
                tracing::error!(%cause, "request failed unexpectedly")
            }
            ServiceError::Unavailable(cause) => tracing::warn!(%cause, "store unavailable"),
            _ => {}
        }
        self.render(Surface::Request)
    }
}
