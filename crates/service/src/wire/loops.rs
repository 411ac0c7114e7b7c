//! Loops and their members as the API and loop events show them.

use chrono::{DateTime, Utc};
use reviewloop_domain::{Loop, LoopId, Member, UserId};
use serde::Serialize;
use serde_json::{json, Value};

/// A member of a loop.
#[derive(Debug, Serialize)]
pub struct MemberView<'a> {
    user_id: &'a UserId,
    email: &'a str,
    status: &'static str,
    notify: &'static str,
    invited_at: &'a DateTime<Utc>,
    joined_at: &'a Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    removed_at: &'a Option<DateTime<Utc>>,
}

impl<'a> MemberView<'a> {
    /// `member` as shown.
    pub fn of(member: &'a Member) -> Self {
        Self {
            user_id: &member.user_id,
            email: member.email.as_str(),
            status: member.status.as_str(),
            notify: member.notify.as_str(),
            invited_at: &member.invited_at,
            joined_at: &member.joined_at,
            removed_at: &member.removed_at,
        }
    }
}

/// A loop with its members and their counts.
#[derive(Debug, Serialize)]
pub struct LoopView<'a> {
    id: &'a LoopId,
    name: &'a str,
    /// An empty text when there is none: the reference types it a string.
    description: &'a str,
    icon: &'a str,
    creator_id: &'a UserId,
    invite_code: &'a str,
    members: Vec<MemberView<'a>>,
    member_count: usize,
    pending_count: usize,
    active_count: usize,
    created_at: &'a DateTime<Utc>,
    updated_at: &'a DateTime<Utc>,
    /// Whether new requests are posted to Slack; the URL itself is a secret.
    slack_configured: bool,
    reminders: bool,
    /// The quorum of new requests that ask for none.
    quorum: Option<Value>,
    /// Where new requests that name none escalate.
    escalation: Option<Value>,
    /// The rules tried on each new request, in order.
    rules: Value,
}

impl<'a> LoopView<'a> {
    /// `lp` as shown.
    pub fn of(lp: &'a Loop) -> Self {
        Self {
            id: &lp.id,
            name: lp.name.as_str(),
            description: lp.description.as_ref().map_or("", |d| d.as_str()),
            icon: lp.icon.as_str(),
            creator_id: &lp.creator_id,
            invite_code: lp.invite_code.as_str(),
            members: lp.members.iter().map(MemberView::of).collect(),
            member_count: lp.member_count(),
            pending_count: lp.pending_count(),
            active_count: lp.active_count(),
            created_at: &lp.created_at,
            updated_at: &lp.updated_at,
            slack_configured: lp.slack_webhook_url.is_some(),
            reminders: lp.reminders,
            quorum: lp.quorum.map(|q| q.to_value()),
            escalation: lp.escalation.map(|e| e.to_value()),
            rules: lp.rules.to_value(),
        }
    }
}

/// The short form of a loop that events carry.
pub fn loop_summary(lp: &Loop) -> Value {
    json!({"id": lp.id, "name": lp.name.as_str(), "creator_id": lp.creator_id})
}
