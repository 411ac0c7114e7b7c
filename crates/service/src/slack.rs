//! Answers from Slack: a click on a request's button in a loop's Slack
//! app. The click's signature is checked against the loops' signing
//! secrets before anything in it is read; the clicking Slack user is
//! mapped to a member by the email Slack gives for them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use reviewloop_domain::{
    one_click_answers, AccountStatus, ChangeError, Email, LoopId, Permission, RequestId, SlackApp,
    ValidationError,
};
use reviewloop_ports::StoreError;
use serde_json::Value;
use sha2::Sha256;

use crate::error::{use_case_error, Bug, SlackSignature};
use crate::ports::SlackPorts;
use crate::principal::Principal;
use crate::requests::{ChangeRequestError, RequestService};

/// How far a click's timestamp may be from now (Slack's advice: replays
/// older than this are refused).
const MAX_SKEW_SECONDS: i64 = 5 * 60;
/// How long a Slack user's email is remembered.
const EMAIL_TTL: Duration = Duration::from_secs(10 * 60);

use_case_error! {
    /// Why a call from Slack was refused (`Signature`: unsigned, stale or
    /// forged; `Invalid`: not an interaction this service sends).
    pub enum SlackError {
        Signature(SlackSignature),
        Invalid(ValidationError),
        Store(StoreError),
        Bug(Bug),
    }
}

/// The loops whose app signed a call (several loops may share one app).
#[derive(Debug, Clone)]
pub struct SignedBy {
    apps: Vec<(LoopId, SlackApp)>,
}

impl SignedBy {
    /// The signing app (the same for every loop that matched: its secret did).
    fn app(&self) -> &SlackApp {
        &self.apps[0].1
    }

    fn loop_id(&self) -> LoopId {
        self.apps[0].0
    }
}

/// What came of a click.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlackOutcome {
    /// The answer was given; the message changes once the request's event
    /// is dispatched.
    Answered,
    /// Nothing changed; the clicker was told why, in a message only they see.
    Refused(String),
    /// Nothing to do (a link button).
    Ignored,
}

/// A short fingerprint of an answer, carried in its button beside the
/// answer's place, so that a click after the requester changed the options
/// cannot give another answer than the button said.
pub(crate) fn answer_tag(answer: &Value) -> String {
    reviewloop_domain::sha256_hex(answer.to_string().as_bytes())[..12].to_owned()
}

/// Slack allows this many characters on a button.
pub(crate) const BUTTON_CHARS: usize = 75;

/// The emails Slack gave for its users, by loop and Slack user, with when.
type EmailCache = Mutex<HashMap<(LoopId, String), (Option<String>, Instant)>>;

/// Answers from loops' Slack apps.
pub struct SlackService {
    ports: SlackPorts,
    requests: RequestService,
    emails: EmailCache,
}

impl SlackService {
    /// A service that answers through `requests`.
    pub fn new(ports: SlackPorts, requests: RequestService) -> Self {
        Self {
            ports,
            requests,
            emails: Mutex::new(HashMap::new()),
        }
    }

    /// Which loop's app signed `body`: `X-Slack-Signature` must be `v0=`
    /// and the hex HMAC-SHA256 of `v0:{timestamp}:{body}` under its signing
    /// secret, and `timestamp` within five minutes of now.
    pub async fn verify(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<SignedBy, SlackError> {
        let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
            return Err(SlackSignature::Missing.into());
        };
        let at: i64 = timestamp
            .trim()
            .parse()
            .map_err(|_| SlackSignature::Stale)?;
        let now = self.ports.clock.now().timestamp();
        if now.abs_diff(at) > MAX_SKEW_SECONDS.unsigned_abs() {
            return Err(SlackSignature::Stale.into());
        }
        let Some(given) = signature
            .trim()
            .strip_prefix("v0=")
            .and_then(|h| hex::decode(h).ok())
        else {
            return Err(SlackSignature::Forged.into());
        };
        let apps: Vec<(LoopId, SlackApp)> = self
            .ports
            .slack_posts
            .slack_apps()
            .await?
            .into_iter()
            .filter(|(_, app)| {
                let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(app.signing_secret.as_bytes())
                else {
                    return false;
                };
                mac.update(b"v0:");
                mac.update(timestamp.trim().as_bytes());
                mac.update(b":");
                mac.update(body);
                // Compared in constant time.
                mac.verify_slice(&given).is_ok()
            })
            .collect();
        if apps.is_empty() {
            return Err(SlackSignature::Forged.into());
        }
        Ok(SignedBy { apps })
    }

