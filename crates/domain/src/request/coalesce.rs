//! Fewer questions for people: a request that repeats an open one joins it
//! (coalescing) instead of being asked again, and one that repeats a
//! question a person answered a moment ago takes that answer (reuse).
//!
//! What makes two requests "the same question" is their [`QuestionKey`]:
//! the key the requester gave, or the SHA-256 of what reviewers would be
//! shown and how they would answer.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::{RequestStatus, ReviewRequest, ValidRequest};
use crate::error::{TransitionError, ValidationError};
use crate::request_fields::MAX_TIMEOUT_SECONDS;
use crate::text::{char_len, check_line};

/// The most characters a requester's `coalesce_key` may have.
pub const MAX_COALESCE_KEY_CHARS: usize = 200;

/// How long a loop looks back: for coalescing, how long after it was made
/// an open request still takes others in; for reuse, how old a person's
/// answer may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Seconds, 1 to 30 days.
    pub window_seconds: i64,
}

impl Window {
    /// Reads `{"window_seconds": N}` (null or absent: none), naming every
    /// bad part under `field`.
    pub fn parse(raw: Option<&Value>, field: &str) -> Result<Option<Self>, ValidationError> {
        let map = match raw {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(ValidationError::field(
                    field,
                    format!("{field} must be an object with window_seconds, or null"),
                ))
            }
        };
        let mut errors = ValidationError::default();
        for key in map.keys().filter(|k| *k != "window_seconds") {
            errors.extend(ValidationError::field(
                format!("{field}.{key}"),
                format!("{field}.{key} is not a {field} field: use window_seconds"),
            ));
        }
        let seconds = map
            .get("window_seconds")
            .and_then(Value::as_i64)
            .filter(|s| (1..=MAX_TIMEOUT_SECONDS).contains(s));
        if seconds.is_none() {
            errors.extend(ValidationError::field(
                format!("{field}.window_seconds"),
                format!(
                    "{field}.window_seconds must be a whole number of seconds from 1 to {MAX_TIMEOUT_SECONDS}"
                ),
            ));
        }
        errors.into_result()?;
        Ok(seconds.map(|window_seconds| Self { window_seconds }))
    }

    /// As shown and stored: `{"window_seconds": N}`.
    pub fn to_value(self) -> Value {
        json!({ "window_seconds": self.window_seconds })
    }

    /// Whether something that happened `at` is inside the window at `now`.
    pub fn holds(self, at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
        at + Duration::seconds(self.window_seconds) >= now
    }
}

/// What makes two requests of one account and loop the same question.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QuestionKey(String);

