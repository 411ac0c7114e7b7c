//! The request state machine.
//!
//! ```text
//! (create) → pending ⇄ claimed      claim / release
//! pending | claimed → completed    a reviewer answers
//! pending | claimed → timeout      timeout_at passes; default_response stands
//! pending | claimed → cancelled    the requester cancels
//! ```
//! Completed, timeout and cancelled are final. Every transition is a method
//! that refuses an illegal move with a [`TransitionError`].

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use super::input::ValidRequest;
use super::{
    BroadcastEntry, Feedback, FeedbackInput, RequestRecord, RequestStatus, ReviewRequest,
    FEEDBACK_CATEGORIES,
};
use crate::error::{TransitionError, ValidationError};
use crate::form::Form;
use crate::id::{ApiKeyId, LoopId, RequestId, UserId};
use crate::response::{ResponseConfig, ReviewerHints};
use crate::text::{char_len, check_line, check_prose};

/// A change that was refused, either by the state machine or by validation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChangeError {
    /// The request's state does not allow it.
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// What was sent is invalid.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

/// The role of a reviewer a request reached by escalation.
pub const ESCALATION_ROLE: &str = "escalation";

pub(super) fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / 1000.0
}

impl ReviewRequest {
    /// A new pending request, already broadcast to `broadcasts` at `now`.
    pub fn create(
        id: RequestId,
        loop_id: LoopId,
        creator_id: UserId,
        api_key_id: Option<ApiKeyId>,
        fields: ValidRequest,
        broadcasts: Vec<BroadcastEntry>,
        now: DateTime<Utc>,
    ) -> Self {
        Self::restore(RequestRecord {
            id,
            loop_id,
            creator_id,
            api_key_id,
            processing_type: fields.processing_type,
            content_type: fields.content_type,
            priority: fields.priority,
            request_text: fields.request_text,
            image_url: fields.image_url,
            context: fields.context,
            platform: fields.platform,
            platform_version: fields.platform_version,
            response_type: fields.response_type,
            response_config: fields.response_config,
            default_response: fields.default_response,
            timeout_seconds: fields.timeout_seconds,
            timeout_at: now + Duration::seconds(fields.timeout_seconds),
            callback_url: fields.callback_url,
            metadata: fields.metadata,
            tags: fields.tags,
            broadcasted_to: broadcasts,
            broadcasted_at: Some(now),
            status: RequestStatus::Pending,
            claimed_by: None,
            claimed_at: None,
            response_by: None,
            response_at: None,
            response_data: None,
            response_comment: None,
            response_time_seconds: None,
            cancelled_at: None,
            feedback: None,
            receipt: None,
            quorum: fields.quorum,
            escalation: fields.escalation,
            escalated_at: None,
            applied_rules: fields.applied_rules,
            coalesce_key: None,
            coalescing: false,
            coalesced_into: None,
            reused_from: None,
            reassign_after_seconds: None,
            offered_at: None,
            test: fields.test,
            test_answer: fields
                .test_response
                .filter(|_| fields.test)
                .map(|response| super::TestAnswer {
                    response,
                    at: now + Duration::seconds(fields.test_delay_seconds.unwrap_or(0)),
                }),
            created_at: now,
            updated_at: now,
            version: 0,
        })
    }

    /// The typed bounds of the answer.
    pub fn config(&self) -> Result<&ResponseConfig, ValidationError> {
        self.response_config.typed()
    }

    /// An answer to this request in the words it gave its answers (see
    /// [`ResponseConfig::answer_words`]).
    pub fn answer_words(&self, answer: &Value) -> String {
        match self.config() {
            Ok(config) => {
                config.answer_words(&ReviewerHints::of(self.response_config.as_value()), answer)
            }
            Err(_) => crate::response::plain_words(answer),
        }
    }

    /// True when `user` was sent this request.
    pub fn was_broadcast_to(&self, user: &UserId) -> bool {
        self.broadcasted_to.iter().any(|b| &b.user_id == user)
    }

    /// Whether `user` may read this request: its creator, or a reviewer it
    /// was sent to who is still an active member of its loop (which the
    /// caller says, having asked the store).
    pub fn is_readable_by(&self, user: &UserId, active_member: bool) -> bool {
        self.creator_id == *user || (active_member && self.was_broadcast_to(user))
    }

