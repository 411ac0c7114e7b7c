//! The MCP server's tools: what an agent sends each and what it gets back.

use reviewloop_domain::{ReviewRequest, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::loops::LoopOut;
use crate::requests::RequestOut;

/// What an agent sends to create a request: the fields of
/// `POST /v1/api/loops/{id}/requests`, checked by the same rules, with
/// defaults for those an agent rarely knows.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CreateArgs {
    /// The loop whose reviewers are asked (24 hexadecimal characters; see `list_loops`).
    pub loop_id: String,
    /// What the reviewers read (Markdown).
    pub request_text: String,
    /// How they answer: `single_select`, `multi_select`, `text`, `rating`, `number` or `boolean`.
    pub response_type: String,
    /// The answer's rules: `{"options": [...]}` for selects (strings or
    /// `{value, label, description, color}`), `{"scale_max": 5}` for ratings,
    /// `{"min_value", "max_value"}` for numbers, `{"max_length"}` for text, `{}` for boolean.
    pub response_config: Value,
    /// The answer that stands if nobody answers in time; it must fit `response_config`.
    pub default_response: Value,
    /// `low`, `medium`, `high` or `critical` (default `medium`).
    pub priority: Option<String>,
    /// Seconds the reviewers have (up to 2592000; default 3600 for time-sensitive requests).
    pub timeout_seconds: Option<u64>,
    /// `time-sensitive` (default) or `deferred`.
    pub processing_type: Option<String>,
    /// `markdown` (default) or `image`.
    #[serde(rename = "type")]
    pub content_type: Option<String>,
    /// The image reviewers look at, when `type` is `image` (https).
    pub image_url: Option<String>,
    /// Anything that helps the reviewer decide, shown beside the text.
    pub context: Option<Value>,
    /// Your own data, returned with the answer and never shown to reviewers.
    pub metadata: Option<Value>,
    /// Labels for your own filtering.
    pub tags: Option<Vec<String>>,
    /// Where to POST the answer (https), besides waiting for it here.
    pub callback_url: Option<String>,
    /// Where the request comes from: `api` (default), `n8n`, `zapier`, ...
    pub platform: Option<String>,
    /// If nobody takes it up in time, also ask another loop:
    /// `{"after_seconds": 900, "to_loop_id": "...", "raise_priority": true}`
    /// (default: the loop's own setting; `null` for none).
    pub escalation: Option<Value>,
    /// Test-mode keys only: the answer the request gets by itself, instead
    /// of asking people.
    pub test_response: Option<Value>,
    /// Test-mode keys only: seconds on the test clock before
    /// `test_response` is given (default 0).
    pub test_delay_seconds: Option<u64>,
    /// Ask once for many runs: while one of your requests in this loop
    /// with this key is open, this one joins it instead of asking people
    /// again, and gets the same answer (1 to 200 characters).
    pub coalesce_key: Option<String>,
}

/// A request by id.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RequestArgs {
    /// The request's id (24 hexadecimal characters).
    pub request_id: String,
}

/// How long to wait for a request's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WaitArgs {
    /// The request's id (24 hexadecimal characters).
    pub request_id: String,
    /// Seconds to wait at most (1 to 300; default 60). The call returns as
    /// soon as the request is answered, times out or is cancelled.
    #[schemars(range(min = 1, max = 300))]
    pub wait_seconds: Option<u64>,
}

/// Which requests to list.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only this status: `pending`, `claimed`, `completed`, `timeout` or `cancelled`.
    pub status: Option<String>,
    /// Only this loop.
    pub loop_id: Option<String>,
    /// Only this priority.
    pub priority: Option<String>,
    /// How many (1 to 200; default 50).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
    /// How many to skip.
    pub offset: Option<u32>,
    /// `key` (default): the requests made with this key; `account`: the
    /// whole account's.
    pub scope: Option<String>,
}

/// One request as an agent reads it: what it reads first, then the request
/// as the caller may see it.
#[derive(Debug, Serialize)]
pub struct RequestAnswer<'a> {
    pub request_id: reviewloop_domain::RequestId,
    pub status: &'static str,
    pub response_data: &'a Option<Value>,
    /// What the reviewer who decided it wrote with the answer.
    pub response_comment: Option<&'a str>,
    pub request: RequestOut<'a>,
}

impl<'a> RequestAnswer<'a> {
    /// `request` as `viewer` may see it.
    pub fn of(request: &'a ReviewRequest, viewer: &'a UserId) -> Self {
        Self {
            request_id: request.id,
            status: request.status.as_str(),
            response_data: &request.response_data,
            response_comment: request.response_comment.as_deref(),
            request: RequestOut::for_viewer(request, viewer),
        }
    }
}

/// The loops an agent may ask.
#[derive(Debug, Serialize)]
pub struct LoopsAnswer<'a> {
    pub loops: Vec<LoopOut<'a>>,
    pub count: usize,
}

/// A page of the caller's requests, shown whole.
#[derive(Debug, Serialize)]
pub struct RequestsAnswer<'a> {
    pub requests: Vec<RequestOut<'a>>,
    pub count: usize,
    pub total: u64,
    pub limit: u32,
    pub offset: u32,
}
