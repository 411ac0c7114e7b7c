//! Notices: what reviewers are told, by email or Slack, and how each one
//! moves from waiting to sent or given up.

use chrono::{DateTime, Utc};

use crate::account::Email;
use crate::id::{LoopId, NoticeId, RequestId, UserId};
use crate::request_fields::Priority;
use crate::retry::{retry_delay_in, with_jitter};

api_enum!(
    /// Which requests of a loop a member wants to hear about.
    NotifyLevel, "notify" {
        /// Every request (the default).
        All => "all",
        /// High and critical requests only.
        Urgent => "urgent",
        /// None: the member looks in the inbox.
        Off => "none",
    }
);

impl NotifyLevel {
    /// True when a request of `priority` should be announced.
    pub fn wants(&self, priority: Priority) -> bool {
        match self {
            Self::All => true,
            Self::Urgent => priority.rank() >= Priority::High.rank(),
            Self::Off => false,
        }
    }

    /// Why a member was not told, in the words a requester reads.
    pub fn refusal(&self) -> &'static str {
        match self {
            Self::Off => "not notified: the member turned notifications off for this loop",
            _ => "not notified: the member asked for high and critical requests only",
        }
    }
}

api_enum!(
    /// How a notice travels.
    Channel, "channel" {
        /// An email through the configured SMTP server.
        Email => "email",
        /// A message to the loop's Slack incoming webhook.
        Slack => "slack",
        /// A message posted or changed by the loop's Slack app.
        SlackApp => "slack_app",
        /// A Web Push to one of a member's devices (`to` holds the
        /// subscription's id).
        Push => "push",
    }
);

api_enum!(
    /// What a notice is about.
    NoticeKind, "kind" {
        /// A new request in one of the reviewer's loops.
        NewRequest => "new_request",
        /// A request still open with a quarter of its time left.
        Reminder => "reminder",
        /// An invitation to join a loop.
        Invitation => "invitation",
        /// A link to set a new password.
        PasswordReset => "password_reset",
        /// A review assigned to the reviewer or sent to their team.
        NewReview => "new_review",
        /// A request answered, timed out or cancelled: its Slack message
        /// is changed to say so.
        RequestEnded => "request_ended",
    }
);

/// What a finished email holding one-time links (a password reset, a new
/// request's answer links) keeps of its message.
pub const FORGOTTEN: &str = "(not kept: it held one-time links)";

api_enum!(
    /// Where a notice stands.
    NoticeStatus, "status" {
        /// Waiting for its next attempt.
        Pending => "pending",
        /// The SMTP server or Slack took it.
        Sent => "sent",
        /// Every attempt of the schedule failed.
        Failed => "failed",
    }
);

/// The text of a notice: a subject line, a plain text body and, for email,
/// an HTML alternative.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The subject (email) or first line (Slack).
    pub subject: String,
    /// The plain text.
    pub text: String,
    /// The HTML alternative of an email.
    pub html: Option<String>,
}

/// What a notice is, as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct NoticeRecord {
    /// The notice's id.
    pub id: NoticeId,
    /// What it is about.
    pub kind: NoticeKind,
    /// How it travels.
    pub channel: Channel,
    /// The account whose request, loop or password it is about.
    pub account_id: UserId,
    /// The loop, where there is one.
    pub loop_id: Option<LoopId>,
    /// The request, where there is one.
    pub request_id: Option<RequestId>,
    /// The reviewer told, for notices to one person.
    pub recipient_id: Option<UserId>,
    /// The email address, for email.
    pub to: Option<String>,
    /// What it says.
    pub message: Message,
    /// Where it stands.
    pub status: NoticeStatus,
    /// Attempts made.
    pub attempts: u32,
    /// When the next attempt is due.
    pub next_attempt_at: DateTime<Utc>,
    /// Why the last attempt failed, short and without secrets.
    pub last_error: Option<String>,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// When it was sent.
    pub sent_at: Option<DateTime<Utc>>,
}

