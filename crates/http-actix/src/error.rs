//! The error policy, in one place: every service outcome gets one status
//! code and a message in the envelope of the path's surface. Anything
//! unexpected is logged in full and shown as a bare 500.

use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use chrono::Utc;
use reviewloop_service::ServiceError;

use crate::auth::rate_limit_headers;
use crate::envelope::{failure, Surface};

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

    /// A client error with its own status and message.
    pub fn with_status(status: StatusCode, message: String, surface: Surface) -> Self {
        Self {
            error: ServiceError::Refused(message),
            surface,
            status: Some(status),
        }
    }

    /// The failure body this error is answered with.
    pub fn body(&self) -> serde_json::Value {
        crate::envelope::failure_body(
            self.surface,
            self.status_code(),
            &self.error.to_string(),
            None,
        )
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
        let mut response = failure(
            self.surface,
            self.status_code(),
            &self.error.to_string(),
            None,
        );
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
