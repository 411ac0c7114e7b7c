//! rmcp's Streamable HTTP service speaks the `http` 1.x types; actix-web
//! has its own. This carries one call across: the request (with the
//! caller in its extensions) in, the answer (JSON, or an event stream)
//! back out as it is produced.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use http_body_util::{BodyExt, Full};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::tools::Tools;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The MCP service of one worker (stateless, so workers share nothing).
#[derive(Clone)]
pub(crate) struct McpService(StreamableHttpService<Tools, NeverSessionManager>);

impl McpService {
    /// Tools over `state`'s services.
    pub(crate) fn new(state: AppState) -> Self {
        let config = StreamableHttpServerConfig::default()
            // Any instance may answer any call: no sessions to lose.
            .with_legacy_session_mode(false)
            // A plain JSON answer per call, unless a tool streams.
            .with_json_response(true)
            // rmcp's Host check guards servers that trust whoever can reach
            // them (DNS rebinding against localhost); this one requires an
            // API key on every call, and runs under any public host name.
            .disable_allowed_hosts()
            .with_max_request_body_bytes(crate::MAX_BODY_BYTES);
        Self(StreamableHttpService::new(
            move || Ok(Tools::new(state.clone())),
            Arc::new(NeverSessionManager::default()),
            config,
        ))
    }
}

fn to_http(
    req: &HttpRequest,
    body: web::Bytes,
    caller: Caller,
) -> Option<http::Request<Full<web::Bytes>>> {
    let mut builder = http::Request::builder()
        .method(req.method().as_str())
        .uri(req.uri().to_string());
    for (name, value) in req.headers() {
        builder = builder.header(name.as_str(), value.as_bytes());
    }
    let mut request = builder.body(Full::new(body)).ok()?;
    request.extensions_mut().insert(caller.principal);
    Some(request)
}

/// `POST /mcp`, after the key middleware let the call in. (Stateless, the
/// server keeps no stream a `GET` could open and no session a `DELETE`
/// could end; those methods are the router's 405.)
pub(crate) async fn handle(
    req: HttpRequest,
    payload: web::Payload,
    caller: Caller,
    mcp: web::Data<McpService>,
) -> Result<HttpResponse, ApiError> {
    // As for every API body: a client that trickles it is cut off.
    let body = match actix_web::rt::time::timeout(
        crate::BODY_READ_TIMEOUT,
        payload.to_bytes_limited(crate::MAX_BODY_BYTES),
    )
    .await
    {
        Ok(Ok(Ok(body))) => body,
        Ok(Ok(Err(_))) => return Err(ApiError::bad_request("The request body could not be read")),
        Ok(Err(_)) => {
            return Err(ApiError::with_status(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Request body is larger than 1 MiB",
            ))
        }
        Err(_) => return Err(crate::body::too_slow()),
    };
    let Some(request) = to_http(&req, body, caller) else {
        return Err(ApiError::bad_request("The request could not be read"));
    };
    let (parts, body) = mcp.0.handle(request).await.into_parts();
    let status =
        StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    for (name, value) in &parts.headers {
        response.append_header((name.as_str(), value.as_bytes()));
    }
    Ok(response.streaming(body.into_data_stream()))
}
