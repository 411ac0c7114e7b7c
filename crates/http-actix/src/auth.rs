//! Authentication of the API scopes: a middleware that checks the bearer
//! key and counts the call, and the extractor that hands the caller to
//! handlers. Every authenticated response carries the key's rate-limit state.

use std::future::{ready, Ready};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use actix_web::middleware::Next;
use actix_web::{web, Error, FromRequest, HttpMessage, HttpRequest};
use reviewloop_ports::RateLimitStatus;
use reviewloop_service::{messages, Allowance, Principal, ServiceError};

use crate::envelope::Surface;
use crate::error::ApiError;
use crate::state::AppState;

/// Writes `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix seconds).
pub(crate) fn rate_limit_headers(headers: &mut HeaderMap, status: &RateLimitStatus) {
    let values = [
        ("x-ratelimit-limit", status.limit.to_string()),
        ("x-ratelimit-remaining", status.remaining.to_string()),
        ("x-ratelimit-reset", status.reset_at.timestamp().to_string()),
    ];
    for (name, value) in values {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}

/// The one `Authorization` header of a call, if any. Two headers that may
/// name different keys are refused (400) rather than one picked: which a
/// proxy or a framework would keep differs, and a call must act as one
/// caller.
fn authorization(req: &ServiceRequest) -> Result<Option<String>, ApiError> {
    let mut headers = req.headers().get_all(AUTHORIZATION);
    let first = headers.next();
    if headers.next().is_some() {
        return Err(ApiError::invalid(
            actix_web::http::StatusCode::BAD_REQUEST,
            "Authorization",
            "send one Authorization header, not several".into(),
        ));
    }
    Ok(first.and_then(|v| v.to_str().ok()).map(str::to_owned))
}

/// Middleware of the authenticated scopes.
pub(crate) async fn authenticate(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let surface = Surface::of(req.request());
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        let error = ApiError::from(ServiceError::Unexpected("application state missing".into()));
        return Ok(req.error_response(error));
    };
    let header = match authorization(&req) {
        Ok(header) => header,
        Err(error) => return Ok(req.error_response(error)),
    };
    // Each surface counts calls against its own allowance: the request
    // surface the key's hourly limit, the alternate surface the key's
    // plan's per minute.
    let allowance = match surface {
        Surface::Request => Allowance::Hourly,
        Surface::Alternate => Allowance::PerMinute,
    };
    match state.auth.authenticate(header.as_deref(), allowance).await {
        Ok((principal, status)) => {
            req.extensions_mut().insert(Caller {
                principal,
                rate_limit: status,
            });
            let mut response = next.call(req).await?;
            rate_limit_headers(response.headers_mut(), &status);
            Ok(response.map_into_boxed_body())
        }
        // Kept as the error it is, so the scope renders it in its envelope.
        Err(error) => Ok(req.error_response(ApiError::from(error))),
    }
}

/// The authenticated caller and its rate-limit state after this call.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub principal: Principal,
    pub rate_limit: RateLimitStatus,
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let caller = req.extensions().get::<Caller>().cloned();
        ready(caller.ok_or_else(|| ServiceError::Unauthenticated(messages::MISSING_KEY).into()))
    }
}

/// Middleware of the routes a signed-in page calls as well as a program
/// (Web Push devices): an API key when the call carries one, else the web
/// session's cookie with the session's anti-forgery token in
/// `X-CSRF-Token`. A session's calls count against no allowance, like
/// the pages themselves.
pub(crate) async fn key_or_session(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let session = req
        .cookie(reviewloop_service::SESSION_COOKIE)
        .map(|c| c.value().to_owned());
    let (false, Some(token)) = (req.headers().contains_key(AUTHORIZATION), session) else {
        return authenticate(req, next).await;
    };
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        let error = ApiError::from(ServiceError::Unexpected("application state missing".into()));
        return Ok(req.error_response(error));
    };
    let csrf = req
        .headers()
        .get("x-csrf-token")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match state
        .auth
        .authenticate_session(&token, csrf.as_deref())
        .await
    {
        Ok(principal) => {
            req.extensions_mut().insert(SessionCaller(principal));
            Ok(next.call(req).await?.map_into_boxed_body())
        }
        Err(error) => Ok(req.error_response(ApiError::from(error))),
    }
}

/// A person calling from a signed-in page.
#[derive(Debug, Clone)]
struct SessionCaller(Principal);

/// Whoever calls a route that takes an API key or a web session.
#[derive(Debug, Clone)]
pub(crate) struct KeyOrSession(pub Principal);

impl FromRequest for KeyOrSession {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let extensions = req.extensions();
        let principal = extensions
            .get::<Caller>()
            .map(|c| c.principal.clone())
            .or_else(|| extensions.get::<SessionCaller>().map(|s| s.0.clone()));
        ready(
            principal
                .map(KeyOrSession)
                .ok_or_else(|| ServiceError::Unauthenticated(messages::MISSING_KEY).into()),
        )
    }
}
