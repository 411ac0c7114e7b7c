//! The two response envelopes. The request surface answers
//! `{"error", "msg", "data"}`; the alternate surface (reviews, templates,
//! webhooks, teams) answers `{"success", "data", "meta"}` and, on failure,
//! `{"success": false, "error": {"code", "message", "details"}}`.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{json, Value};

tokio::task_local! {
    static REQUEST_ID: String;
}

/// Runs `work` (the handling of one request) with its request id known to
/// every answer built inside it, errors included.
pub(crate) async fn with_request_id<F: std::future::Future>(id: String, work: F) -> F::Output {
    REQUEST_ID.scope(id, work).await
}

/// The id of the request being handled, where [`with_request_id`] set one.
fn current_request_id(given: Option<String>) -> Option<String> {
    given.or_else(|| REQUEST_ID.try_with(Clone::clone).ok())
}

fn meta(request_id: Option<String>) -> Value {
    json!({
        "request_id": current_request_id(request_id),
        "timestamp": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
    })
}

/// Which envelope a path answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `/v1/api/...`, `/v1/loops`, `/v1/requests`, `/v1/test`, everything else.
    Request,
    /// `/v1/reviews`, `/v1/templates`, `/v1/webhooks`, `/v1/teams`.
    Alternate,
}

impl Surface {
    /// The surface a path belongs to.
    pub fn of(path: &str) -> Self {
        const ALTERNATE: [&str; 4] = ["/v1/reviews", "/v1/templates", "/v1/webhooks", "/v1/teams"];
        let alternate = ALTERNATE.iter().any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        });
        if alternate {
            Self::Alternate
        } else {
            Self::Request
        }
    }
}

/// The body of a success in envelope A.
pub fn ok_body(msg: &str, data: impl Serialize) -> Value {
    json!({"error": false, "msg": msg, "data": data})
}

/// A success in the alternate envelope: `{"success", "data", "meta"}`.
pub fn ok_alternate(status: StatusCode, data: impl Serialize) -> HttpResponse {
    HttpResponse::build(status).json(json!({
        "success": true,
        "data": data,
        "meta": meta(None),
    }))
}

/// A page of a list in the alternate envelope: `meta` also carries
/// `pagination`.
pub(crate) fn ok_alternate_paged(data: impl Serialize, pagination: Value) -> HttpResponse {
    let mut meta = meta(None);
    meta["pagination"] = pagination;
    HttpResponse::Ok().json(json!({"success": true, "data": data, "meta": meta}))
}

/// Envelope A around typed data, serialized in one pass.
#[derive(Serialize)]
struct Success<'a, T> {
    error: bool,
    msg: &'a str,
    data: T,
}

/// A success in envelope A.
pub fn ok(status: StatusCode, msg: &str, data: impl Serialize) -> HttpResponse {
    HttpResponse::build(status).json(Success {
        error: false,
        msg,
        data,
    })
}

/// Envelope A around typed data, serialized into bytes to send now and
/// perhaps again ([`ok_made`]).
pub(crate) fn ok_bytes(msg: &str, data: impl Serialize) -> actix_web::web::Bytes {
    // Our views always serialize (no map has keys that are not strings);
    // were one not to, the answer says so rather than sending nothing.
    serde_json::to_vec(&Success {
        error: false,
        msg,
        data,
    })
    .map(Into::into)
    .unwrap_or_else(|e| {
        tracing::error!(error = %e, "an answer could not be serialized");
        actix_web::web::Bytes::from_static(br#"{"error":true,"msg":"Internal server error"}"#)
    })
}

/// A success in envelope A whose body [`ok_bytes`] made.
pub(crate) fn ok_made(status: StatusCode, body: actix_web::web::Bytes) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(actix_web::http::header::ContentType::json())
        .body(body)
}

/// The code of the alternate envelope for a status.
pub(crate) fn alternate_code(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 415 | 422 => "validation_error",
        401 => "unauthorized",
        403 => "insufficient_permissions",
        404 => "not_found",
        405 => "method_not_allowed",
        409 => "conflict",
        429 => "rate_limit_exceeded",
        503 => "service_unavailable",
        _ => "internal_error",
    }
}

/// A failure in the envelope of `surface`.
pub fn failure(
    surface: Surface,
    status: StatusCode,
    message: &str,
    request_id: Option<String>,
) -> HttpResponse {
    HttpResponse::build(status).json(failure_body(surface, status, message, request_id))
}

/// The body of a failure in the envelope of `surface`.
pub fn failure_body(
    surface: Surface,
    status: StatusCode,
    message: &str,
    request_id: Option<String>,
) -> Value {
    match surface {
        Surface::Request => json!({"error": true, "msg": message}),
        Surface::Alternate => {
            alternate_failure(alternate_code(status), message, Value::Null, request_id)
        }
    }
}

/// A failure body of the alternate envelope: `details` lists the fields at
/// fault (`[{"field", "message"}]`), or is null.
pub(crate) fn alternate_failure(
    code: &str,
    message: &str,
    details: Value,
    request_id: Option<String>,
) -> Value {
    json!({
        "success": false,
        "error": {"code": code, "message": message, "details": details},
        "meta": meta(request_id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_pick_their_surface() {
        for path in [
            "/v1/webhooks",
            "/v1/webhooks/abc",
            "/v1/reviews",
            "/v1/teams/x/members",
            "/v1/templates",
        ] {
            assert_eq!(Surface::of(path), Surface::Alternate, "{path}");
        }
        for path in [
            "/v1/api/webhooks",
            "/v1/loops",
            "/v1/test",
            "/",
            "/v1/reviewsx",
            "/join/ABC",
        ] {
            assert_eq!(Surface::of(path), Surface::Request, "{path}");
        }
    }
}
