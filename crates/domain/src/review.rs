//! Reviews: the alternate surface's requests, whose answer is a form.
//!
//! A review is sent with a template: it copies the template's fields, shows
//! its `content` to the people it is assigned to (named assignees, and the
//! active members of its team), and is answered with a `result` that the
//! fields check. Its state machine:
//!
//! ```text
//! (create) → created → started      a reviewer starts it
//! created | started → completed    a reviewer submits a valid result
//! created | started → cancelled    the requester cancels it
//! ```
//! `due_date` is a deadline people see, not a timeout: a review waits until
//! it is answered or cancelled.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::account::Email;
use crate::error::{TransitionError, ValidationError};
use crate::form::Form;
use crate::id::{LoopId, ReviewId, TemplateId, UserId};
use crate::member::Member;
use crate::request::{ChangeError, Priority};
use crate::review_loop::Loop;
use crate::template::Template;
use crate::text::parse_http_url;
use crate::text::{char_len, check_prose};

/// The most characters of `content.text`.
pub const MAX_CONTENT_TEXT: usize = 20_000;
/// The most assignees a review may name.
pub const MAX_ASSIGNEES: usize = 50;

/// Where a review stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewStatus {
    /// Sent, waiting for a reviewer.
    Created,
    /// A reviewer started it.
    Started,
    /// A reviewer submitted its result.
    Completed,
    /// The requester cancelled it.
    Cancelled,
}

impl ReviewStatus {
    /// Every status.
    pub const ALL: [ReviewStatus; 4] = [
        Self::Created,
        Self::Started,
        Self::Completed,
        Self::Cancelled,
    ];

    /// The stored and shown name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Started => "started",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a name given by a client (`field` names it in the message).
    pub fn parse(field: &str, s: &str) -> Result<Self, ValidationError> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                ValidationError::field(
                    field,
                    format!("{field} must be one of created, started, completed, cancelled"),
                )
            })
    }

    /// Created and started reviews can still change; the rest are final.
    pub fn is_open(&self) -> bool {
        matches!(self, Self::Created | Self::Started)
    }
}

/// A person a review is assigned to, or who acted on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    /// The account.
    pub user_id: UserId,
    /// Its email.
    pub email: Email,
}

/// An assignee as a client named it: by email or by account id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssigneeRef {
    /// An email; an address with no account yet becomes an invitation.
    Email(Email),
    /// An existing account's id.
    User(UserId),
}

impl AssigneeRef {
    /// Reads one assignee a client named as `field`: a user id, or else an
    /// email.
    pub fn parse(field: &str, text: &str) -> Result<Self, ValidationError> {
        match UserId::parse(text) {
            Ok(id) => Ok(Self::User(id)),
            Err(_) => Email::parse(text).map(Self::Email).map_err(|_| {
                ValidationError::field(
                    field,
                    format!("{field} must be an email address or a user id"),
                )
            }),
        }
    }
}

/// What a client sends to create a review, unchecked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewInput {
    /// The template whose fields the review copies (required).
    pub template_id: Option<Value>,
    /// `{"text", "metadata"}` shown to reviewers.
    pub content: Option<Value>,
    /// Emails or account ids.
    pub assignees: Option<Value>,
    /// A team (loop) whose active members get the review.
    pub team_id: Option<Value>,
    /// `low`, `medium` (default), `high` or `critical`.
    pub priority: Option<Value>,
    /// An ISO 8601 deadline.
    pub due_date: Option<Value>,
    /// Called with the review when it completes.
    pub callback_url: Option<Value>,
}

/// A create-review body whose every part has been checked; the service
/// still resolves the assignees and checks the template and team exist.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedReview {
    /// The template.
    pub template_id: TemplateId,
    /// `content.text`.
    pub content_text: Option<String>,
    /// `content.metadata`.
    pub metadata: Map<String, Value>,
    /// Who it is assigned to, as named.
    pub assignees: Vec<AssigneeRef>,
    /// The team.
    pub team_id: Option<LoopId>,
    /// How urgent it is.
    pub priority: Priority,
    /// The deadline.
    pub due_date: Option<DateTime<Utc>>,
    /// The completion callback.
    pub callback_url: Option<String>,
}

/// A change to an open review: absent parts stay as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewPatch {
    /// A new priority.
    pub priority: Option<Value>,
    /// A new deadline; `Some(Value::Null)` clears it.
    pub due_date: Option<Value>,
    /// New assignees, replacing the old ones.
    pub assignees: Option<Value>,
}

fn text_of<'a>(field: &str, value: &'a Value) -> Result<&'a str, ValidationError> {
    value
        .as_str()
        .ok_or_else(|| ValidationError::field(field, format!("{field} must be a string")))
}

