//! Slack apps: the Web API a loop's bot posts through, and where the
//! service keeps what it posted.

use async_trait::async_trait;
use reviewloop_domain::{LoopId, RequestId, SlackApp};
use serde_json::Value;

use crate::StoreError;

/// A message a loop's Slack app posted about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackPost {
    /// The request.
    pub request_id: RequestId,
    /// The loop whose app posted it.
    pub loop_id: LoopId,
    /// The channel's id, as Slack answered.
    pub channel: String,
    /// The message's timestamp, Slack's id for it.
    pub ts: String,
}

/// Why a call to Slack's Web API failed, in words without secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlackFailure {
    /// No answer, or not one Slack gives: worth trying again later.
    #[error("{0}")]
    Unreachable(String),
    /// Slack refused the call with this error code (`channel_not_found`,
    /// `invalid_auth`, ...): the same call will fail again, except when
    /// Slack asked to slow down (`ratelimited`).
    #[error("Slack refused the call: {0}")]
    Refused(String),
}

impl SlackFailure {
    /// Whether trying the same call later may work.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable(_) => true,
            Self::Refused(code) => matches!(
                code.as_str(),
                "ratelimited"
                    | "internal_error"
                    | "fatal_error"
                    | "service_unavailable"
                    | "request_timeout"
            ),
        }
    }
}

/// Slack's Web API (`REVIEWLOOP_SLACK_API_URL`, by default
/// `https://slack.com/api`).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SlackApi: Send + Sync {
    /// `chat.postMessage`: returns the channel id and the message's `ts`.
    async fn post_message(
        &self,
        token: &str,
        channel: &str,
        text: &str,
        blocks: &Value,
    ) -> Result<(String, String), SlackFailure>;
    /// `chat.update` of the message `ts` in `channel`.
    async fn update_message(
        &self,
        token: &str,
        channel: &str,
        ts: &str,
        text: &str,
        blocks: &Value,
    ) -> Result<(), SlackFailure>;
    /// `chat.postEphemeral`: a message only `user` sees.
    async fn post_ephemeral(
        &self,
        token: &str,
        channel: &str,
        user: &str,
        text: &str,
    ) -> Result<(), SlackFailure>;
    /// `users.info`: the user's email, if Slack shares it.
    async fn user_email(&self, token: &str, user: &str) -> Result<Option<String>, SlackFailure>;
}

/// Where the service keeps its Slack posts and finds its apps.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SlackStore: Send + Sync {
    /// Records a post (a second record of the same request and loop is
    /// ignored).
    async fn record_slack_post(&self, post: &SlackPost) -> Result<(), StoreError>;
    /// The posts about any of `requests` (one read for a dispatch pass).
    async fn slack_posts_of(&self, requests: &[RequestId]) -> Result<Vec<SlackPost>, StoreError>;
    /// Every loop's Slack app, for checking who signed a click.
    async fn slack_apps(&self) -> Result<Vec<(LoopId, SlackApp)>, StoreError>;
}
