//! Loops and their members, as the API and loop events show them, and the
//! bodies that make and change them.

use chrono::{DateTime, Utc};
use reviewloop_domain::{Loop, LoopId, Member, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::present::{present, present_text};
use crate::schema;

/// A member of a loop.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Member)]
pub struct MemberOut<'a> {
    #[schema(value_type = schema::Id)]
    pub user_id: UserId,
    pub email: &'a str,
    #[schema(value_type = schema::MemberStatus)]
    pub status: &'static str,
    #[schema(value_type = schema::NotifyLevel)]
    pub notify: &'static str,
    pub invited_at: DateTime<Utc>,
    pub joined_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed_at: Option<DateTime<Utc>>,
}

impl<'a> MemberOut<'a> {
    /// `member` as shown.
    pub fn of(member: &'a Member) -> Self {
        Self {
            user_id: member.user_id,
            email: member.email.as_str(),
            status: member.status.as_str(),
            notify: member.notify.as_str(),
            invited_at: member.invited_at,
            joined_at: member.joined_at,
            removed_at: member.removed_at,
        }
    }
}

/// How many reviewers must answer a request, and how their answers decide.
#[derive(Debug, ToSchema)]
#[schema(
    as = Quorum,
    example = json!({"count": 2, "rule": "all_agree"})
)]
#[allow(dead_code)] // Describes quorums, which are read and written by the domain.
pub struct QuorumSchema {
    #[schema(minimum = 1, maximum = 100)]
    count: u32,
    #[schema(value_type = Option<schema::QuorumRule>, default = "all_agree")]
    rule: Option<String>,
    /// Whether the request's creator is kept from answering (default true).
    #[schema(default = true)]
    exclude_requester: Option<bool>,
}

/// Where an unclaimed request also goes.
#[derive(Debug, ToSchema)]
#[schema(
    as = Escalation,
    example = json!({"after_seconds": 900, "to_loop_id": "6743a1f09c1e4b2a8d3f5e61", "raise_priority": true})
)]
#[allow(dead_code)] // Describes escalations, which are read and written by the domain.
/// Unclaimed `after_seconds` after creation, the request is also sent to
/// the active members of `to_loop_id` (a loop the requester may use), once;
/// `raise_priority` moves it one step up.
pub struct EscalationSchema {
    #[schema(minimum = 1)]
    after_seconds: i64,
    #[schema(value_type = schema::Id)]
    to_loop_id: String,
    #[schema(default = false)]
    raise_priority: Option<bool>,
}

/// A rule of a loop.
#[derive(Debug, ToSchema)]
#[schema(
    as = Rule,
    example = json!({"id": "small-refunds", "when": {"context": [{"pointer": "/amount", "lt": 50}]}, "then": {"answer": "approve"}})
)]
#[allow(dead_code)] // Describes rules, which are read and written by the domain.
/// Tried in order on each new request; the first whose `when` holds fires.
/// `when` may name `priority`, `platform`, `response_type` (a value or a
/// list) and `context`: tests such as `{"pointer": "/amount", "lt": 100}`
/// with `eq`, `ne`, `lt`, `lte`, `gt`, `gte`, `in`. `then` is
/// `{"answer": VALUE}`, `{"route_to_loop_id": ID}` or `{"quorum": {...}}`.
pub struct RuleSchema {
    #[schema(max_length = 64)]
    id: Option<String>,
    #[schema(value_type = Option<Object>)]
    when: Option<Value>,
    #[schema(value_type = Object)]
    then: Value,
}

/// A loop with its members and their counts.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Loop)]
pub struct LoopOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: LoopId,
    pub name: &'a str,
    /// An empty text when there is none: the reference types it a string.
    pub description: &'a str,
    pub icon: &'a str,
    #[schema(value_type = schema::Id)]
    pub creator_id: UserId,
    pub invite_code: &'a str,
    pub members: Vec<MemberOut<'a>>,
    pub member_count: usize,
    pub pending_count: usize,
    pub active_count: usize,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Whether new requests are posted to Slack; the URL itself is a secret.
    pub slack_configured: bool,
    /// Whether a Slack app posts new requests with answer buttons; its
    /// token and signing secret are never shown.
    pub slack_app_configured: bool,
    pub reminders: bool,
    /// The quorum of new requests that ask for none.
    #[schema(value_type = Option<QuorumSchema>)]
    pub quorum: Option<Value>,
    /// Where new requests that name none escalate.
    #[schema(value_type = Option<EscalationSchema>)]
    pub escalation: Option<Value>,
    /// The rules tried on each new request, in order.
    #[schema(value_type = Vec<RuleSchema>)]
    pub rules: Value,
    /// How long an open request takes in new ones that ask the same
    /// question; null: only requests that name a `coalesce_key` join.
    #[schema(value_type = Option<WindowSchema>)]
    pub coalesce: Option<Value>,
    /// How old a person's answer to the same question may be for a new
    /// request to take it at once; null: never.
    #[schema(value_type = Option<WindowSchema>)]
    pub reuse_answers: Option<Value>,
    /// Who new requests are offered to; null: every active member.
    #[schema(value_type = Option<AssignmentSchema>)]
    pub assignment: Option<Value>,
}

