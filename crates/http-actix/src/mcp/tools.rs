//! The tools: create a request, wait for its answer, read, list, cancel,
//! and list loops.

use std::time::Duration;

use reviewloop_domain::{LoopId, RequestId, RequestInput};
use reviewloop_service::wire::{full_request, request_view, LoopView};
use reviewloop_service::{ListRequestsInput, Principal, ServiceError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::routes::views::created_json;
use crate::state::AppState;

/// The longest `wait_for_response` holds a call. Agents' MCP clients
/// commonly give up on a call after a minute or more; an agent that needs
/// longer calls again.
pub(super) const LONGEST_WAIT_SECONDS: u64 = 300;

/// How long reviewers have when an agent does not say (an hour).
const DEFAULT_TIMEOUT_SECONDS: u64 = 3600;

type ToolResult = Result<CallToolResult, ErrorData>;

/// The MCP server of one call: the services and the tool table.
#[derive(Clone)]
pub(crate) struct Tools {
    state: AppState,
    tool_router: ToolRouter<Self>,
}

/// What an agent sends to create a request: the fields of
/// `POST /v1/api/loops/{id}/requests`, checked by the same rules, with
/// defaults for those an agent rarely knows.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct CreateArgs {
    /// The loop whose reviewers are asked (24 hexadecimal characters; see `list_loops`).
    loop_id: String,
    /// What the reviewers read (Markdown).
    request_text: String,
    /// How they answer: `single_select`, `multi_select`, `text`, `rating`, `number` or `boolean`.
    response_type: String,
    /// The answer's rules: `{"options": [...]}` for selects (strings or
    /// `{value, label, description, color}`), `{"scale_max": 5}` for ratings,
    /// `{"min_value", "max_value"}` for numbers, `{"max_length"}` for text, `{}` for boolean.
    response_config: Value,
    /// The answer that stands if nobody answers in time; it must fit `response_config`.
    default_response: Value,
    /// `low`, `medium`, `high` or `critical` (default `medium`).
    priority: Option<String>,
    /// Seconds the reviewers have (up to 2592000; default 3600 for time-sensitive requests).
    timeout_seconds: Option<u64>,
    /// `time-sensitive` (default) or `deferred`.
    processing_type: Option<String>,
    /// `markdown` (default) or `image`.
    #[serde(rename = "type")]
    content_type: Option<String>,
    /// The image reviewers look at, when `type` is `image` (https).
    image_url: Option<String>,
    /// Anything that helps the reviewer decide, shown beside the text.
    context: Option<Value>,
    /// Your own data, returned with the answer and never shown to reviewers.
    metadata: Option<Value>,
    /// Labels for your own filtering.
    tags: Option<Vec<String>>,
    /// Where to POST the answer (https), besides waiting for it here.
    callback_url: Option<String>,
    /// Where the request comes from: `api` (default), `n8n`, `zapier`, ...
    platform: Option<String>,
    /// If nobody takes it up in time, also ask another loop:
    /// `{"after_seconds": 900, "to_loop_id": "...", "raise_priority": true}`
    /// (default: the loop's own setting; `null` for none).
    escalation: Option<Value>,
    /// Test-mode keys only: the answer the request gets by itself, instead
    /// of asking people.
    test_response: Option<Value>,
    /// Test-mode keys only: seconds on the test clock before
    /// `test_response` is given (default 0).
    test_delay_seconds: Option<u64>,
}

/// A request by id.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct RequestArgs {
    /// The request's id (24 hexadecimal characters).
    request_id: String,
}

/// How long to wait for a request's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct WaitArgs {
    /// The request's id (24 hexadecimal characters).
    request_id: String,
    /// Seconds to wait at most (1 to 300; default 60). The call returns as
    /// soon as the request is answered, times out or is cancelled.
    #[schemars(range(min = 1, max = 300))]
    wait_seconds: Option<u64>,
}

/// Which requests to list.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub(crate) struct ListArgs {
    /// Only this status: `pending`, `claimed`, `completed`, `timeout` or `cancelled`.
    status: Option<String>,
    /// Only this loop.
    loop_id: Option<String>,
    /// Only this priority.
    priority: Option<String>,
    /// How many (1 to 200; default 50).
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    /// How many to skip.
    offset: Option<u32>,
}

/// The caller the key middleware found, carried in the HTTP request.
fn caller(ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
        .ok_or_else(|| ErrorData::invalid_request("No API key", None))
}

/// A tool's outcome: its JSON as text and as structured content, or a
/// refusal the agent can act on, carrying the API's own message.
fn settle(outcome: Result<Value, ServiceError>) -> ToolResult {
    match outcome {
        Ok(value) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
            result.structured_content = Some(value);
            Ok(result)
        }
        Err(ServiceError::Unexpected(cause)) => {
            tracing::error!(%cause, "an MCP tool failed unexpectedly");
            Ok(CallToolResult::error(vec![ContentBlock::text(
                "Internal server error",
            )]))
        }
        Err(error) => Ok(CallToolResult::error(vec![ContentBlock::text(
            error.to_string(),
        )])),
    }
}

fn parse_id<T: std::str::FromStr>(field: &str, raw: &str) -> Result<T, ServiceError> {
    raw.parse()
        .map_err(|_| ServiceError::Refused(format!("{field} must be 24 hexadecimal characters")))
}

/// One request as `viewer` may see it (a reviewer does not see the
/// requester's metadata), with what an agent reads first.
fn request_answer(request: &reviewloop_domain::ReviewRequest, viewer: &Principal) -> Value {
    json!({
        "request_id": request.id,
        "status": request.status.as_str(),
        "response_data": request.response_data,
        "request": request_view(request, &viewer.user_id),
    })
}