    pub(super) fn ensure_open(&self) -> Result<(), TransitionError> {
        if self.status.is_open() {
            Ok(())
        } else {
            Err(TransitionError::NotOpen)
        }
    }

    fn ensure_not_claimed_by_other(&self, by: &UserId) -> Result<(), TransitionError> {
        match (&self.status, &self.claimed_by) {
            (RequestStatus::Claimed, Some(holder)) if holder != by => {
                Err(TransitionError::AlreadyClaimed)
            }
            _ => Ok(()),
        }
    }

    /// A reviewer claims the request. Returns `false` when `by` already
    /// holds the claim (claiming twice changes nothing). A request that
    /// needs a quorum is never claimed: one reviewer's claim would keep the
    /// others from answering.
    pub fn claim(&mut self, by: UserId, now: DateTime<Utc>) -> Result<bool, TransitionError> {
        self.ensure_open()?;
        if self.quorum.is_some() {
            return Err(TransitionError::QuorumNotClaimable);
        }
        self.ensure_not_claimed_by_other(&by)?;
        if self.status == RequestStatus::Claimed {
            return Ok(false);
        }
        self.record.status = RequestStatus::Claimed;
        self.record.claimed_by = Some(by);
        self.record.claimed_at = Some(now);
        self.record.updated_at = now;
        Ok(true)
    }

    /// The claim holder gives the request back to everyone.
    pub fn release(&mut self, by: UserId, now: DateTime<Utc>) -> Result<(), TransitionError> {
        self.ensure_open()?;
        self.ensure_not_claimed_by_other(&by)?;
        if self.status != RequestStatus::Claimed {
            return Err(TransitionError::NotClaimedByYou);
        }
        self.record.status = RequestStatus::Pending;
        self.record.claimed_by = None;
        self.record.claimed_at = None;
        self.record.updated_at = now;
        Ok(())
    }

