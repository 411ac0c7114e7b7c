//! Failures as pages: every error a person can meet is a page that says
//! what is wrong, with the status code a program would expect.

use actix_web::http::header::LOCATION;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use maud::html;
use reviewloop_service::{Failure, ServiceError};

use crate::layout;

/// Why a page could not be shown.
#[derive(Debug)]
pub(crate) enum PageError {
    /// Not signed in: go to the sign-in page, then come back to `next`.
    SignIn { next: String },
    /// A page or thing that does not exist, or that this person may not see.
    NotFound(String),
    /// A form without a valid anti-forgery token or from another site.
    Forgery,
    /// Too many calls from this address; retry after this many seconds.
    Busy(u64),
    /// Anything else, with its status and a sentence for people.
    Status(StatusCode, String),
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SignIn { .. } => f.write_str("sign in first"),
            Self::NotFound(m) | Self::Status(_, m) => f.write_str(m),
            Self::Forgery => f.write_str("form refused"),
            Self::Busy(_) => f.write_str("too many requests"),
        }
    }
}

/// Every use case's error reaches a person through its class.
impl<E: Failure> From<E> for PageError {
    fn from(error: E) -> Self {
        let error: ServiceError = error.into();
        let status = match &error {
            ServiceError::Invalid(_) | ServiceError::Refused(_) => StatusCode::BAD_REQUEST,
            ServiceError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
            ServiceError::NotFound(m) => return Self::NotFound(m.to_string()),
            ServiceError::Conflict(_) => StatusCode::CONFLICT,
            ServiceError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ServiceError::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            ServiceError::Unavailable(cause) => {
                tracing::warn!(%cause, "store unavailable");
                StatusCode::SERVICE_UNAVAILABLE
            }
            ServiceError::Stopping => StatusCode::SERVICE_UNAVAILABLE,
            ServiceError::Unexpected(cause) => {
                tracing::error!(%cause, "unexpected failure");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        Self::Status(status, error.to_string())
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::SignIn { .. } => StatusCode::SEE_OTHER,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Forgery => StatusCode::FORBIDDEN,
            Self::Busy(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Status(status, _) => *status,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (title, message) = match self {
            Self::SignIn { next } => {
                let target = format!("/login?next={}", crate::form::encode(next));
                return HttpResponse::SeeOther()
                    .insert_header((LOCATION, target))
                    .finish();
            }
            Self::NotFound(m) => ("Not found", m.clone()),
            Self::Forgery => (
                "Form expired",
                "This form was not sent from this site's own page, or the page is too old. \
                 Go back, reload the page and send it again."
                    .to_owned(),
            ),
            Self::Busy(wait) => (
                "Too many requests",
                format!("Too many pages were opened from your address. Try again in {wait} s."),
            ),
            Self::Status(status, m) => (status.canonical_reason().unwrap_or("Error"), m.clone()),
        };
        let body = html! {
            section.card {
                h1 { (title) }
                p { (message) }
                p { a href="/app" { "Back to the inbox" } }
            }
        };
        let mut response = layout::respond(
            self.status_code(),
            layout::page(title, None, layout::Nav::None, body),
        );
        if let Self::Busy(wait) = self {
            if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&wait.to_string()) {
                response
                    .headers_mut()
                    .insert(actix_web::http::header::RETRY_AFTER, value);
            }
        }
        response
    }
}

/// Rewrites an error the framework answered on its own (wrong method, a
/// body too large, a bad path) into a page, keeping its status and headers.
pub(crate) fn as_page<B: actix_web::body::MessageBody>(
    response: actix_web::dev::ServiceResponse<B>,
) -> actix_web::Result<actix_web::middleware::ErrorHandlerResponse<B>> {
    use actix_web::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
    use actix_web::middleware::ErrorHandlerResponse;
    let is_page = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
    if is_page {
        return Ok(ErrorHandlerResponse::Response(
            response.map_into_left_body(),
        ));
    }
    let (req, old) = response.into_parts();
    let status = old.status();
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            "This address does not take that kind of request.".to_owned()
        }
        StatusCode::PAYLOAD_TOO_LARGE => "What was sent is too large.".to_owned(),
        StatusCode::NOT_FOUND => "There is no page at this address.".to_owned(),
        other => other
            .canonical_reason()
            .unwrap_or("The request failed")
            .to_owned(),
    };
    let mut page = PageError::Status(status, message).error_response();
    for (name, value) in old.headers() {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            page.headers_mut().insert(name.clone(), value.clone());
        }
    }
    Ok(ErrorHandlerResponse::Response(
        actix_web::dev::ServiceResponse::new(req, page).map_into_right_body(),
    ))
}