impl<'a> LoopOut<'a> {
    /// `lp` as shown.
    pub fn of(lp: &'a Loop) -> Self {
        Self {
            id: lp.id,
            name: lp.name.as_str(),
            description: lp.description.as_ref().map_or("", |d| d.as_str()),
            icon: lp.icon.as_str(),
            creator_id: lp.creator_id,
            invite_code: lp.invite_code.as_str(),
            members: lp.members.iter().map(MemberOut::of).collect(),
            member_count: lp.member_count(),
            pending_count: lp.pending_count(),
            active_count: lp.active_count(),
            created_at: lp.created_at,
            updated_at: lp.updated_at,
            slack_configured: lp.slack_webhook_url.is_some(),
            slack_app_configured: lp.slack_app.is_some(),
            reminders: lp.reminders,
            quorum: lp.quorum.map(|q| q.to_value()),
            escalation: lp.escalation.map(|e| e.to_value()),
            rules: lp.rules.to_value(),
            coalesce: lp.coalesce.map(|w| w.to_value()),
            reuse_answers: lp.reuse_answers.map(|w| w.to_value()),
            assignment: lp.assignment.map(|a| a.to_value()),
        }
    }
}

/// The short form of a loop that events carry.
#[derive(Debug, Serialize)]
pub struct LoopSummary<'a> {
    pub id: LoopId,
    pub name: &'a str,
    pub creator_id: UserId,
}

impl<'a> LoopSummary<'a> {
    /// `lp` in short.
    pub fn of(lp: &'a Loop) -> Self {
        Self {
            id: lp.id,
            name: lp.name.as_str(),
            creator_id: lp.creator_id,
        }
    }
}

/// A new loop and everything needed to join it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = LoopInvite)]
pub struct LoopInviteOut<'a> {
    #[serde(rename = "loop")]
    pub lp: LoopOut<'a>,
    pub invite_code: &'a str,
    /// A `data:image/png;base64,` URI, as the reference shows it: it goes
    /// straight into an `<img src>`.
    pub qr_code_base64: String,
    pub qr_code_url: &'a str,
    pub join_url: &'a str,
}

/// A team (a loop) as the alternate surface shows it; a new one also
/// carries its join details.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Team)]
pub struct TeamOut<'a> {
    #[serde(flatten)]
    pub lp: LoopOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qr_code_url: Option<&'a str>,
}

impl<'a> TeamOut<'a> {
    /// `lp` as a team.
    pub fn of(lp: &'a Loop) -> Self {
        Self {
            lp: LoopOut::of(lp),
            join_url: None,
            qr_code_url: None,
        }
    }
}

/// The caller's loops.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = LoopList)]
pub struct LoopListOut<'a> {
    pub loops: Vec<LoopOut<'a>>,
    pub count: usize,
}

/// One loop.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = OneLoop)]
pub struct OneLoopOut<'a> {
    #[serde(rename = "loop")]
    pub lp: LoopOut<'a>,
}

/// A deleted loop.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = LoopDeleted)]
pub struct LoopDeletedOut {
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
}

/// A loop's members with their counts.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = MemberList)]
pub struct MemberListOut<'a> {
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
    pub members: Vec<MemberOut<'a>>,
    pub count: usize,
    pub member_count: usize,
    pub total_count: usize,
    pub active_count: usize,
    pub pending_count: usize,
}

impl<'a> MemberListOut<'a> {
    /// The members of `lp`.
    pub fn of(lp: &'a Loop) -> Self {
        Self {
            loop_id: lp.id,
            members: lp.members.iter().map(MemberOut::of).collect(),
            count: lp.member_count(),
            member_count: lp.member_count(),
            total_count: lp.member_count(),
            active_count: lp.active_count(),
            pending_count: lp.pending_count(),
        }
    }
}

/// One member of a loop.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = LoopMember)]
pub struct LoopMemberOut<'a> {
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
    pub member: MemberOut<'a>,
}

/// The loop just joined, and the caller's membership.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Joined)]
pub struct JoinedOut<'a> {
    #[serde(rename = "loop")]
    pub lp: LoopOut<'a>,
    pub member: MemberOut<'a>,
}

