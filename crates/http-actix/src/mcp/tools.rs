//! The tools: create a request, wait for its answer, read, list, cancel,
//! and list loops.

use std::time::Duration;

use reviewloop_domain::{LoopId, RequestId, RequestInput};
use reviewloop_service::{Failure, ListRequestsInput, Principal, ServiceError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use reviewloop_wire::loops::LoopOut;
use reviewloop_wire::mcp::{
    CreateArgs, ListArgs, LoopsAnswer, RequestAnswer, RequestArgs, RequestsAnswer, WaitArgs,
};
use reviewloop_wire::requests::RequestOut;

use crate::routes::views;
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
fn settle<E: Failure>(outcome: Result<Value, E>) -> ToolResult {
    match outcome.map_err(Into::into) {
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

/// `value` as a tool's structured content.
fn content(value: impl serde::Serialize) -> Value {
    // Our answers hold no map with keys that are not strings.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// One request as `viewer` may see it (a reviewer does not see the
/// requester's metadata), with what an agent reads first.
fn request_answer(request: &reviewloop_domain::ReviewRequest, viewer: &Principal) -> Value {
    content(RequestAnswer::of(request, &viewer.user_id))
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
            content(LoopsAnswer {
                loops: loops.iter().map(LoopOut::of).collect(),
                count: loops.len(),
            })
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
                coalesce_key: args.coalesce_key,
            };
            let created = self
                .state
                .requests
                .create(&principal, &loop_id, input, None)
                .await?;
            Ok(content(views::created(&created)))
        };
        settle::<ServiceError>(outcome.await)
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
        settle::<ServiceError>(outcome.await)
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
        settle::<ServiceError>(outcome.await)
    }

    #[tool(
        description = "List the requests this key sent (scope=account: the whole account's), newest first."
    )]
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
            scope: args.scope,
        };
        settle(
            self.state
                .requests
                .list(&principal, input)
                .await
                .map(|(page, query)| {
                    // The caller's own requests: shown whole.
                    content(RequestsAnswer {
                        requests: page.requests.iter().map(RequestOut::whole).collect(),
                        count: page.requests.len(),
                        total: page.total,
                        limit: query.limit,
                        offset: query.offset,
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
        settle::<ServiceError>(outcome.await)
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