impl QuestionKey {
    /// A requester's own `coalesce_key`: 1 to 200 characters on one line.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let key = raw.trim();
        if key.is_empty() || char_len(key) > MAX_COALESCE_KEY_CHARS {
            return Err(ValidationError::field(
                "coalesce_key",
                format!("coalesce_key must be 1 to {MAX_COALESCE_KEY_CHARS} characters"),
            ));
        }
        check_line("coalesce_key", key)?;
        Ok(Self(key.to_owned()))
    }

    /// The key of a question nobody named: the SHA-256 of its text, the
    /// kind and bounds of its answer and its context (what a reviewer is
    /// shown and how it answers), as canonical JSON.
    pub fn of_question(fields: &ValidRequest) -> Self {
        let mut question = json!({
            "request_text": fields.request_text,
            "response_type": fields.response_type.as_str(),
            "response_config": fields.response_config.as_value(),
            "context": fields.context,
        });
        // An image request shows its image too: another image is another
        // question, whatever the text says.
        if let Some(image) = &fields.image_url {
            question["image_url"] = json!(image);
        }
        let canonical = crate::receipt::canonical_json(&question);
        Self(format!(
            "sha256:{}",
            crate::receipt::sha256_hex(canonical.as_bytes())
        ))
    }

    /// A key as a store kept it.
    pub fn restore(key: String) -> Self {
        Self(key)
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for QuestionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ReviewRequest {
    /// Whether a new request with this key may join this one now: it is
    /// open, takes others in, and (when the loop sets a window) was made
    /// within it.
    pub fn accepts_followers(&self) -> bool {
        self.coalescing && self.coalesce_key.is_some() && self.status.is_open()
    }

    /// Whether this request, taking others in, is past the loop's window
    /// at `now`: then it stops taking them, and the next request with its
    /// key is asked of people again.
    pub fn coalescing_expired(&self, window: Option<Window>, now: DateTime<Utc>) -> bool {
        window.is_some_and(|w| !w.holds(self.created_at, now))
    }

    /// The request stops taking others in (its loop's window passed).
    pub fn stop_coalescing(&mut self, now: DateTime<Utc>) {
        if self.coalescing {
            self.record.coalescing = false;
            self.record.updated_at = now;
        }
    }

    /// A request just made with `key`, asked of people, takes in later
    /// ones with the same key while it is open.
    pub fn take_followers(&mut self, key: QuestionKey) {
        self.record.coalesce_key = Some(key);
        self.record.coalescing = true;
    }

    /// Keeps `key` on a request just made, for a later one to reuse its
    /// answer, without taking others in.
    pub fn keep_key(&mut self, key: QuestionKey) {
        self.record.coalesce_key = Some(key);
    }

    /// Whether this request wants the answer `response_type` and `config`
    /// describe, so that its answer is one to a request made with them: a
    /// key the requester named may be given to requests that do not.
    pub fn answers_like(
        &self,
        response_type: crate::response::ResponseType,
        config: &crate::response::RequestConfig,
    ) -> bool {
        self.response_type == response_type && self.response_config.as_value() == config.as_value()
    }

    /// A request just made joins `open`, which asks the same question: it
    /// is asked of nobody and ends when `open` ends, the same way (see
    /// [`ReviewRequest::follow`]), so it takes `open`'s timeout.
    pub fn join(&mut self, open: &ReviewRequest) -> Result<(), TransitionError> {
        let fits = open.accepts_followers()
            && open.coalesced_into.is_none()
            && open.creator_id == self.creator_id
            && open.loop_id == self.loop_id
            && open.test == self.test
            && open.coalesce_key == self.coalesce_key
            && open.answers_like(self.response_type, &self.response_config);
        if !fits || self.version != 0 || self.status != RequestStatus::Pending {
            return Err(TransitionError::NotOpen);
        }
        self.record.coalesced_into = Some(open.id);
        self.record.coalescing = false;
        self.record.broadcasted_to.clear();
        self.record.escalation = None;
        self.record.quorum = open.quorum;
        self.record.timeout_at = open.timeout_at;
        self.record.timeout_seconds = (open.timeout_at - self.created_at).num_seconds();
        self.record.test_answer = None;
        Ok(())
    }

    /// The request this one joined has ended: this one ends the same way,
    /// with its answer, status, `response_by` and the answers of its
    /// reviewers (who thereby may read it). Its own events and callback
    /// follow from that, as for any request that ends.
    pub fn follow(
        &mut self,
        ended: &ReviewRequest,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        self.ensure_open()?;
        if self.coalesced_into != Some(ended.id) || ended.status.is_open() {
            return Err(TransitionError::NotDue);
        }
        let record = &mut self.record;
        record.status = ended.status;
        record.broadcasted_to = ended.broadcasted_to.clone();
        record.quorum = ended.quorum;
        // Where it escalated, so that the reviewers there who answered may
        // read it, as they may read the request they were asked.
        record.escalation = ended.escalation;
        record.escalated_at = ended.escalated_at;
        record.claimed_by = ended.claimed_by;
        record.claimed_at = ended.claimed_at;
        record.response_by = ended.response_by;
        record.response_at = ended.response_at;
        record.response_data = ended.response_data.clone();
        record.response_comment = ended.response_comment.clone();
        record.response_time_seconds = match (ended.response_by, ended.response_at) {
            (Some(_), Some(at)) => Some(super::lifecycle::seconds_between(record.created_at, at)),
            _ => None,
        };
        record.cancelled_at = ended.cancelled_at.map(|_| now);
        record.updated_at = now;
        Ok(())
    }

    /// Whether a later request may take this one's answer: a person gave
    /// it (not a rule, the timeout or test mode), to this request itself
    /// (not one that took it from another).
    pub fn is_reusable_answer(&self) -> bool {
        self.status == RequestStatus::Completed
            && self.response_by.is_some()
            && self.response_data.is_some()
            && !self.test
            && self.decided_by_rule().is_none()
            && self.reused_from.is_none()
            && self.coalesced_into.is_none()
    }

    /// A request just made takes the answer a person gave `earlier` (see
    /// [`ReviewRequest::is_reusable_answer`]) and is completed at once,
    /// asked of nobody.
    pub fn reuse(
        &mut self,
        earlier: &ReviewRequest,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        let fits = earlier.is_reusable_answer()
            && earlier.creator_id == self.creator_id
            && earlier.loop_id == self.loop_id
            && earlier.answers_like(self.response_type, &self.response_config)
            && !self.test;
        if !fits || self.version != 0 || self.status != RequestStatus::Pending {
            return Err(TransitionError::NotOpen);
        }
        let record = &mut self.record;
        record.status = RequestStatus::Completed;
        record.reused_from = Some(earlier.id);
        // Only the person whose answer it is: the requester sees who
        // answered, and that person may read what its answer decided.
        record.broadcasted_to = earlier
            .broadcasted_to
            .iter()
            .filter(|b| Some(b.user_id) == earlier.response_by)
            .cloned()
            .map(|mut b| {
                b.answer = None;
                b
            })
            .collect();
        record.escalation = None;
        record.quorum = None;
        record.coalescing = false;
        record.response_by = earlier.response_by;
        record.response_data = earlier.response_data.clone();
        record.response_comment = earlier.response_comment.clone();
        record.response_at = Some(now);
        record.response_time_seconds = Some(0.0);
        record.updated_at = now;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
