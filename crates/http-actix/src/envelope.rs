//! The two response envelopes, and the one place that chooses between
//! them. The request surface answers `{"error", "msg", "data"}`; the
//! alternate surface (reviews, templates, webhooks, teams) answers
//! `{"success", "data", "meta"}` and, on failure,
//! `{"success": false, "error": {"code", "message", "details"}}`.
//!
//! The route table mounts every scope with its surface ([`request_surface`]
//! or [`alternate_surface`]); a handler returns a [`Reply`] or an
//! [`ApiError`](crate::error::ApiError) and never names an envelope.

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{ContentType, CONTENT_LENGTH, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::{body::MessageBody, Error, HttpMessage, HttpRequest, HttpResponse, Responder};
use chrono::{SecondsFormat, Utc};
use reviewloop_wire::alternate::PageMeta;
use reviewloop_wire::envelope::{ErrorA, ErrorB, ErrorDetail, FieldProblem, Meta};
use serde::Serialize;
#[cfg(test)]
use serde_json::{json, Value};

use crate::error::ApiError;

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

fn meta(request_id: Option<String>, pagination: Option<PageMeta>) -> Meta {
    Meta {
        request_id: current_request_id(request_id),
        timestamp: Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
        pagination,
    }
}

/// Which envelope a route answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `/v1/api/...`, `/v1/loops`, `/v1/requests`, `/v1/test`, everything else.
    Request,
    /// `/v1/reviews`, `/v1/templates`, `/v1/webhooks`, `/v1/teams`.
    Alternate,
}

impl Surface {
    /// The surface of the scope that routed `req`. Outside the API's
    /// scopes (`/health`, `/mcp`, the web application) it is the request
    /// surface.
    pub(crate) fn of(req: &HttpRequest) -> Self {
        req.extensions()
            .get::<Surface>()
            .copied()
            .unwrap_or(Surface::Request)
    }
}

/// Middleware of a request-surface scope.
pub(crate) async fn request_surface(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    answer_in(Surface::Request, req, next).await
}

/// Middleware of an alternate-surface scope.
pub(crate) async fn alternate_surface(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    answer_in(Surface::Alternate, req, next).await
}

/// Marks the request with `surface` for everything inside the scope
/// (extractors, authentication, [`Reply`]) and renders an [`ApiError`] in
/// it. An error renders itself in envelope A; only the alternate surface
/// has to render it again.
async fn answer_in(
    surface: Surface,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    req.extensions_mut().insert(surface);
    let response = next.call(req).await?.map_into_boxed_body();
    if surface == Surface::Request {
        return Ok(response);
    }
    let Some(rendered) = response
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
        .map(|error| error.render(surface))
    else {
        return Ok(response);
    };
    let (req, old) = response.into_parts();
    Ok(ServiceResponse::new(req, keep_headers(&old, rendered)))
}

/// `new` with the headers `old` carried (rate-limit headers, `Allow`,
/// `Retry-After`), but its own body's type and length.
pub(crate) fn keep_headers<B>(old: &HttpResponse<B>, mut new: HttpResponse) -> HttpResponse {
    for (name, value) in old.headers() {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            new.headers_mut().insert(name.clone(), value.clone());
        }
    }
    new
}

/// The data of a success, shaped for either envelope.
enum Shape {
    /// The same data in both.
    Same(Bytes),
    /// Data of each envelope's own shape: A's, then B's (a webhook is
    /// `{"webhook": ...}` in A and the object itself in B).
    Each(Bytes, Bytes),
}

/// A success: its status, the message envelope A carries and its data. The
/// route's surface chooses the envelope when it is sent.
pub(crate) struct Reply {
    status: StatusCode,
    msg: &'static str,
    shape: Shape,
    pagination: Option<PageMeta>,
}

/// `data` as JSON text.
pub(crate) fn json_bytes(data: &impl Serialize) -> Bytes {
    // Our views always serialize (no map has keys that are not strings);
    // were one not to, the data says so rather than the answer being lost.
    serde_json::to_vec(data)
        .map(Into::into)
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "an answer could not be serialized");
            Bytes::from_static(b"null")
        })
}

impl Reply {
    /// `data`, the same in both envelopes.
    pub(crate) fn new(status: StatusCode, msg: &'static str, data: impl Serialize) -> Self {
        Self {
            status,
            msg,
            shape: Shape::Same(json_bytes(&data)),
            pagination: None,
        }
    }