fn parse_priority(value: &Value) -> Result<Priority, ValidationError> {
    Priority::parse(text_of("priority", value)?)
}

fn parse_due_date(value: &Value) -> Result<Option<DateTime<Utc>>, ValidationError> {
    if value.is_null() {
        return Ok(None);
    }
    let text = text_of("due_date", value)?;
    DateTime::parse_from_rfc3339(text)
        .map(|d| Some(d.with_timezone(&Utc)))
        .map_err(|_| {
            ValidationError::field(
                "due_date",
                "due_date must be an ISO 8601 date-time such as 2026-12-01T17:00:00Z",
            )
        })
}

/// Parses `assignees`: 0 to 50 (`MAX_ASSIGNEES`) emails or account ids, each
/// named once.
pub fn parse_assignees(value: &Value) -> Result<Vec<AssigneeRef>, ValidationError> {
    let Some(items) = value.as_array() else {
        return Err(ValidationError::field(
            "assignees",
            "assignees must be an array of emails or user ids",
        ));
    };
    if items.len() > MAX_ASSIGNEES {
        return Err(ValidationError::field(
            "assignees",
            format!("assignees must have at most {MAX_ASSIGNEES} entries"),
        ));
    }
    let mut errors = ValidationError::default();
    let mut parsed: Vec<AssigneeRef> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let path = format!("assignees[{index}]");
        let Some(text) = errors.collect(text_of(&path, item)) else {
            continue;
        };
        if let Some(one) = errors.collect(AssigneeRef::parse(&path, text)) {
            if parsed.contains(&one) {
                errors.extend(ValidationError::field(
                    path.clone(),
                    format!("{path} '{text}' is named twice"),
                ));
            } else {
                parsed.push(one);
            }
        }
    }
    errors.into_result().map(|()| parsed)
}

fn parse_content(
    value: Option<&Value>,
) -> Result<(Option<String>, Map<String, Value>), ValidationError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok((None, Map::new()));
    };
    let Some(content) = value.as_object() else {
        return Err(ValidationError::field(
            "content",
            "content must be an object with text and metadata",
        ));
    };
    let mut errors = ValidationError::default();
    for key in content
        .keys()
        .filter(|k| !["text", "metadata"].contains(&k.as_str()))
    {
        errors.extend(ValidationError::field(
            format!("content.{key}"),
            format!("content.{key} is not part of content: send text and metadata"),
        ));
    }
    let text = match content.get("text") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if char_len(text) > MAX_CONTENT_TEXT => {
            errors.extend(ValidationError::field(
                "content.text",
                format!("content.text must be at most {MAX_CONTENT_TEXT} characters"),
            ));
            None
        }
        Some(Value::String(text)) => errors
            .collect(check_prose("content.text", text))
            .map(|()| text.clone()),
        Some(_) => {
            errors.extend(ValidationError::field(
                "content.text",
                "content.text must be a string",
            ));
            None
        }
    };
    let metadata = match content.get("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => {
            errors.extend(ValidationError::field(
                "content.metadata",
                "content.metadata must be a JSON object",
            ));
            Map::new()
        }
    };
    errors.into_result().map(|()| (text, metadata))
}

impl ReviewInput {
    /// Checks every part and reports every mistake at once.
    pub fn parse(self) -> Result<ParsedReview, ValidationError> {
        let mut errors = ValidationError::default();
        let template_id = match &self.template_id {
            None | Some(Value::Null) => {
                errors.extend(ValidationError::field(
                    "template_id",
                    "template_id is required",
                ));
                None
            }
            Some(value) => errors.collect(
                text_of("template_id", value)
                    .and_then(|t| TemplateId::parse_field("template_id", t)),
            ),
        };
        let content = errors.collect(parse_content(self.content.as_ref()));
        let assignees = match &self.assignees {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(value) => errors.collect(parse_assignees(value)),
        };
        let team_id = match &self.team_id {
            None | Some(Value::Null) => Some(None),
            Some(value) => errors
                .collect(text_of("team_id", value).and_then(|t| LoopId::parse_field("team_id", t)))
                .map(Some),
        };
        if matches!((&assignees, &team_id), (Some(a), Some(None)) if a.is_empty()) {
            errors.extend(ValidationError::field(
                "assignees",
                "assignees or team_id is required: name who reviews it",
            ));
        }
        let priority = match &self.priority {
            None | Some(Value::Null) => Some(Priority::Medium),
            Some(value) => errors.collect(parse_priority(value)),
        };
        let due_date = match &self.due_date {
            None => Some(None),
            Some(value) => errors.collect(parse_due_date(value)),
        };
        let callback_url = match &self.callback_url {
            None | Some(Value::Null) => Some(None),
            Some(value) => errors
                .collect(
                    text_of("callback_url", value)
                        .and_then(|url| parse_http_url("callback_url", url)),
                )
                .map(Some),
        };
        errors.into_result()?;
        match (
            template_id,
            content,
            assignees,
            team_id,
            priority,
            due_date,
            callback_url,
        ) {
            (
                Some(template_id),
                Some((content_text, metadata)),
                Some(assignees),
                Some(team_id),
                Some(priority),
                Some(due_date),
                Some(callback_url),
            ) => Ok(ParsedReview {
                template_id,
                content_text,
                metadata,
                assignees,
                team_id,
                priority,
                due_date,
                callback_url,
            }),
            _ => Err(ValidationError::field("body", "review is not valid")),
        }
    }
}

