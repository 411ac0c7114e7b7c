//! What a change to a loop's settings carries.

/// A change to a loop. `description: Some(None)` clears it.
#[derive(Clone, Default, PartialEq)]
pub struct LoopPatch {
    /// New name.
    pub name: Option<String>,
    /// New description, or `Some(None)` to clear it.
    pub description: Option<Option<String>>,
    /// New icon.
    pub icon: Option<String>,
    /// The Slack incoming webhook that hears of new requests, or
    /// `Some(None)` (or an empty text) to stop posting there.
    pub slack_webhook_url: Option<Option<String>>,
    /// The Slack app that posts new requests with answer buttons
    /// (`{"bot_token", "signing_secret", "channel"}`), or `Some(Null)` to
    /// stop posting through it.
    pub slack_app: Option<serde_json::Value>,
    /// Whether members are reminded of requests with a quarter of their
    /// time left.
    pub reminders: Option<bool>,
    /// The quorum of new requests that ask for none; `Some(Null)` clears it.
    pub quorum: Option<serde_json::Value>,
    /// Where new requests that name none escalate; `Some(Null)` clears it.
    pub escalation: Option<serde_json::Value>,
    /// The loop's rules, replaced whole; `Some(Null)` or `[]` clears them.
    pub rules: Option<serde_json::Value>,
    /// `{"window_seconds"}`: how long an open request takes in new ones
    /// that ask the same question; `Some(Null)` stops it.
    pub coalesce: Option<serde_json::Value>,
    /// `{"window_seconds"}`: how old a person's answer may be for a new
    /// request to take it; `Some(Null)` stops it.
    pub reuse_answers: Option<serde_json::Value>,
    /// `{"strategy", "per_request", "reassign_after_seconds"}`: who new
    /// requests are offered to; `Some(Null)` offers them to everyone.
    pub assignment: Option<serde_json::Value>,
}

// The Slack app's token and signing secret stay out of logs and panics.
impl std::fmt::Debug for LoopPatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopPatch")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("icon", &self.icon)
            .field(
                "slack_webhook_url",
                &self.slack_webhook_url.as_ref().map(|_| "<set>"),
            )
            .field("slack_app", &self.slack_app.as_ref().map(|_| "<set>"))
            .field("reminders", &self.reminders)
            .field("quorum", &self.quorum)
            .field("escalation", &self.escalation)
            .field("rules", &self.rules)
            .field("coalesce", &self.coalesce)
            .field("reuse_answers", &self.reuse_answers)
            .field("assignment", &self.assignment)
            .finish()
    }
}