    /// `a` in envelope A, `b` in envelope B.
    pub(crate) fn each(
        status: StatusCode,
        msg: &'static str,
        a: impl Serialize,
        b: impl Serialize,
    ) -> Self {
        Self {
            status,
            msg,
            shape: Shape::Each(json_bytes(&a), json_bytes(&b)),
            pagination: None,
        }
    }

    /// Paging facts, which envelope B carries in `meta.pagination`.
    pub(crate) fn paged(mut self, pagination: PageMeta) -> Self {
        self.pagination = Some(pagination);
        self
    }

    /// The status it answers with.
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    /// The whole body in the envelope of `surface`.
    pub(crate) fn body(self, surface: Surface) -> Bytes {
        let data = match (self.shape, surface) {
            (Shape::Same(data), _)
            | (Shape::Each(data, _), Surface::Request)
            | (Shape::Each(_, data), Surface::Alternate) => data,
        };
        let mut body = Vec::with_capacity(data.len() + 64);
        match surface {
            Surface::Request => {
                body.extend_from_slice(br#"{"error":false,"msg":"#);
                body.extend_from_slice(&json_bytes(&self.msg));
                body.extend_from_slice(br#","data":"#);
                body.extend_from_slice(&data);
            }
            Surface::Alternate => {
                let meta = meta(None, self.pagination);
                body.extend_from_slice(br#"{"success":true,"data":"#);
                body.extend_from_slice(&data);
                body.extend_from_slice(br#","meta":"#);
                body.extend_from_slice(&json_bytes(&meta));
            }
        }
        body.extend_from_slice(b"}");
        body.into()
    }
}

impl Responder for Reply {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        let status = self.status;
        json_response(status, self.body(Surface::of(req)))
    }
}

/// A JSON answer made of `body`.
pub(crate) fn json_response(status: StatusCode, body: Bytes) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(ContentType::json())
        .body(body)
}

/// The code of the alternate envelope for a status.
pub(crate) fn alternate_code(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 422 => "validation_error",
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

/// A failure the framework gives (no route, wrong method), in the envelope
/// of `surface`.
pub(crate) fn failure(
    surface: Surface,
    status: StatusCode,
    message: &str,
    request_id: Option<String>,
) -> HttpResponse {
    match surface {
        Surface::Request => HttpResponse::build(status).json(ErrorA {
            error: true,
            msg: message,
            data: None,
        }),
        Surface::Alternate => HttpResponse::build(status).json(alternate_failure(
            alternate_code(status),
            message,
            None,
            request_id,
        )),
    }
}

/// A failure of the alternate envelope: `details` lists the fields at
/// fault, or is null.
pub(crate) fn alternate_failure<'a>(
    code: &'a str,
    message: &'a str,
    details: Option<Vec<FieldProblem<'a>>>,
    request_id: Option<String>,
) -> ErrorB<'a> {
    ErrorB {
        success: false,
        error: ErrorDetail {
            code,
            message,
            details,
        },
        meta: meta(request_id, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: Bytes) -> Value {
        serde_json::from_slice(&body).unwrap()
    }

    #[test]
    fn one_reply_takes_the_envelope_of_its_surface() {
        let reply = || {
            Reply::each(
                StatusCode::CREATED,
                "Made",
                json!({"thing": {"id": 1}}),
                json!({"id": 1}),
            )
        };
        assert_eq!(
            parsed(reply().body(Surface::Request)),
            json!({"error": false, "msg": "Made", "data": {"thing": {"id": 1}}})
        );
        let page = PageMeta {
            total: 2,
            limit: 10,
            offset: 0,
            has_more: false,
        };
        let b = parsed(reply().paged(page).body(Surface::Alternate));
        assert_eq!(b["success"], true);
        assert_eq!(b["data"], json!({"id": 1}));
        assert!(b["meta"]["timestamp"].is_string());
        assert_eq!(b["meta"]["pagination"]["total"], 2);
    }

    #[test]
    fn messages_are_escaped() {
        let body = Reply::new(StatusCode::OK, "say \"hi\"", json!(null)).body(Surface::Request);
        assert_eq!(parsed(body)["msg"], "say \"hi\"");
    }
}