/// A review as stored: every fact, readable by anyone; changed only
/// through [`Review`]'s methods, which keep the state machine.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRecord {
    /// Its id.
    pub id: ReviewId,
    /// The account that sent it.
    pub account_id: UserId,
    /// The template it was sent with.
    pub template_id: TemplateId,
    /// The template's fields when it was sent (`Form::to_value`).
    pub fields: Value,
    /// `content.text`.
    pub content_text: Option<String>,
    /// `content.metadata`.
    pub metadata: Map<String, Value>,
    /// The people it is assigned to by name.
    pub assignees: Vec<Reviewer>,
    /// The team whose active members get it.
    pub team_id: Option<LoopId>,
    /// How urgent it is.
    pub priority: Priority,
    /// Its deadline.
    pub due_date: Option<DateTime<Utc>>,
    /// Called when it completes.
    pub callback_url: Option<String>,
    /// Where it stands.
    pub status: ReviewStatus,
    /// Who started (and then completed) it.
    pub reviewer: Option<Reviewer>,
    /// When it was started.
    pub started_at: Option<DateTime<Utc>>,
    /// The submitted result: field name to value.
    pub result: Option<Value>,
    /// When it was completed.
    pub completed_at: Option<DateTime<Utc>>,
    /// When it was cancelled.
    pub cancelled_at: Option<DateTime<Utc>>,
    /// When it was sent.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Optimistic-concurrency counter: a store writes a change only if the
    /// stored version is still the one the change was made from.
    pub version: i64,
}

/// A review: its record and the form its result must fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    record: ReviewRecord,
    form: Form,
}

impl Review {
    /// A new review of `template`. Editable fields are pre-filled from
    /// `content.metadata`, and each such value must fit its field.
    pub fn create(
        id: ReviewId,
        account_id: UserId,
        template: &Template,
        parsed: ParsedReview,
        assignees: Vec<Reviewer>,
        now: DateTime<Utc>,
    ) -> Result<Self, ValidationError> {
        let form = template.form().clone();
        form.prefill(&parsed.metadata)?;
        Ok(Self {
            record: ReviewRecord {
                id,
                account_id,
                template_id: template.id(),
                fields: form.to_value(),
                content_text: parsed.content_text,
                metadata: parsed.metadata,
                assignees,
                team_id: parsed.team_id,
                priority: parsed.priority,
                due_date: parsed.due_date,
                callback_url: parsed.callback_url,
                status: ReviewStatus::Created,
                reviewer: None,
                started_at: None,
                result: None,
                completed_at: None,
                cancelled_at: None,
                created_at: now,
                updated_at: now,
                version: 0,
            },
            form,
        })
    }

    /// A review as a store kept it; its fields are parsed again.
    pub fn restore(record: ReviewRecord) -> Result<Self, ValidationError> {
        let form = Form::parse(&record.fields)?;
        Ok(Self { record, form })
    }