    /// A reviewer answers: from pending (the claim is implied) or from a
    /// claim `by` holds. The answer must fit the request's configuration.
    /// Returns whether the request is now decided: always for a request
    /// one reviewer decides; for a quorum, once the answers make a decision
    /// (each reviewer it was sent to answers once).
    ///
    /// `comment` is what the reviewer wrote with the answer (checked with
    /// [`crate::parse_comment`]); the requester reads the deciding
    /// answer's as `response_comment`, and each in `responses`.
    pub fn respond(
        &mut self,
        by: UserId,
        answer: Value,
        comment: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<bool, ChangeError> {
        self.ensure_open()?;
        if let Some(quorum) = self.quorum {
            return self.answer_for_quorum(quorum, by, answer, comment, now);
        }
        self.ensure_not_claimed_by_other(&by)?;
        Form::single(self.config()?.clone()).validate("response_data", &answer, &Map::new())?;
        if self.claimed_by.is_none() {
            self.record.claimed_by = Some(by);
            self.record.claimed_at = Some(now);
        }
        self.decide(by, answer, comment, now);
        Ok(true)
    }

    /// One reviewer's answer to a quorum request: each reviewer it was sent
    /// to answers once (the requester not at all, unless the quorum says
    /// so), and the answer that completes the quorum decides the request.
    fn answer_for_quorum(
        &mut self,
        quorum: super::Quorum,
        by: UserId,
        answer: Value,
        comment: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<bool, ChangeError> {
        if quorum.exclude_requester && by == self.creator_id {
            return Err(TransitionError::RequesterExcluded.into());
        }
        let entry = self
            .broadcasted_to
            .iter()
            .position(|b| b.user_id == by)
            .ok_or(TransitionError::NotSentToYou)?;
        if self.broadcasted_to[entry].answer.is_some() {
            return Err(TransitionError::AlreadyAnswered.into());
        }
        Form::single(self.config()?.clone()).validate("response_data", &answer, &Map::new())?;
        self.record.broadcasted_to[entry].answer = Some(super::Answer {
            response_data: answer,
            response_at: now,
            comment: comment.clone(),
        });
        self.record.updated_at = now;
        let answers = self
            .broadcasted_to
            .iter()
            .filter_map(|b| b.answer.as_ref().map(|a| &a.response_data));
        match quorum.decide(answers) {
            Some(decided) => {
                self.decide(by, decided, comment, now);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn decide(&mut self, by: UserId, answer: Value, comment: Option<String>, now: DateTime<Utc>) {
        self.record.status = RequestStatus::Completed;
        self.record.coalescing = false;
        self.record.response_by = Some(by);
        self.record.response_at = Some(now);
        self.record.response_data = Some(answer);
        self.record.response_comment = comment;
        self.record.response_time_seconds = Some(seconds_between(self.created_at, now));
        self.record.updated_at = now;
    }

    /// Every answer given, oldest first: each quorum answer, or the one
    /// answer of a request its first reviewer decided.
    pub fn responses(&self) -> Vec<super::Response<'_>> {
        if self.quorum.is_some() {
            let mut answers: Vec<super::Response<'_>> = self
                .broadcasted_to
                .iter()
                .filter_map(|b| {
                    b.answer.as_ref().map(|a| super::Response {
                        user_id: b.user_id,
                        email: &b.email,
                        response_data: &a.response_data,
                        response_at: a.response_at,
                        comment: a.comment.as_deref(),
                    })
                })
                .collect();
            answers.sort_by_key(|a| a.response_at);
            return answers;
        }
        match (&self.response_by, &self.response_data, self.response_at) {
            (Some(by), Some(data), Some(at)) => self
                .broadcasted_to
                .iter()
                .find(|b| &b.user_id == by)
                .map(|b| super::Response {
                    user_id: b.user_id,
                    email: &b.email,
                    response_data: data,
                    response_at: at,
                    comment: self.response_comment.as_deref(),
                })
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether `user` has answered this request.
    pub fn has_answered(&self, user: &UserId) -> bool {
        self.responses().iter().any(|r| &r.user_id == user)
    }

    /// Whether `user` may still answer: it was sent the request, which is
    /// open, not held by someone else, not already answered by `user`, and
    /// (for a quorum that excludes its requester) not `user`'s own.
    pub fn may_answer(&self, user: &UserId) -> bool {
        let held_by_other = self.status == RequestStatus::Claimed && self.claimed_by != Some(*user);
        let excluded = self
            .quorum
            .is_some_and(|q| q.exclude_requester && &self.creator_id == user);
        self.status.is_open()
            && self.was_broadcast_to(user)
            && !held_by_other
            && !excluded
            && !self.has_answered(user)
    }

    /// Refuses a quorum its reviewers can never reach: more answers than
    /// there are reviewers it was sent to (less the requester, when it may
    /// not answer).
    pub fn check_quorum(&self) -> Result<(), ValidationError> {
        let Some(quorum) = self.quorum else {
            return Ok(());
        };
        let eligible = self
            .broadcasted_to
            .iter()
            .filter(|b| !(quorum.exclude_requester && b.user_id == self.creator_id))
            .count();
        quorum.check_reachable(eligible)
    }

    /// The rule that answered the request when it was created, if one did.
    pub fn decided_by_rule(&self) -> Option<&str> {
        match self.applied_rules.last() {
            Some(applied) if matches!(applied.then, crate::rules::Action::Answer(_)) => {
                Some(applied.rule_id.as_str())
            }
            _ => None,
        }
    }

    /// A rule decides a request just created: `answer` (which must fit
    /// its configuration) becomes the final one, given by nobody.
    pub fn decide_by_rule(&mut self, answer: Value, now: DateTime<Utc>) -> Result<(), ChangeError> {
        if self.status != RequestStatus::Pending || self.version != 0 {
            return Err(TransitionError::NotOpen.into());
        }
        Form::single(self.config()?.clone()).validate("response_data", &answer, &Map::new())?;
        self.record.status = RequestStatus::Completed;
        self.record.coalescing = false;
        self.record.response_at = Some(now);
        self.record.response_data = Some(answer);
        self.record.response_time_seconds = Some(seconds_between(self.created_at, now));
        self.record.updated_at = now;
        Ok(())
    }

    /// When a test request next needs the test sweep, on its account's
    /// clock: its automatic answer or its timeout, whichever comes first;
    /// `None` for a live request or one that ended.
    pub fn test_due_at(&self) -> Option<DateTime<Utc>> {
        if !self.test || !self.status.is_open() || self.coalesced_into.is_some() {
            return None;
        }
        Some(match &self.test_answer {
            Some(answer) => answer.at.min(self.timeout_at),
            None => self.timeout_at,
        })
    }

    /// A test request gets its automatic answer, once the account's test
    /// clock reached it (and before its timeout did).
    pub fn answer_as_test(&mut self, now: DateTime<Utc>) -> Result<(), TransitionError> {
        self.ensure_open()?;
        let Some(answer) = self.test_answer.as_ref().filter(|a| a.at <= now) else {
            return Err(TransitionError::NotDue);
        };
        if answer.at > self.timeout_at {
            return Err(TransitionError::NotDue);
        }
        let (response, at) = (answer.response.clone(), answer.at);
        // Given when it was due, however far the clock jumped past it.
        self.record.status = RequestStatus::Completed;
        self.record.coalescing = false;
        self.record.response_at = Some(at);
        self.record.response_data = Some(response);
        self.record.response_time_seconds = Some(seconds_between(self.created_at, at));
        self.record.updated_at = now;
        Ok(())
    }

    /// When the request escalates: while it has an escalation not yet
    /// made and is still open, its creation plus `after_seconds`.
    pub fn escalate_at(&self) -> Option<DateTime<Utc>> {
        if self.escalated_at.is_some() || !self.status.is_open() {
            return None;
        }
        self.escalation
            .map(|e| self.created_at + Duration::seconds(e.after_seconds))
    }

    /// Nobody claimed the request in time: it is also sent to `reviewers`
    /// (the escalation loop's active members; those it already went to are
    /// left out) and, if the escalation says so, its priority goes up a
    /// step. Happens once. Returns how many reviewers were added.
    pub fn escalate(
        &mut self,
        reviewers: Vec<BroadcastEntry>,
        now: DateTime<Utc>,
    ) -> Result<usize, TransitionError> {
        let due = self.escalate_at().is_some_and(|at| at <= now);
        if self.status != RequestStatus::Pending || !due {
            return Err(TransitionError::NotDue);
        }
        let Some(escalation) = self.escalation else {
            return Err(TransitionError::NotDue);
        };
        let before = self.broadcasted_to.len();
        for mut entry in reviewers {
            if !self.was_broadcast_to(&entry.user_id) {
                entry.role = ESCALATION_ROLE.into();
                self.record.broadcasted_to.push(entry);
            }
        }
        if escalation.raise_priority {
            self.record.priority = self.priority.raised();
        }
        self.record.escalated_at = Some(now);
        self.record.updated_at = now;
        Ok(self.broadcasted_to.len() - before)
    }

    /// The loop to escalate to can no longer be used (it was deleted, or
    /// the requester lost access to it): the request stays where it is and
    /// does not escalate.
    pub fn drop_escalation(&mut self, now: DateTime<Utc>) {
        if self.escalated_at.is_none() {
            self.record.escalation = None;
            self.record.updated_at = now;
        }
    }

    /// The loop a reviewer may also belong to, to be allowed this request:
    /// the escalation loop, once the request escalated.
    pub fn escalated_to(&self) -> Option<crate::id::LoopId> {
        self.escalated_at.and(self.escalation).map(|e| e.to_loop_id)
    }

    /// When a reminder is due: with a quarter of the time between creation
    /// and the timeout left. A changed timeout moves it.
    pub fn remind_at(&self) -> DateTime<Utc> {
        let span = self.timeout_at - self.created_at;
        self.timeout_at - span / 4
    }

    /// True when the request is open and its timeout has passed.
    /// A request that joined another is never due: it ends with that one.
    pub fn is_due(&self, now: DateTime<Utc>) -> bool {
        self.status.is_open() && self.timeout_at <= now && self.coalesced_into.is_none()
    }

    /// The timeout passes with no answer: the default response becomes the
    /// final one.
    pub fn time_out(&mut self, now: DateTime<Utc>) -> Result<(), TransitionError> {
        self.ensure_open()?;
        if !self.is_due(now) {
            return Err(TransitionError::NotDue);
        }
        self.record.status = RequestStatus::Timeout;
        // An ended request takes no more in (see `accepts_followers`).
        self.record.coalescing = false;
        self.record.response_data = self.default_response.clone();
        self.record.response_at = Some(now);
        self.record.updated_at = now;
        Ok(())
    }

    /// The requester cancels a pending or claimed request.
    pub fn cancel(&mut self, now: DateTime<Utc>) -> Result<(), TransitionError> {
        if !self.status.is_open() {
            return Err(TransitionError::WrongStatus {
                status: self.status.to_string(),
                allowed: "pending or claimed",
                action: "cancelled",
            });
        }
        self.record.status = RequestStatus::Cancelled;
        self.record.coalescing = false;
        self.record.cancelled_at = Some(now);
        self.record.updated_at = now;
        Ok(())
    }

    /// The requester rates a completed request with a rating and a
    /// comment; see [`ReviewRequest::record_feedback`].
    pub fn give_feedback(
        &mut self,
        rating: Option<f64>,
        comment: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<(), ChangeError> {
        self.record_feedback(
            FeedbackInput {
                rating,
                comment,
                ..FeedbackInput::default()
            },
            now,
        )
    }

    /// Keeps the signed statement of the decision just made. A request
    /// holds one receipt, made when it ended: a second one (or one for a
    /// request still open or cancelled) is refused, so the first never
    /// changes.
    pub fn seal(&mut self, receipt: crate::receipt::Receipt) -> Result<(), TransitionError> {
        if self.receipt_statement().is_none() || self.receipt.is_some() {
            return Err(TransitionError::NotSealable);
        }
        self.record.receipt = Some(receipt);
        Ok(())
    }

    /// The requester says what it thought of a completed request's answer;
    /// new feedback replaces the earlier one. Every bad part is named.
    pub fn record_feedback(
        &mut self,
        input: FeedbackInput,
        now: DateTime<Utc>,
    ) -> Result<(), ChangeError> {
        if self.status != RequestStatus::Completed {
            return Err(TransitionError::WrongStatus {
                status: self.status.to_string(),
                allowed: "completed",
                action: "given feedback",
            }
            .into());
        }
        let mut errors = ValidationError::default();
        for (field, score) in [
            ("rating", input.rating),
            ("accuracy", input.accuracy),
            ("timeliness", input.timeliness),
            ("helpfulness", input.helpfulness),
        ] {
            if score.is_some_and(|r| !(1.0..=5.0).contains(&r)) {
                errors.extend(ValidationError::field(
                    field,
                    format!("{field} must be a number from 1 to 5"),
                ));
            }
        }
        let comment = input.comment.filter(|c| !c.trim().is_empty());
        if comment.as_deref().is_some_and(|c| char_len(c) > 5000) {
            errors.extend(ValidationError::field(
                "comment",
                "comment must be at most 5000 characters",
            ));
        }
        if let Some(comment) = &comment {
            errors.collect(check_prose("comment", comment));
        }
        let tags: Vec<String> = input
            .tags
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.trim().to_owned())
            .collect();
        if tags.len() > 20 || tags.iter().any(|t| t.is_empty() || char_len(t) > 50) {
            errors.extend(ValidationError::field(
                "tags",
                "tags must be at most 20 texts of 1 to 50 characters",
            ));
        }
        for tag in &tags {
            errors.collect(check_line("tags", tag));
        }
        if let Some(category) = &input.category {
            if !FEEDBACK_CATEGORIES.contains(&category.as_str()) {
                errors.extend(ValidationError::field(
                    "category",
                    "category must be one of positive, constructive, issue",
                ));
            }
        }
        let feedback = Feedback {
            rating: input.rating,
            comment,
            accuracy: input.accuracy,
            timeliness: input.timeliness,
            helpfulness: input.helpfulness,
            would_recommend: input.would_recommend,
            follow_up_needed: input.follow_up_needed,
            tags,
            category: input.category,
            created_at: now,
        };
        let said_nothing = feedback.rating.is_none()
            && feedback.comment.is_none()
            && feedback.accuracy.is_none()
            && feedback.timeliness.is_none()
            && feedback.helpfulness.is_none()
            && feedback.would_recommend.is_none()
            && feedback.follow_up_needed.is_none()
            && feedback.tags.is_empty()
            && feedback.category.is_none();
        if said_nothing && errors.is_empty() {
            errors.extend(ValidationError::field(
                "feedback",
                "feedback needs at least one of rating, comment, accuracy, timeliness, helpfulness, would_recommend, follow_up_needed, tags, category",
            ));
        }
        errors.into_result()?;
        self.record.feedback = Some(feedback);
        self.record.updated_at = now;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
