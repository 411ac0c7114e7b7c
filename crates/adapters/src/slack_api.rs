//! Slack's Web API over HTTPS: the methods a loop's Slack app calls. The
//! base URL is the operator's (`REVIEWLOOP_SLACK_API_URL`), so it is not
//! held to the webhook guard; redirects are not followed, and every call
//! has ten seconds.

use std::time::Duration;

use async_trait::async_trait;
use reqwest::redirect::Policy;
use reviewloop_ports::{SlackApi, SlackFailure};
use serde_json::{json, Value};

/// Slack's own Web API.
pub const DEFAULT_SLACK_API_URL: &str = "https://slack.com/api";

/// Calls Slack's Web API.
pub struct HttpSlackApi {
    client: reqwest::Client,
    base: String,
}

impl HttpSlackApi {
    /// A client of the Web API at `base` (no trailing slash needed).
    pub fn new(base: &str) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(Policy::none())
            .build()
            .map_err(|e| format!("the Slack client could not be built: {e}"))?;
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
        })
    }

    /// Calls `method` with `body` (JSON) and returns Slack's answer when it
    /// says `ok`; otherwise its `error` code, in words.
    async fn call(&self, token: &str, method: &str, body: &Value) -> Result<Value, SlackFailure> {
        let request = self
            .client
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token);
        // Slack takes JSON bodies for its write methods only; a read such
        // as users.info takes a form.
        let request = match (method, body["user"].as_str()) {
            ("users.info", Some(user)) => request.form(&[("user", user)]),
            _ => request.json(body),
        };
        let sent = request.send().await.map_err(|e| {
            SlackFailure::Unreachable(format!("Slack could not be reached: {}", without_url(&e)))
        })?;
        let status = sent.status();
        let answer: Value = sent.json().await.map_err(|_| {
            SlackFailure::Unreachable(format!("Slack answered HTTP {status} without JSON"))
        })?;
        if answer["ok"] == true {
            Ok(answer)
        } else {
            Err(SlackFailure::Refused(
                answer["error"]
                    .as_str()
                    .unwrap_or("no reason given")
                    .to_owned(),
            ))
        }
    }
}

/// A reqwest error without the URL, which holds nothing secret here but
/// says nothing the method name does not.
fn without_url(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "it did not answer within 10 s".into()
    } else if error.is_connect() {
        "the connection failed".into()
    } else {
        "the request failed".into()
    }
}

#[async_trait]
impl SlackApi for HttpSlackApi {
    async fn post_message(
        &self,
        token: &str,
        channel: &str,
        text: &str,
        blocks: &Value,
    ) -> Result<(String, String), SlackFailure> {
        let answer = self
            .call(
                token,
                "chat.postMessage",
                &json!({"channel": channel, "text": text, "blocks": blocks}),
            )
            .await?;
        match (answer["channel"].as_str(), answer["ts"].as_str()) {
            (Some(channel), Some(ts)) => Ok((channel.to_owned(), ts.to_owned())),
            _ => Err(SlackFailure::Unreachable(
                "Slack posted without saying where".into(),
            )),
        }
    }

    async fn update_message(
        &self,
        token: &str,
        channel: &str,
        ts: &str,
        text: &str,
        blocks: &Value,
    ) -> Result<(), SlackFailure> {
        self.call(
            token,
            "chat.update",
            &json!({"channel": channel, "ts": ts, "text": text, "blocks": blocks}),
        )
        .await
        .map(drop)
    }

    async fn post_ephemeral(
        &self,
        token: &str,
        channel: &str,
        user: &str,
        text: &str,
    ) -> Result<(), SlackFailure> {
        self.call(
            token,
            "chat.postEphemeral",
            &json!({"channel": channel, "user": user, "text": text}),
        )
        .await
        .map(drop)
    }

    async fn user_email(&self, token: &str, user: &str) -> Result<Option<String>, SlackFailure> {
        let answer = self
            .call(token, "users.info", &json!({"user": user}))
            .await?;
        let user = &answer["user"];
        // Only a person's own confirmed address counts: not a bot's, not a
        // deactivated account's, not one Slack has not confirmed.
        if user["deleted"] == true || user["is_bot"] == true || user["is_email_confirmed"] != true {
            return Ok(None);
        }
        Ok(user["profile"]["email"].as_str().map(str::to_owned))
    }
}
