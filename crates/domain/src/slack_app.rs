//! A loop's Slack app: the bot that posts its new requests with answer
//! buttons (`chat.postMessage`) and the signing secret that proves a
//! button's click came from Slack. Its secrets are never shown back.

use serde_json::Value;

use crate::error::ValidationError;

/// A Slack app a loop posts through.
#[derive(Clone, PartialEq, Eq)]
pub struct SlackApp {
    /// The bot's token (`xoxb-...`).
    pub bot_token: String,
    /// The app's signing secret.
    pub signing_secret: String,
    /// The channel posted to: an id (`C0123ABCD`) or a name (`#reviews`).
    pub channel: String,
}

// The secrets stay out of logs and panics.
impl std::fmt::Debug for SlackApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackApp")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl SlackApp {
    /// Reads `{"bot_token", "signing_secret", "channel"}`, naming every bad
    /// field (`slack_app.bot_token`, ...).
    pub fn parse(value: &Value) -> Result<Self, ValidationError> {
        let Some(object) = value.as_object() else {
            return Err(ValidationError::field(
                "slack_app",
                "slack_app must be an object with bot_token, signing_secret and channel, or null",
            ));
        };
        let mut errors = ValidationError::default();
        let mut text = |name: &str, check: fn(&str) -> bool, rule: &str| {
            let field = format!("slack_app.{name}");
            match object.get(name).and_then(Value::as_str).map(str::trim) {
                Some(v) if check(v) => Some(v.to_owned()),
                _ => {
                    errors.extend(ValidationError::field(
                        field.clone(),
                        format!("{field} {rule}"),
                    ));
                    None
                }
            }
        };
        let bot_token = text(
            "bot_token",
            |t| t.starts_with("xoxb-") && (10..=255).contains(&t.len()) && printable(t),
            "must be the app's bot token (xoxb-...)",
        );
        let signing_secret = text(
            "signing_secret",
            |s| (16..=128).contains(&s.len()) && printable(s),
            "must be the app's signing secret (16 to 128 characters)",
        );
        let channel = text(
            "channel",
            |c| {
                let name = c.strip_prefix('#').unwrap_or(c);
                (1..=80).contains(&name.len())
                    && name
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
            },
            "must be a channel id (C0123ABCD) or name (#reviews)",
        );
        errors.into_result()?;
        match (bot_token, signing_secret, channel) {
            (Some(bot_token), Some(signing_secret), Some(channel)) => Ok(Self {
                bot_token,
                signing_secret,
                channel,
            }),
            _ => Err(ValidationError::field(
                "slack_app",
                "slack_app is incomplete",
            )),
        }
    }
}

/// Visible ASCII only: tokens and secrets hold no spaces or controls.
fn printable(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests;