#[tool_router]
impl Tools {
    pub(crate) fn new(state: AppState) -> Self {
        Self {
            state,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "List the loops (groups of human reviewers) this key's account owns, with their ids and active member counts."
    )]
    async fn list_loops(&self, ctx: RequestContext<RoleServer>) -> ToolResult {
        let principal = caller(&ctx)?;
        settle(self.state.loops.list(&principal).await.map(|loops| {
            let views: Vec<_> = loops.iter().map(LoopView::of).collect();
            json!({"loops": views, "count": loops.len()})
        }))
    }

    #[tool(
        description = "Ask the people of a loop to review something. Returns the new request's id at once; call wait_for_response with it to get their answer."
    )]
    async fn create_request(
        &self,
        Parameters(args): Parameters<CreateArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let principal = caller(&ctx)?;
        let outcome = async {
            let loop_id: LoopId = parse_id("loop_id", &args.loop_id)?;
            // An agent gives what it knows; the API's other required fields
            // take the defaults the tool's description names.
            let content_type = args.content_type.unwrap_or_else(|| {
                if args.image_url.is_some() {
                    "image"
                } else {
                    "markdown"
                }
                .to_owned()
            });
            let processing_type = args
                .processing_type
                .unwrap_or_else(|| "time-sensitive".to_owned());
            let timeout_seconds = match args.timeout_seconds {
                Some(seconds) => Some(seconds),
                None if processing_type == "time-sensitive" => Some(DEFAULT_TIMEOUT_SECONDS),
                None => None,
            };
            let input = RequestInput {
                request_text: Some(args.request_text),
                content_type: Some(content_type),
                image_url: args.image_url,
                response_type: Some(args.response_type),
                response_config: Some(args.response_config),
                priority: Some(args.priority.unwrap_or_else(|| "medium".to_owned())),
                processing_type: Some(processing_type),
                timeout_seconds: timeout_seconds.map(Value::from),
                default_response: Some(args.default_response),
                context: args.context,
                platform: Some(args.platform.unwrap_or_else(|| "api".to_owned())),
                platform_version: None,
                callback_url: args.callback_url,
                metadata: args.metadata,
                tags: args.tags.map(|tags| json!(tags)),
                // The loop's default quorum applies.
                quorum: None,
                exclude_requester: None,
                escalation: args.escalation,
                test_response: args.test_response,
                test_delay_seconds: args.test_delay_seconds.map(Value::from),
            };
            let created = self
                .state
                .requests
                .create(&principal, &loop_id, input, None)
                .await?;
            Ok(created_json(&created))
        };
        settle(outcome.await)
    }

    #[tool(
        description = "Wait for the answer to a request: returns as soon as a reviewer answers, the request times out (its default response stands) or is cancelled, or when wait_seconds pass (then status is still pending or claimed; call again)."
    )]
    async fn wait_for_response(
        &self,
        Parameters(args): Parameters<WaitArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let principal = caller(&ctx)?;
        let outcome = async {
            let seconds = args.wait_seconds.unwrap_or(60);
            if !(1..=LONGEST_WAIT_SECONDS).contains(&seconds) {
                return Err(ServiceError::Refused(format!(
                    "wait_seconds must be from 1 to {LONGEST_WAIT_SECONDS}"
                )));
            }
            let id: RequestId = parse_id("request_id", &args.request_id)?;
            let request = self
                .state
                .requests
                .get_when_settled(&principal, &id, Duration::from_secs(seconds))
                .await?;
            Ok(request_answer(&request, &principal))
        };
        settle(outcome.await)
    }

    #[tool(description = "Read a request now: its status and, once answered, response_data.")]
    async fn get_request(
        &self,
        Parameters(args): Parameters<RequestArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let principal = caller(&ctx)?;
        let outcome = async {
            let id: RequestId = parse_id("request_id", &args.request_id)?;
            let request = self.state.requests.get(&principal, &id).await?;
            Ok(request_answer(&request, &principal))
        };
        settle(outcome.await)
    }

    #[tool(description = "List the requests this key's account sent, newest first.")]
    async fn list_requests(
        &self,
        Parameters(args): Parameters<ListArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let principal = caller(&ctx)?;
        let input = ListRequestsInput {
            status: args.status,
            priority: args.priority,
            loop_id: args.loop_id,
            limit: args.limit.map(|n| n.to_string()),
            offset: args.offset.map(|n| n.to_string()),
            sort: None,
        };
        settle(
            self.state
                .requests
                .list(&principal, input)
                .await
                .map(|(page, query)| {
                    // The caller's own requests: shown whole.
                    let requests: Vec<_> = page.requests.iter().map(full_request).collect();
                    json!({
                        "requests": requests,
                        "count": page.requests.len(),
                        "total": page.total,
                        "limit": query.limit,
                        "offset": query.offset,
                    })
                }),
        )
    }

    #[tool(
        description = "Cancel a request that is still pending or claimed; its reviewers are no longer asked."
    )]
    async fn cancel_request(
        &self,
        Parameters(args): Parameters<RequestArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let principal = caller(&ctx)?;
        let outcome = async {
            let id: RequestId = parse_id("request_id", &args.request_id)?;
            let request = self.state.requests.cancel(&principal, &id).await?;
            Ok(request_answer(&request, &principal))
        };
        settle(outcome.await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("reviewloop", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Ask people to review or decide something. list_loops gives the loops you can ask; \
                 create_request sends a request to a loop's reviewers; wait_for_response returns \
                 their answer (or the default response when the request times out).",
            )
    }
}
