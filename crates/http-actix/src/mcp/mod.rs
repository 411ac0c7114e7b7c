//! `/mcp`: a Model Context Protocol server (Streamable HTTP, rmcp) whose
//! tools let an AI agent ask people directly. The key is checked by the
//! same middleware as the API's and the caller travels to the tools inside
//! the HTTP request's extensions; each tool calls one service, as a
//! handler does, and answers with the API's objects (a request as the
//! caller may see it, loops as the API shows them). A service error is a
//! tool error carrying the API's message, so the agent reads what to fix.
//!
//! Stateless: every POST is answered on its own, so any instance behind a
//! load balancer can take any call, and no session outlives a request.

mod bridge;
mod tools;

pub(crate) use bridge::{handle, McpService};