/// One notice on its way. Facts are read through `Deref` to
/// [`NoticeRecord`]; only [`Notice::record_attempt`] moves it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    record: NoticeRecord,
}

kept_in_record!(Notice, NoticeRecord);

/// Who and what a new notice is for.
#[derive(Debug, Clone, PartialEq)]
pub struct NewNotice {
    /// What it is about.
    pub kind: NoticeKind,
    /// How it travels.
    pub channel: Channel,
    /// The account it belongs to.
    pub account_id: UserId,
    /// The loop, where there is one.
    pub loop_id: Option<LoopId>,
    /// The request, where there is one.
    pub request_id: Option<RequestId>,
    /// The reviewer told, for notices to one person.
    pub recipient_id: Option<UserId>,
    /// The email address, for email.
    pub to: Option<String>,
    /// What it says.
    pub message: Message,
}

impl NewNotice {
    /// An email of `kind` from `account_id` to one person, about no loop
    /// or request yet (set `loop_id` and `request_id` where there is one).
    pub fn email(
        kind: NoticeKind,
        account_id: UserId,
        recipient_id: UserId,
        to: &Email,
        message: Message,
    ) -> Self {
        Self {
            kind,
            channel: Channel::Email,
            account_id,
            loop_id: None,
            request_id: None,
            recipient_id: Some(recipient_id),
            to: Some(to.as_str().to_owned()),
            message,
        }
    }
}

/// The longest error a notice keeps; receivers' answers can be long.
const MAX_ERROR_CHARS: usize = 200;

impl Notice {
    /// A notice due at once.
    pub fn create(id: NoticeId, fields: NewNotice, now: DateTime<Utc>) -> Self {
        Self::restore(NoticeRecord {
            id,
            kind: fields.kind,
            channel: fields.channel,
            account_id: fields.account_id,
            loop_id: fields.loop_id,
            request_id: fields.request_id,
            recipient_id: fields.recipient_id,
            to: fields.to,
            message: fields.message,
            status: NoticeStatus::Pending,
            attempts: 0,
            next_attempt_at: now,
            last_error: None,
            created_at: now,
            sent_at: None,
        })
    }

    /// Records an attempt made `at`: sent when `error` is `None`; otherwise
    /// tried again after the schedule's next pause (spread by `jitter`, -1
    /// to 1) or, once the schedule is spent, given up. The error is kept
    /// short.
    pub fn record_attempt(
        &mut self,
        at: DateTime<Utc>,
        error: Option<&str>,
        schedule: &[i64],
        jitter: f64,
    ) {
        let record = &mut self.record;
        record.attempts += 1;
        match error {
            None => {
                record.status = NoticeStatus::Sent;
                record.sent_at = Some(at);
                record.last_error = None;
            }
            Some(error) => {
                record.last_error = Some(short(error));
                record.status = match retry_delay_in(schedule, record.attempts) {
                    Some(pause) => {
                        record.next_attempt_at = at + with_jitter(pause, jitter);
                        NoticeStatus::Pending
                    }
                    None => NoticeStatus::Failed,
                };
            }
        }
        // A reset link, or a new request's one-click answer links, are live
        // secrets: once the email went out, or never will, the queue stops
        // keeping it (the request itself says what it said).
        let secret = match record.kind {
            NoticeKind::PasswordReset => true,
            NoticeKind::NewRequest => record.channel == Channel::Email,
            _ => false,
        };
        if secret && record.status != NoticeStatus::Pending {
            record.message.text = FORGOTTEN.into();
            record.message.html = None;
        }
    }

    /// What a reviewer's broadcast entry should say of this notice:
    /// whether it was sent, and the last error while it was not.
    pub fn outcome(&self) -> (bool, Option<String>) {
        match self.status {
            NoticeStatus::Sent => (true, None),
            _ => (false, self.last_error.clone()),
        }
    }
}

/// An error cut to one line of at most 200 characters.
fn short(error: &str) -> String {
    let line = error.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= MAX_ERROR_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(MAX_ERROR_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests;
