//! reviewloop's HTTP surface on actix-web: both path forms (`/v1/api/...`
//! and `/v1/...`), the response envelopes, authentication and rate-limit
//! headers, and the one place where errors become status codes.
//!
//! Handlers are thin: parse the request, call one service, render.

mod auth;
mod body;
mod client_addr;
mod envelope;
mod error;
mod fallback;
mod mcp;
pub mod openapi;
mod public_limit;
mod rendered;
mod routes;
mod state;

pub use client_addr::TrustedProxies;
pub use envelope::Surface;
pub use error::ApiError;
pub use public_limit::{PublicLimiter, PUBLIC_CALLS_PER_MINUTE};
pub use state::AppState;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{from_fn, ErrorHandlers};
use actix_web::{web, App, Error};
use tracing_actix_web::TracingLogger;

/// Largest request body accepted, in bytes (1 MiB).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long a client has to send a whole request body, from the moment its
/// handler asks for it: 1 MiB in this time is 100 KB/s. The request head
/// has its own limit (actix-web's `client_request_timeout`, 5 s).
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The whole application: routes, extractor error handlers, the JSON
/// fallback for framework errors, request ids and request logging.
/// `pages` mounts another inbound adapter beside the API (the web
/// application); its routes come after the API's and its pages keep their
/// HTML, since only non-JSON, non-HTML error answers are rewritten.
pub fn build_app(
    state: AppState,
    pages: impl FnOnce(&mut web::ServiceConfig),
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    App::new()
        .app_data(web::Data::new(mcp::McpService::new(state.clone())))
        .app_data(web::Data::new(state))
        .app_data(body::json_config())
        .app_data(body::query_config())
        .app_data(body::path_config())
        .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
        .configure(routes::configure)
        .configure(pages)
        .default_service(web::to(fallback::not_found))
        .wrap(ErrorHandlers::new().default_handler(fallback::into_envelope))
        .wrap(from_fn(fallback::request_id_header))
        .wrap(TracingLogger::<fallback::RequestSpan>::new())
}

/// What an instance answers while it waits at start for its database:
/// `/health` (the process is alive, so an orchestrator does not restart
/// it) and 503 `Database unavailable` with `Retry-After` for everything
/// else, `/ready` included.
pub fn starting_app() -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    async fn waiting() -> Result<actix_web::HttpResponse, ApiError> {
        Err(reviewloop_service::ServiceError::Unavailable(
            "the instance is starting and waits for its database".into(),
        )
        .into())
    }
    App::new()
        .route("/health", web::get().to(routes::health))
        .route("/v1/health", web::get().to(routes::health))
        .route("/v1/api/health", web::get().to(routes::health))
        .default_service(web::to(waiting))
        .wrap(from_fn(fallback::request_id_header))
        .wrap(TracingLogger::<fallback::RequestSpan>::new())
}

#[cfg(test)]
mod tests;
