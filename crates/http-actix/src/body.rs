//! Extractor settings that turn malformed bodies, queries and paths into
//! 4xx answers in the envelope, and the helpers handlers parse ids with.

use actix_web::dev::Payload;
use actix_web::error::{JsonPayloadError, QueryPayloadError};
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::{BODY_READ_TIMEOUT, MAX_BODY_BYTES};

pub(crate) fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(MAX_BODY_BYTES)
        .error_handler(|error, _| json_error(&error).into())
}

fn json_error(error: &JsonPayloadError) -> ApiError {
    let message = match error {
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            format!("Request body too large: the limit is {MAX_BODY_BYTES} bytes")
        }
        JsonPayloadError::ContentType => "Content-Type must be application/json".to_owned(),
        JsonPayloadError::Deserialize(e) if e.is_data() => format!("Invalid request body: {e}"),
        JsonPayloadError::Deserialize(e) => format!("Malformed JSON: {e}"),
        other => format!("Cannot read request body: {other}"),
    };
    let status = match error {
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            StatusCode::PAYLOAD_TOO_LARGE
        }
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::invalid(status, "body", message)
}

pub(crate) fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|error, _| {
        let message = match &error {
            QueryPayloadError::Deserialize(e) => format!("Invalid query string: {e}"),
            other => format!("Invalid query string: {other}"),
        };
        ApiError::invalid(StatusCode::BAD_REQUEST, "query", message).into()
    })
}

pub(crate) fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|_, _| invalid_id().into())
}

/// A path id that is not 24 hexadecimal characters: 400 `Invalid ID
/// format`, whose `details` name `id` on the alternate surface.
pub(crate) fn invalid_id() -> ApiError {
    ApiError::invalid(StatusCode::BAD_REQUEST, "id", "Invalid ID format".into())
}

/// Parses a path id.
pub(crate) fn id<T: std::str::FromStr>(raw: &str) -> Result<T, ApiError> {
    raw.parse().map_err(|_| invalid_id())
}

/// The 408 of a body that did not arrive within [`BODY_READ_TIMEOUT`].
pub(crate) fn too_slow() -> ApiError {
    ApiError::with_status(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "Request body not received within {} seconds",
            BODY_READ_TIMEOUT.as_secs()
        ),
    )
}

/// A JSON body that must be an object. Plain `web::Json<T>` would accept an
/// array for a struct (serde fills fields by position), so the body is read
/// as an object first and only then turned into `T`. The object itself is
/// kept too: idempotency compares bodies by it.
pub(crate) struct Body<T>(pub T, pub Value);

impl<T: DeserializeOwned + 'static> FromRequest for Body<T> {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let object = web::Json::<Map<String, Value>>::from_request(req, payload);
        Box::pin(async move {
            // A client that sends its headers and then trickles the body
            // would hold its connection (and this task) for as long as it
            // liked; the unread rest makes actix close the connection.
            let Ok(object) = actix_web::rt::time::timeout(BODY_READ_TIMEOUT, object).await else {
                return Err(too_slow().into());
            };
            let object = Value::Object(object?.into_inner());
            // The path names the field at fault (`fields[1].name`).
            serde_path_to_error::deserialize(object.clone())
                .map(|typed| Body(typed, object))
                .map_err(|e| {
                    let path = e.path().to_string();
                    let field = if path == "." { "body".to_owned() } else { path };
                    ApiError::invalid(
                        StatusCode::BAD_REQUEST,
                        &field,
                        format!("Invalid request body: {}", e.inner()),
                    )
                    .into()
                })
        })
    }
}

/// Middleware: the whole body of a call that may change something (any
/// method but GET, HEAD and OPTIONS) is read before its handler runs, so
/// a body that breaks off or is malformed (a bad chunk) is refused with
/// 400, 408 or 413 and nothing happens, rather than the action running
/// for an answer the client never gets. Handlers read the body as it was
/// received.
pub(crate) async fn read_body_first(
    mut req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    use actix_web::http::Method;
    use actix_web::HttpMessage as _;
    use futures_util::StreamExt as _;

    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let too_large = || {
        ApiError::invalid(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body",
            format!("Request body too large: the limit is {MAX_BODY_BYTES} bytes"),
        )
    };
    // A body announced as too large is refused before a byte is read.
    let announced = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|length| length > MAX_BODY_BYTES) {
        return Ok(req.error_response(too_large()));
    }
    let mut payload = req.take_payload();
    let read = async {
        let mut body = web::BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| {
                ApiError::invalid(
                    StatusCode::BAD_REQUEST,
                    "body",
                    format!("Cannot read request body: {e}"),
                )
            })?;
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    };
    let body = match actix_web::rt::time::timeout(BODY_READ_TIMEOUT, read).await {
        Ok(Ok(body)) => body,
        Ok(Err(error)) => return Ok(req.error_response(error)),
        Err(_) => return Ok(req.error_response(too_slow())),
    };
    req.set_payload(Payload::from(body));
    Ok(next.call(req).await?.map_into_boxed_body())
}
