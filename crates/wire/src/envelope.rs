//! The failure envelopes of both surfaces, and the `meta` of the
//! alternate one. (Successes wrap each operation's own data: the document
//! describes one envelope per data type.)

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::alternate::PageMeta;

/// Where a key stands, on a 429 of the request surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Usage)]
pub struct UsageOut {
    pub usage_count: u32,
    pub usage_limit: u32,
    pub remaining: u32,
    pub reset_at: DateTime<Utc>,
}

/// A failure on the request surface. A 429 also carries `data` with the
/// key's usage.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ErrorA, example = json!({"error": true, "msg": "request_text is required"}))]
pub struct ErrorA<'a> {
    /// Always `true`.
    pub error: bool,
    /// What is wrong, for people.
    pub msg: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<UsageOut>,
}

/// The facts about an answer of the alternate surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Meta)]
pub struct Meta {
    /// The `X-Request-Id` of the answer.
    pub request_id: Option<String>,
    /// RFC 3339 with milliseconds.
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagination: Option<PageMeta>,
}

/// A field at fault.
#[derive(Debug, Serialize, ToSchema)]
pub struct FieldProblem<'a> {
    pub field: &'a str,
    pub message: &'a str,
}

/// What went wrong, on the alternate surface.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail<'a> {
    /// `validation_error`, `unauthorized`, `insufficient_permissions`,
    /// `not_found`, `template_not_found`, `review_not_found`,
    /// `team_not_found`, `conflict`, `rate_limit_exceeded`, ...
    pub code: &'a str,
    pub message: &'a str,
    /// Each field at fault, for a validation error.
    pub details: Option<Vec<FieldProblem<'a>>>,
}

/// A failure on the alternate surface; `details` names each field at fault.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ErrorB, example = json!({
    "success": false,
    "error": {"code": "validation_error", "message": "content.text is required",
              "details": [{"field": "content.text", "message": "content.text is required"}]},
    "meta": {"request_id": "req_6743a1f0", "timestamp": "2026-11-24T12:00:00.000Z"},
}))]
pub struct ErrorB<'a> {
    /// Always `false`.
    pub success: bool,
    pub error: ErrorDetail<'a>,
    pub meta: Meta,
}