    /// Who hears of this new review as a member of its `team`: active
    /// members who want to hear of its priority, except its assignees, who
    /// are told as such (asked by name, whatever their preference).
    pub fn team_audience<'a>(&self, team: &'a Loop) -> Vec<&'a Member> {
        team.active_members()
            .filter(|m| m.notify.wants(self.record.priority))
            .filter(|m| !self.record.assignees.iter().any(|a| a.user_id == m.user_id))
            .collect()
    }

    /// Everything about it.
    pub fn record(&self) -> &ReviewRecord {
        &self.record
    }

    /// The fields its result must fit.
    pub fn form(&self) -> &Form {
        &self.form
    }

    /// The values its editable fields start with.
    pub fn prefill(&self) -> Map<String, Value> {
        // Checked at creation; a value that no longer fits starts empty.
        self.form.prefill(&self.record.metadata).unwrap_or_default()
    }

    /// True when `user` is named among its assignees.
    pub fn is_assigned_to(&self, user: &UserId) -> bool {
        self.record.assignees.iter().any(|a| &a.user_id == user)
    }

    /// True when `user` sent it.
    pub fn is_sent_by(&self, user: &UserId) -> bool {
        &self.record.account_id == user
    }

    /// True when it is past its deadline at `now` and still open.
    pub fn is_overdue(&self, now: DateTime<Utc>) -> bool {
        self.record.status.is_open() && self.record.due_date.is_some_and(|d| d < now)
    }

    fn ensure_open(&self) -> Result<(), TransitionError> {
        if self.record.status.is_open() {
            Ok(())
        } else {
            Err(TransitionError::NotOpen)
        }
    }

    fn ensure_not_started_by_other(&self, by: &UserId) -> Result<(), TransitionError> {
        match (&self.record.status, &self.record.reviewer) {
            (ReviewStatus::Started, Some(holder)) if &holder.user_id != by => {
                Err(TransitionError::AlreadyClaimed)
            }
            _ => Ok(()),
        }
    }

    /// A reviewer starts it. Returns `false` when `by` had already started
    /// it (starting twice changes nothing).
    pub fn start(&mut self, by: Reviewer, now: DateTime<Utc>) -> Result<bool, TransitionError> {
        self.ensure_open()?;
        self.ensure_not_started_by_other(&by.user_id)?;
        if self.record.status == ReviewStatus::Started {
            return Ok(false);
        }
        self.record.status = ReviewStatus::Started;
        self.record.reviewer = Some(by);
        self.record.started_at = Some(now);
        self.record.updated_at = now;
        Ok(true)
    }

    /// Gives a started review back to everyone (its starter can no longer
    /// answer it: reassigned away, or gone from the team). Returns whether
    /// it was started.
    pub fn release(&mut self, now: DateTime<Utc>) -> bool {
        if self.record.status != ReviewStatus::Started {
            return false;
        }
        self.record.status = ReviewStatus::Created;
        self.record.reviewer = None;
        self.record.started_at = None;
        self.record.updated_at = now;
        true
    }

    /// A reviewer submits a result: from created (starting it at once) or
    /// from started by `by`. The result must fit the form; editable fields
    /// left out keep their pre-filled values.
    pub fn complete(
        &mut self,
        by: Reviewer,
        result: &Value,
        now: DateTime<Utc>,
    ) -> Result<(), ChangeError> {
        self.ensure_open()?;
        self.ensure_not_started_by_other(&by.user_id)?;
        let result = self.form.validate("result", result, &self.prefill())?;
        if self.record.started_at.is_none() {
            self.record.started_at = Some(now);
        }
        self.record.status = ReviewStatus::Completed;
        self.record.reviewer = Some(by);
        self.record.result = Some(result);
        self.record.completed_at = Some(now);
        self.record.updated_at = now;
        Ok(())
    }

    /// The requester cancels it while it is open.
    pub fn cancel(&mut self, now: DateTime<Utc>) -> Result<(), TransitionError> {
        if !self.record.status.is_open() {
            return Err(TransitionError::WrongStatus {
                status: self.record.status.as_str().to_owned(),
                allowed: "created or started",
                action: "cancelled",
            });
        }
        self.record.status = ReviewStatus::Cancelled;
        self.record.cancelled_at = Some(now);
        self.record.updated_at = now;
        Ok(())
    }

    /// Applies a change to an open review; `assignees` are the resolved
    /// new assignees, when the patch names some. Returns whether the
    /// assignees changed.
    pub fn change(
        &mut self,
        patch: &ReviewPatch,
        assignees: Option<Vec<Reviewer>>,
        now: DateTime<Utc>,
    ) -> Result<bool, ChangeError> {
        if !self.record.status.is_open() {
            return Err(TransitionError::WrongStatus {
                status: self.record.status.as_str().to_owned(),
                allowed: "created or started",
                action: "updated",
            }
            .into());
        }
        let mut errors = ValidationError::default();
        let priority = patch
            .priority
            .as_ref()
            .and_then(|p| errors.collect(parse_priority(p)));
        let due_date = patch
            .due_date
            .as_ref()
            .and_then(|d| errors.collect(parse_due_date(d)));
        let empty = matches!(&assignees, Some(a) if a.is_empty());
        if empty && self.record.team_id.is_none() {
            errors.extend(ValidationError::field(
                "assignees",
                "assignees must name someone: this review has no team",
            ));
        }
        errors.into_result()?;
        if let Some(priority) = priority {
            self.record.priority = priority;
        }
        if let Some(due_date) = due_date {
            self.record.due_date = due_date;
        }
        let reassigned = match assignees {
            Some(new) if new != self.record.assignees => {
                self.record.assignees = new;
                true
            }
            _ => false,
        };
        self.record.updated_at = now;
        Ok(reassigned)
    }

    /// Marks a write: the store has bumped the stored version.
    pub fn written(&mut self) {
        self.record.version += 1;
    }
}

#[cfg(test)]
mod tests;
