//! Answers the framework gives on its own (unknown route, wrong method,
//! oversized payload) come out in the envelope of their surface, and every
//! response names its request id.

use std::sync::Arc;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::middleware::{ErrorHandlerResponse, Next};
use actix_web::{web, Error, HttpMessage, HttpRequest, HttpResponse};
use reviewloop_ports::tally::{self, Tally};
use tracing::Span;
use tracing_actix_web::{RequestId, RootSpanBuilder};

use crate::envelope::{failure, keep_headers, Surface};
use crate::state::AppState;

pub(crate) fn request_id(req: &HttpRequest) -> Option<String> {
    req.extensions().get::<RequestId>().map(ToString::to_string)
}

/// The default service: no route matched.
pub(crate) async fn not_found(req: HttpRequest) -> HttpResponse {
    failure(
        Surface::of(&req),
        StatusCode::NOT_FOUND,
        "Not found",
        request_id(&req),
    )
}

fn message_for(status: StatusCode) -> String {
    match status {
        StatusCode::NOT_FOUND => "Not found".into(),
        StatusCode::METHOD_NOT_ALLOWED => "Method not allowed".into(),
        StatusCode::PAYLOAD_TOO_LARGE => format!(
            "Request body too large: the limit is {} bytes",
            crate::MAX_BODY_BYTES
        ),
        StatusCode::INTERNAL_SERVER_ERROR => "Internal server error".into(),
        other => other.canonical_reason().unwrap_or("Request failed").into(),
    }
}

/// Rewrites any error response that is not already JSON into the envelope,
/// keeping its status and its headers (`Allow`, rate-limit headers).
pub(crate) fn into_envelope<B: MessageBody>(
    response: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    // JSON is already in the envelope; HTML is a page of the web
    // application, which says what went wrong in its own way.
    let is_rendered = response.headers().get(CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes().starts_with(b"application/json") || v.as_bytes().starts_with(b"text/html")
    });
    if is_rendered {
        return Ok(ErrorHandlerResponse::Response(
            response.map_into_left_body(),
        ));
    }
    let (req, old) = response.into_parts();
    let status = old.status();
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        if let Some(error) = old.error() {
            tracing::error!(%error, "unhandled error");
        }
    }
    let new = keep_headers(
        &old,
        failure(
            Surface::of(&req),
            status,
            &message_for(status),
            request_id(&req),
        ),
    );
    let response: ServiceResponse<EitherBody<B, BoxBody>> =
        ServiceResponse::new(req, new).map_into_right_body();
    Ok(ErrorHandlerResponse::Response(response))
}

/// The span around each request, which every log line of the request
/// carries: its method, path and request id. tracing-actix-web's default
/// also names the matched route, found by matching the path against the
/// route table a second time, and the client's address and agent, all
/// worked out for every request even when nothing is logged; the
/// request's own log line says the rest.
pub(crate) struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let id = request.extensions().get::<RequestId>().copied();
        tracing::info_span!(
            "HTTP request",
            http.method = %request.method(),
            http.target = %request.path(),
            request_id = id.map(tracing::field::display),
        )
    }

    fn on_request_end<B: MessageBody>(_: Span, _: &Result<ServiceResponse<B>, Error>) {
        // The request's log line (`request_id_header`) has the outcome.
    }
}

/// Adds `X-Request-Id`, the id the request's log lines carry, and logs one
/// line per request (inside the request's span, so with its id).
pub(crate) async fn request_id_header(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let id = req.extensions().get::<RequestId>().map(ToString::to_string);
    let started = std::time::Instant::now();
    let (method, path) = (req.method().to_string(), req.path().to_owned());
    let operations = req
        .app_data::<web::Data<AppState>>()
        .map(|state| state.operations.clone());
    let tally = Arc::new(Tally::default());
    let work = tally::counting(tally.clone(), next.call(req));
    let mut response = match id.clone() {
        Some(id) => crate::envelope::with_request_id(id, work).await?,
        None => work.await?,
    };
    if let Some(operations) = operations {
        // The route's pattern, not the path: ids would make a series each.
        // The API's routes carry it; others (the web application's pages)
        // are matched again to find it.
        let request = response.request();
        let route: Option<std::borrow::Cow<'_, str>> =
            match request.app_data::<crate::routes::RoutePattern>() {
                Some(pattern) => Some((*pattern.0).into()),
                None => request.match_pattern().map(Into::into),
            };
        // Any token is a method to HTTP; only the ones we answer get a
        // series of their own, so nobody can grow the metrics at will.
        let known = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
        let method_label = known
            .iter()
            .find(|m| **m == method)
            .copied()
            .unwrap_or("other");
        operations.http_request(
            route.as_deref().unwrap_or("unmatched"),
            method_label,
            response.status().as_u16(),
            started.elapsed().as_secs_f64(),
        );
        // Stopping: each connection closes after its answer, so that a
        // proxy's kept-alive connections are gone before the listener
        // closes, and none is reused just as it is shut.
        if operations.is_stopping() {
            response
                .response_mut()
                .head_mut()
                .set_connection_type(actix_web::http::ConnectionType::Close);
        }
    }
    tracing::info!(
        %method,
        %path,
        status = response.status().as_u16(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        statements = tally.statements(),
        prepared = tally.prepared(),
        "request"
    );
    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("x-request-id"), value);
    }
    Ok(response)
}