    /// Acts on a signed interaction `payload` (Slack's JSON): a click on
    /// an answer button answers as the member the clicking user is.
    pub async fn act(
        &self,
        signed: &SignedBy,
        payload: &Value,
    ) -> Result<SlackOutcome, SlackError> {
        let invalid = |message: &str| ValidationError::field("payload", message);
        if payload["type"] != "block_actions" {
            return Err(invalid("payload.type must be block_actions").into());
        }
        let action = &payload["actions"][0];
        let action_id = action["action_id"].as_str().unwrap_or_default();
        if action_id == "open" {
            return Ok(SlackOutcome::Ignored);
        }
        if !action_id.starts_with("answer:") {
            return Err(invalid("payload.actions[0] is not an action of this service").into());
        }
        let mut parts = action["value"].as_str().unwrap_or_default().split(':');
        let (Some(request_id), Some(index), Some(tag), None) = (
            parts.next().and_then(|id| id.parse::<RequestId>().ok()),
            parts.next().and_then(|i| i.parse::<usize>().ok()),
            parts.next(),
            parts.next(),
        ) else {
            return Err(
                invalid("payload.actions[0].value is not an answer of this service").into(),
            );
        };
        let (Some(user), Some(channel)) = (
            payload["user"]["id"].as_str(),
            payload["channel"]["id"]
                .as_str()
                .or(payload["container"]["channel_id"].as_str()),
        ) else {
            return Err(invalid("payload names no user or channel").into());
        };
        let request = self
            .ports
            .requests
            .request_by_id(&request_id)
            .await?
            .ok_or_else(|| invalid("payload.actions[0].value names no request of this app"))?;
        // Only a request the signing app could have posted: its loop's, or
        // one escalated to it (several loops may share one app).
        let Some(app) = signed
            .apps
            .iter()
            .find(|(id, _)| request.loop_id == *id || request.escalated_to() == Some(*id))
        else {
            return Err(invalid("payload.actions[0].value names no request of this app").into());
        };
        let signed = &SignedBy {
            apps: vec![app.clone()],
        };
        let offered = one_click_answers(&request);
        let Some((answer, label)) = offered.into_iter().nth(index) else {
            return Err(invalid("payload.actions[0].value names no answer of this request").into());
        };
        if answer_tag(&answer) != tag {
            let why = "This request's answers changed since the message was posted: open it in \
                reviewloop to answer. Nothing was changed.";
            return self.refuse(signed, channel, user, why.into()).await;
        }
        match self.answer(signed, user, &request_id, answer).await? {
            SlackOutcome::Refused(why) => self.refuse(signed, channel, user, why).await,
            outcome => {
                tracing::debug!(%label, "answered from Slack");
                Ok(outcome)
            }
        }
    }

    /// Tells the clicker why nothing changed, in a message only they see.
    async fn refuse(
        &self,
        signed: &SignedBy,
        channel: &str,
        user: &str,
        why: String,
    ) -> Result<SlackOutcome, SlackError> {
        let told = self
            .ports
            .slack
            .post_ephemeral(&signed.app().bot_token, channel, user, &why)
            .await;
        if let Err(error) = told {
            tracing::warn!(%error, "a Slack refusal could not be shown");
        }
        Ok(SlackOutcome::Refused(why))
    }

    /// Answers as the member `user` is. An answer to a pending request
    /// records its claim in the same write, so a refused answer leaves no
    /// claim behind.
    async fn answer(
        &self,
        signed: &SignedBy,
        user: &str,
        id: &RequestId,
        answer: Value,
    ) -> Result<SlackOutcome, SlackError> {
        let Some(member) = self.member(signed, user).await? else {
            return Ok(SlackOutcome::Refused(
                "Only active members of this loop can answer its requests, and your Slack email \
                 is not one of theirs. Nothing was changed."
                    .into(),
            ));
        };
        match self.requests.respond(&member, id, Some(answer), None).await {
            Ok(_) => Ok(SlackOutcome::Answered),
            Err(error) => refusal(error),
        }
    }

    /// The active member of the signing loop whose email Slack gives for
    /// `user`, as a person acting in the web application.
    async fn member(&self, signed: &SignedBy, user: &str) -> Result<Option<Principal>, SlackError> {
        let Some(email) = self.email_of(signed, user).await else {
            return Ok(None);
        };
        let Ok(email) = Email::parse(&email) else {
            return Ok(None);
        };
        let Some(account) = self.ports.accounts.user_by_email(&email).await? else {
            return Ok(None);
        };
        let lp = self.ports.loops.loop_by_id(&signed.loop_id()).await?;
        if !lp.is_some_and(|lp| lp.is_active_member(&account.id))
            || account.status == AccountStatus::Suspended
        {
            return Ok(None);
        }
        Ok(Some(Principal::person(
            account,
            vec![Permission::RequestsRead, Permission::RequestsWrite],
        )))
    }

    /// The email Slack gives for `user` (`users.info`), remembered for ten
    /// minutes per loop; `None` when Slack shares none or cannot be asked.
    async fn email_of(&self, signed: &SignedBy, user: &str) -> Option<String> {
        let key = (signed.loop_id(), user.to_owned());
        if let Ok(emails) = self.emails.lock() {
            if let Some((email, at)) = emails.get(&key) {
                if at.elapsed() < EMAIL_TTL {
                    return email.clone();
                }
            }
        }
        match self
            .ports
            .slack
            .user_email(&signed.app().bot_token, user)
            .await
        {
            Ok(email) => {
                if let Ok(mut emails) = self.emails.lock() {
                    emails.retain(|_, (_, at)| at.elapsed() < EMAIL_TTL);
                    emails.insert(key, (email.clone(), Instant::now()));
                }
                email
            }
            Err(error) => {
                tracing::warn!(%error, "Slack could not say who clicked");
                None
            }
        }
    }
}

/// A refused answer, told to the clicker; failures of the service are
/// errors.
fn refusal(error: ChangeRequestError) -> Result<SlackOutcome, SlackError> {
    match error {
        ChangeRequestError::Refused(ChangeError::Transition(e)) => {
            Ok(SlackOutcome::Refused(format!("{e}. Nothing was changed.")))
        }
        ChangeRequestError::NotFound(_) | ChangeRequestError::Denied(_) => Ok(
            SlackOutcome::Refused("This request was not sent to you. Nothing was changed.".into()),
        ),
        ChangeRequestError::Busy(e) => Ok(SlackOutcome::Refused(format!("{e}."))),
        ChangeRequestError::Store(e) => Err(e.into()),
        ChangeRequestError::Bug(e) => Err(e.into()),
        ChangeRequestError::Refused(ChangeError::Invalid(e)) => {
            Err(Bug::new(format!("a Slack answer no longer fits: {e}")).into())
        }
    }
}

#[cfg(test)]
mod tests;