/// A member taken out of a loop.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = MemberRemoved)]
pub struct MemberRemovedOut {
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
    #[schema(value_type = schema::Id)]
    pub user_id: UserId,
    pub removed_at: DateTime<Utc>,
}

/// A new loop.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewLoop, example = json!({"name": "Support replies", "description": "Customer replies before they go out"}))]
pub struct NewLoopIn {
    #[schema(value_type = String, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    pub description: Option<String>,
    pub icon: Option<String>,
}

/// A change to a loop; what is absent stays, `null` clears. Its `Debug`
/// leaves out the Slack secrets.
#[derive(Deserialize, ToSchema)]
#[schema(as = LoopPatch)]
pub struct LoopPatchIn {
    pub name: Option<String>,
    #[serde(default, deserialize_with = "present_text")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    pub icon: Option<String>,
    /// A Slack incoming webhook URL; `null` stops the posts.
    #[serde(default, deserialize_with = "present_text")]
    #[schema(value_type = Option<String>)]
    pub slack_webhook_url: Option<Option<String>>,
    /// A Slack app that posts new requests with answer buttons; `null`
    /// stops it. Its secrets are never shown back.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<SlackAppSchema>)]
    pub slack_app: Option<Value>,
    pub reminders: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<QuorumSchema>)]
    pub quorum: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<EscalationSchema>)]
    pub escalation: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<RuleSchema>>)]
    pub rules: Option<Value>,
    /// `{"window_seconds": N}`: new requests that ask what an open one
    /// made within N seconds asks join it; `null` stops it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<WindowSchema>)]
    pub coalesce: Option<Value>,
    /// `{"window_seconds": N}`: new requests take a person's answer to the
    /// same question given within N seconds; `null` stops it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<WindowSchema>)]
    pub reuse_answers: Option<Value>,
    /// Who new requests are offered to; `null` (or `broadcast`): every
    /// active member.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<AssignmentSchema>)]
    pub assignment: Option<Value>,
}

/// Who a loop's new requests are offered to.
#[derive(ToSchema)]
#[schema(as = Assignment, example = json!({"strategy": "round_robin", "per_request": 2, "reassign_after_seconds": 900}))]
#[allow(dead_code)] // Describes assignments, which the domain reads and writes.
pub struct AssignmentSchema {
    /// `broadcast` (every active member), `round_robin` (the next
    /// `per_request` members in turn) or `least_loaded` (the
    /// `per_request` members with the fewest open requests).
    #[schema(value_type = String, pattern = "^(broadcast|round_robin|least_loaded)$")]
    strategy: String,
    /// Members each request is offered to (1 to 100; a quorum of M is
    /// offered to at least M).
    #[schema(minimum = 1, maximum = 100)]
    per_request: Option<i64>,
    /// Seconds unclaimed before it is also offered to the next members.
    #[schema(minimum = 1)]
    reassign_after_seconds: Option<i64>,
}

/// How far back a loop looks for the same question.
#[derive(ToSchema)]
#[schema(as = Window, example = json!({"window_seconds": 600}))]
#[allow(dead_code)] // Describes windows, which the domain reads and writes.
pub struct WindowSchema {
    /// Seconds, 1 to 2592000 (30 days).
    #[schema(minimum = 1, maximum = 2_592_000)]
    window_seconds: i64,
}

impl std::fmt::Debug for LoopPatchIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopPatchIn")
            .field("name", &self.name)
            .field(
                "slack_webhook_url",
                &self.slack_webhook_url.as_ref().map(|_| "<set>"),
            )
            .field("slack_app", &self.slack_app.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

/// A Slack app's settings (write only).
#[derive(ToSchema)]
#[schema(as = SlackApp, example = json!({"bot_token": "xoxb-...", "signing_secret": "8f74...", "channel": "C0123ABCD"}))]
#[allow(dead_code)]
pub struct SlackAppSchema {
    /// The app's bot token (`xoxb-...`), with `chat:write` and
    /// `users:read.email`.
    bot_token: String,
    /// The app's signing secret.
    signing_secret: String,
    /// The channel to post in: an id or `#name`.
    channel: String,
}

/// An invitation by email.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Invite)]
pub struct InviteIn {
    #[schema(value_type = String, format = Email)]
    pub email: Option<String>,
}

/// Joining a loop by its code.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Join)]
pub struct JoinIn {
    #[schema(value_type = String)]
    pub invite_code: Option<String>,
}

/// Which new requests the caller is told of.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NotifyPreference)]
pub struct NotifyIn {
    #[schema(value_type = schema::NotifyLevel)]
    pub notify: Option<String>,
}
