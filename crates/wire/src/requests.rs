//! Review requests as one audience may see them, the answers around them,
//! and the bodies that make and change them. The domain decides what each
//! audience sees ([`Audience`]); this module decides the shape.

use chrono::{DateTime, Utc};
use reviewloop_domain::{
    ApiKeyId, Audience, BroadcastEntry, Feedback, LoopId, Quorum, Receipt, RequestId,
    ReviewRequest, UserId, RECEIPT_ALG,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::loops::{EscalationSchema, QuorumSchema};
use crate::present::present;
use crate::schema;

/// One reviewer a request was sent to.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = BroadcastEntry)]
pub struct BroadcastOut<'a> {
    #[schema(value_type = schema::Id)]
    pub user_id: UserId,
    pub email: &'a str,
    /// `member`, or `escalation` for a reviewer of the loop it escalated to.
    #[schema(value_type = String)]
    pub role: &'a str,
    pub notification_sent: bool,
    pub notification_error: Option<&'a str>,
}

impl<'a> BroadcastOut<'a> {
    fn of(e: &'a BroadcastEntry) -> Self {
        Self {
            user_id: e.user_id,
            email: e.email.as_str(),
            role: e.role.as_str(),
            notification_sent: e.notification_sent,
            notification_error: e.notification_error.as_deref(),
        }
    }
}

/// One reviewer's answer to a quorum request.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ReviewerAnswer)]
pub struct ReviewerAnswerOut<'a> {
    #[schema(value_type = schema::Id)]
    pub user_id: UserId,
    pub email: &'a str,
    pub response_data: &'a Value,
    pub response_at: DateTime<Utc>,
    /// What the reviewer wrote with the answer.
    pub comment: Option<&'a str>,
}

/// A request's quorum with how many answers are in.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = QuorumState)]
pub struct QuorumStateOut {
    pub count: u32,
    #[schema(value_type = schema::QuorumRule)]
    pub rule: &'static str,
    pub exclude_requester: bool,
    /// How many reviewers have answered.
    pub answered: usize,
}

impl QuorumStateOut {
    fn of(quorum: &Quorum, answered: usize) -> Self {
        Self {
            count: quorum.count,
            rule: quorum.rule.as_str(),
            exclude_requester: quorum.exclude_requester,
            answered,
        }
    }
}

/// The requester's feedback on a request.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Feedback)]
pub struct FeedbackOut<'a> {
    pub rating: Option<f64>,
    pub comment: Option<&'a str>,
    pub accuracy: Option<f64>,
    pub timeliness: Option<f64>,
    pub helpfulness: Option<f64>,
    pub would_recommend: Option<bool>,
    pub follow_up_needed: Option<bool>,
    pub tags: &'a [String],
    pub category: Option<&'a str>,
    pub created_at: DateTime<Utc>,
}

impl<'a> FeedbackOut<'a> {
    /// `f` as shown.
    pub fn of(f: &'a Feedback) -> Self {
        Self {
            rating: f.rating,
            comment: f.comment.as_deref(),
            accuracy: f.accuracy,
            timeliness: f.timeliness,
            helpfulness: f.helpfulness,
            would_recommend: f.would_recommend,
            follow_up_needed: f.follow_up_needed,
            tags: &f.tags,
            category: f.category.as_deref(),
            created_at: f.created_at,
        }
    }
}

/// A decision receipt, with the scheme it uses.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Receipt)]
pub struct ReceiptOut<'a> {
    /// Always `Ed25519`.
    pub alg: &'static str,
    /// The key at `/v1/receipts/keys` that signed.
    pub key_id: &'a str,
    /// base64url (no padding) of the canonical JSON statement: request_id,
    /// loop_id, status, response_data, response_by, response_at,
    /// request_text_sha256.
    pub signed: &'a str,
    /// base64url (no padding) of the Ed25519 signature of the `signed` bytes.
    pub signature: &'a str,
}

impl<'a> ReceiptOut<'a> {
    fn of(receipt: &'a Receipt) -> Self {
        Self {
            alg: RECEIPT_ALG,
            key_id: &receipt.key_id,
            signed: &receipt.signed,
            signature: &receipt.signature,
        }
    }
}

/// A rule that fired, and what it did.
#[derive(Debug, ToSchema)]
#[schema(as = AppliedRule)]
#[allow(dead_code)] // Describes the domain's own `AppliedRule::to_value`.
pub struct AppliedRuleSchema {
    #[schema(value_type = schema::Id)]
    loop_id: String,
    rule_id: String,
    #[schema(value_type = Object)]
    then: Value,
}

/// A review request as one audience may see it. `api_key_id`,
/// `callback_url`, `metadata`, `tags` and `applied_rules` are shown to its
/// requester only.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Request)]
pub struct RequestOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: RequestId,
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
    #[schema(value_type = schema::Id)]
    pub creator_id: UserId,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<schema::Id>)]
    pub api_key_id: Option<Option<ApiKeyId>>,
    #[schema(value_type = schema::ProcessingType)]
    pub processing_type: &'static str,
    #[serde(rename = "type")]
    #[schema(value_type = schema::ContentType)]
    pub content_type: &'static str,
    #[schema(value_type = schema::Priority)]
    pub priority: &'static str,
    pub request_text: &'a str,
    pub image_url: Option<&'a str>,
    pub context: &'a Option<Value>,
    #[schema(value_type = schema::Platform)]
    pub platform: &'static str,
    pub platform_version: Option<&'a str>,
    #[schema(value_type = schema::ResponseType)]
    pub response_type: &'static str,
    #[schema(value_type = Object)]
    pub response_config: &'a Value,
    pub default_response: &'a Option<Value>,
    pub timeout_seconds: i64,
    pub timeout_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub callback_url: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<&'a Option<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<&'a [String]>,
    pub broadcasted_to: Vec<BroadcastOut<'a>>,
    pub broadcasted_at: Option<DateTime<Utc>>,
    #[schema(value_type = schema::RequestStatus)]
    pub status: &'static str,
    #[schema(value_type = Option<schema::Id>)]
    pub claimed_by: Option<UserId>,
    pub claimed_at: Option<DateTime<Utc>>,
    #[schema(value_type = Option<schema::Id>)]
    pub response_by: Option<UserId>,
    pub response_at: Option<DateTime<Utc>>,
    pub response_data: &'a Option<Value>,
    /// What the reviewer who decided it wrote with the answer.
    pub response_comment: Option<&'a str>,
    pub response_time_seconds: Option<f64>,
    pub quorum: Option<QuorumStateOut>,
    /// Every answer, oldest first; a reviewer sees only its own.
    pub responses: Vec<ReviewerAnswerOut<'a>>,
    #[schema(value_type = Option<EscalationSchema>)]
    pub escalation: Option<Value>,
    pub escalated_at: Option<DateTime<Utc>>,
    pub decided_by_rule: Option<&'a str>,
    /// Made with a test-mode key: answered by its `test_response` on the
    /// test clock, never by people.
    pub test: bool,
    /// The loops' rules that fired at creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<AppliedRuleSchema>>)]
    pub applied_rules: Option<Vec<Value>>,
    /// What made another request the same question: the `coalesce_key`
    /// given, or `sha256:` and the hash of the question when its loop
    /// coalesces or reuses answers. Shown to its requester only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub coalesce_key: Option<Option<&'a str>>,
    /// The open request it joined, which it ends with.
    #[schema(value_type = Option<schema::Id>)]
    pub coalesced_into: Option<RequestId>,
    /// The request whose answer it took when it was made.
    #[schema(value_type = Option<schema::Id>)]
    pub reused_from: Option<RequestId>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub feedback: Option<FeedbackOut<'a>>,
    pub receipt: Option<ReceiptOut<'a>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl<'a> RequestOut<'a> {
    /// `request` as `viewer` may see it (its creator sees everything).
    pub fn for_viewer(request: &'a ReviewRequest, viewer: &'a UserId) -> Self {
        Self::as_seen_by(request, request.audience_of(viewer))
    }

    /// `request` whole, as its requester, its webhooks and its events see it.
    pub fn whole(request: &'a ReviewRequest) -> Self {
        Self::as_seen_by(request, Audience::Requester)
    }

    fn as_seen_by(r: &'a ReviewRequest, audience: Audience<'a>) -> Self {
        let private = audience.sees_requester_fields();
        let responses = r.responses();
        let answered = responses.len();
        Self {
            id: r.id,
            loop_id: r.loop_id,
            creator_id: r.creator_id,
            api_key_id: private.then_some(r.api_key_id),
            processing_type: r.processing_type.as_str(),
            content_type: r.content_type.as_str(),
            priority: r.priority.as_str(),
            request_text: &r.request_text,
            image_url: r.image_url.as_deref(),
            context: &r.context,
            platform: r.platform.as_str(),
            platform_version: r.platform_version.as_deref(),
            response_type: r.response_type.as_str(),
            response_config: r.response_config.as_value(),
            default_response: &r.default_response,
            timeout_seconds: r.timeout_seconds,
            timeout_at: r.timeout_at,
            callback_url: private.then_some(r.callback_url.as_deref()),
            metadata: private.then_some(&r.metadata),
            tags: private.then_some(r.tags.as_slice()),
            broadcasted_to: r
                .broadcasted_to
                .iter()
                .filter(|e| audience.sees_entry(e))
                .map(BroadcastOut::of)
                .collect(),
            broadcasted_at: r.broadcasted_at,
            status: r.status.as_str(),
            claimed_by: r.claimed_by,
            claimed_at: r.claimed_at,
            response_by: r.response_by,
            response_at: r.response_at,
            response_data: &r.response_data,
            response_comment: r.response_comment.as_deref(),
            response_time_seconds: r.response_time_seconds,
            quorum: r.quorum.as_ref().map(|q| QuorumStateOut::of(q, answered)),
            // A reviewer sees only its own answer, so no answer leans on
            // another's.
            responses: responses
                .into_iter()
                .filter(|a| match audience {
                    Audience::Reviewer(viewer) => a.user_id == *viewer,
                    _ => true,
                })
                .map(|a| ReviewerAnswerOut {
                    user_id: a.user_id,
                    email: a.email.as_str(),
                    response_data: a.response_data,
                    response_at: a.response_at,
                    comment: a.comment,
                })
                .collect(),
            escalation: r.escalation.map(|e| e.to_value()),
            escalated_at: r.escalated_at,
            decided_by_rule: r.decided_by_rule(),
            test: r.test,
            applied_rules: private.then(|| r.applied_rules.iter().map(|a| a.to_value()).collect()),
            coalesce_key: private.then(|| r.coalesce_key.as_ref().map(|k| k.as_str())),
            coalesced_into: r.coalesced_into,
            reused_from: r.reused_from,
            cancelled_at: r.cancelled_at,
            feedback: r.feedback.as_ref().map(FeedbackOut::of),
            receipt: r.receipt.as_ref().map(ReceiptOut::of),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// `{"request": ...}`: the answer of every single-request operation.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = OneRequest)]
pub struct OneRequestOut<'a> {
    pub request: RequestOut<'a>,
}

/// What a create answers: the request and, beside it, the fields HITL.sh
/// clients read at the top level (and `id`, which some read instead of
/// `request_id`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CreatedRequest)]
pub struct CreatedRequestOut<'a> {
    pub request: RequestOut<'a>,
    #[schema(value_type = schema::Id)]
    pub request_id: RequestId,
    #[schema(value_type = schema::Id)]
    pub id: RequestId,
    #[schema(value_type = schema::RequestStatus)]
    pub status: &'static str,
    #[schema(value_type = schema::ProcessingType)]
    pub processing_type: &'static str,
    #[serde(rename = "type")]
    #[schema(value_type = schema::ContentType)]
    pub content_type: &'static str,
    #[schema(value_type = schema::Priority)]
    pub priority: &'static str,
    pub timeout_at: DateTime<Utc>,
    pub polling_url: &'a str,
    /// How many reviewers were told.
    pub broadcasted_to: usize,
    pub notifications_sent: usize,
}

impl<'a> CreatedRequestOut<'a> {
    /// The answer to creating `r`, polled at `polling_url`.
    pub fn of(r: &'a ReviewRequest, polling_url: &'a str) -> Self {
        Self {
            request: RequestOut::whole(r),
            request_id: r.id,
            id: r.id,
            status: r.status.as_str(),
            processing_type: r.processing_type.as_str(),
            content_type: r.content_type.as_str(),
            priority: r.priority.as_str(),
            timeout_at: r.timeout_at,
            polling_url,
            broadcasted_to: r.broadcasted_to.len(),
            notifications_sent: r
                .broadcasted_to
                .iter()
                .filter(|b| b.notification_sent)
                .count(),
        }
    }
}

/// Where the next page starts, as HITL.sh's guides page.
#[derive(Debug, Serialize, ToSchema)]
pub struct Pagination {
    pub limit: u32,
    pub offset: u32,
    /// `null` on the last page.
    pub next_offset: Option<u64>,
}

/// A page of requests with its paging facts.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RequestPage)]
pub struct RequestPageOut<'a> {
    pub requests: Vec<RequestOut<'a>>,
    pub count: usize,
    pub total: u64,
    pub has_more: bool,
    pub limit: u32,
    pub offset: u32,
    pub pagination: Pagination,
    /// The loop, when the page is of one loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<schema::Id>)]
    pub loop_id: Option<LoopId>,
}

impl<'a> RequestPageOut<'a> {
    /// `requests` of `total`, from `offset`.
    pub fn of(requests: &'a [ReviewRequest], total: u64, limit: u32, offset: u32) -> Self {
        let count = requests.len();
        let has_more = u64::from(offset) + (count as u64) < total;
        Self {
            requests: requests.iter().map(RequestOut::whole).collect(),
            count,
            total,
            has_more,
            limit,
            offset,
            pagination: Pagination {
                limit,
                offset,
                next_offset: has_more.then(|| u64::from(offset) + count as u64),
            },
            loop_id: None,
        }
    }
}

/// The reviewer's inbox page.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Inbox)]
pub struct InboxOut<'a> {
    pub count: usize,
    pub requests: Vec<RequestOut<'a>>,
}

impl<'a> InboxOut<'a> {
    /// `requests` as `viewer` sees them.
    pub fn of(requests: &'a [ReviewRequest], viewer: &'a UserId) -> Self {
        Self {
            count: requests.len(),
            requests: requests
                .iter()
                .map(|r| RequestOut::for_viewer(r, viewer))
                .collect(),
        }
    }
}

/// A cancelled request.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RequestCancelled)]
pub struct RequestCancelledOut {
    #[schema(value_type = schema::Id)]
    pub request_id: RequestId,
    #[schema(value_type = schema::RequestStatus)]
    pub status: &'static str,
}

/// Feedback just recorded.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = FeedbackRecorded)]
pub struct FeedbackRecordedOut<'a> {
    #[schema(value_type = schema::Id)]
    pub request_id: RequestId,
    pub feedback: Option<FeedbackOut<'a>>,
}

/// A loop that a rule's route stepped over, and why.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PassedOver)]
pub struct PassedOverOut<'a> {
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
    pub rule_id: &'a str,
    pub reason: &'a str,
}

/// What a loop's rules would do with a sample request.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RulesTest)]
pub struct RulesTestOut<'a> {
    pub fires: bool,
    #[schema(value_type = Option<AppliedRuleSchema>)]
    pub rule: Option<Value>,
    #[schema(value_type = Vec<AppliedRuleSchema>)]
    pub applied_rules: Vec<Value>,
    #[schema(value_type = schema::Id)]
    pub loop_id: LoopId,
    pub loop_name: &'a str,
    /// `people`, `answer` or `quorum`.
    pub outcome: &'static str,
    pub response_data: Value,
    #[schema(value_type = Option<QuorumSchema>)]
    pub quorum: Value,
    pub passed_over: Vec<PassedOverOut<'a>>,
    /// One sentence on what would happen.
    pub summary: String,
}

/// The fields of a new request. Each is read loosely and checked by the
/// domain, so an answer names every mistake at once; the schema says what
/// is accepted.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(as = RequestFields)]
pub struct RequestFieldsIn {
    #[schema(value_type = String, min_length = 1, max_length = 2000)]
    pub request_text: Option<String>,
    #[serde(rename = "type")]
    #[schema(value_type = schema::ContentType)]
    pub content_type: Option<String>,
    /// Required when `type` is `image`.
    pub image_url: Option<String>,
    #[schema(value_type = schema::ResponseType)]
    pub response_type: Option<String>,
    /// Depends on `response_type`: `options` for selects (strings or
    /// `{value, label, description, color}` objects), `scale_max`/
    /// `scale_step` for ratings, `min_value`/`max_value` for numbers,
    /// `max_length` for text.
    #[schema(value_type = Object)]
    pub response_config: Option<Value>,
    #[schema(value_type = schema::Priority)]
    pub priority: Option<String>,
    #[schema(value_type = schema::ProcessingType)]
    pub processing_type: Option<String>,
    /// Required when `processing_type` is `time-sensitive`.
    #[schema(value_type = Option<i64>, minimum = 60, maximum = 2_592_000)]
    pub timeout_seconds: Option<Value>,
    /// The answer that stands when nobody answers in time; it must fit
    /// `response_config`.
    #[schema(value_type = Value)]
    pub default_response: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub context: Option<Value>,
    #[schema(value_type = Option<schema::Platform>)]
    pub platform: Option<String>,
    pub platform_version: Option<String>,
    /// Where the answer is POSTed (http or https).
    pub callback_url: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
    #[schema(value_type = Option<Vec<String>>)]
    pub tags: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<QuorumSchema>)]
    pub quorum: Option<Value>,
    /// Whether the requester is kept from answering (default true); also
    /// applies to the loop's default quorum.
    #[schema(value_type = Option<bool>)]
    pub exclude_requester: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<EscalationSchema>)]
    pub escalation: Option<Value>,
    /// Test-mode keys only: the answer the request gets by itself (it must
    /// fit `response_config`); without it a test request waits for its
    /// timeout on the test clock.
    pub test_response: Option<Value>,
    /// Test-mode keys only: seconds on the test clock before
    /// `test_response` is given (default 0: at once).
    #[schema(value_type = Option<i64>, minimum = 0)]
    pub test_delay_seconds: Option<Value>,
    /// 1 to 200 characters: while a request of the same account and loop
    /// with this key is open, this one joins it instead of asking people
    /// again, and ends when it ends, the same way.
    #[schema(value_type = Option<String>, min_length = 1, max_length = 200)]
    pub coalesce_key: Option<String>,
}

impl RequestFieldsIn {
    /// The fields as the domain validates them.
    pub fn into_input(self) -> reviewloop_domain::RequestInput {
        reviewloop_domain::RequestInput {
            request_text: self.request_text,
            content_type: self.content_type,
            image_url: self.image_url,
            response_type: self.response_type,
            response_config: self.response_config,
            priority: self.priority,
            processing_type: self.processing_type,
            timeout_seconds: self.timeout_seconds,
            default_response: self.default_response,
            context: self.context,
            platform: self.platform,
            platform_version: self.platform_version,
            callback_url: self.callback_url,
            metadata: self.metadata,
            tags: self.tags,
            quorum: self.quorum,
            exclude_requester: self.exclude_requester,
            escalation: self.escalation,
            test_response: self.test_response,
            test_delay_seconds: self.test_delay_seconds,
            coalesce_key: self.coalesce_key,
        }
    }
}

/// A new request in a loop named in the path; a `loop_id` here must agree.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewRequestInLoop, example = json!({
    "request_text": "Publish this reply to the customer?",
    "type": "markdown",
    "response_type": "single_select",
    "response_config": {"options": [
        {"value": "approve", "label": "Approve", "color": "#16a34a"},
        {"value": "reject", "label": "Reject", "color": "#dc2626"}
    ]},
    "priority": "high",
    "processing_type": "time-sensitive",
    "timeout_seconds": 3600,
    "default_response": "reject",
    "platform": "api",
}))]
pub struct NewRequestInLoopIn {
    #[schema(value_type = Option<schema::Id>)]
    pub loop_id: Option<String>,
    #[serde(flatten)]
    pub fields: RequestFieldsIn,
}

/// A new request.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewRequest, example = json!({
    "loop_id": "6743a1f09c1e4b2a8d3f5e61",
    "request_text": "Publish this reply to the customer?",
    "type": "markdown",
    "response_type": "single_select",
    "response_config": {"options": [
        {"value": "approve", "label": "Approve", "color": "#16a34a"},
        {"value": "reject", "label": "Reject", "color": "#dc2626"}
    ]},
    "priority": "high",
    "processing_type": "time-sensitive",
    "timeout_seconds": 3600,
    "default_response": "reject",
    "platform": "api",
}))]
pub struct NewRequestIn {
    #[schema(value_type = schema::Id)]
    pub loop_id: Option<String>,
    #[serde(flatten)]
    pub fields: RequestFieldsIn,
}

/// A sample request, and rules to try in place of the loop's saved ones.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = RulesTestInput, example = json!({
    "request_text": "Refund order 1234?", "type": "markdown",
    "response_type": "boolean", "priority": "low", "processing_type": "deferred",
    "context": {"amount": 20},
}))]
pub struct RulesTestIn {
    #[serde(flatten)]
    pub sample: NewRequestInLoopIn,
    /// Rules to try instead of the loop's saved ones.
    #[schema(value_type = Option<Vec<crate::loops::RuleSchema>>)]
    pub rules: Option<Value>,
}

/// A change to a pending request; what is absent stays.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = RequestPatch)]
pub struct RequestPatchIn {
    pub request_text: Option<String>,
    #[schema(value_type = Option<schema::Priority>)]
    pub priority: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub context: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub response_config: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub default_response: Option<Value>,
    #[schema(value_type = Option<i64>)]
    pub timeout_seconds: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>)]
    pub tags: Option<Value>,
    #[schema(value_type = Option<schema::Platform>)]
    pub platform: Option<String>,
    /// A new callback URL; `null` removes it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub callback_url: Option<Value>,
    /// Accepted when it is the request's own; any other is refused (400).
    #[schema(value_type = Option<schema::ProcessingType>)]
    pub processing_type: Option<String>,
    /// Accepted when it is the request's own; any other is refused (400).
    #[schema(value_type = Option<schema::ResponseType>)]
    pub response_type: Option<String>,
}

/// The requester's feedback.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(as = FeedbackFields)]
pub struct FeedbackFieldsIn {
    #[schema(minimum = 1, maximum = 5)]
    pub rating: Option<f64>,
    pub comment: Option<String>,
    pub accuracy: Option<f64>,
    pub timeliness: Option<f64>,
    pub helpfulness: Option<f64>,
    pub would_recommend: Option<bool>,
    pub follow_up_needed: Option<bool>,
    pub tags: Option<Vec<String>>,
    pub category: Option<String>,
}

impl FeedbackFieldsIn {
    /// The fields as the domain checks them.
    pub fn into_input(self) -> reviewloop_domain::FeedbackInput {
        reviewloop_domain::FeedbackInput {
            rating: self.rating,
            comment: self.comment,
            accuracy: self.accuracy,
            timeliness: self.timeliness,
            helpfulness: self.helpfulness,
            would_recommend: self.would_recommend,
            follow_up_needed: self.follow_up_needed,
            tags: self.tags,
            category: self.category,
        }
    }
}

/// The feedback's fields at the top level, or inside `feedback`
/// (HITL.sh's form).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = FeedbackInput, example = json!({"rating": 5, "comment": "Quick and right"}))]
pub struct FeedbackIn {
    #[serde(flatten)]
    pub top: FeedbackFieldsIn,
    pub feedback: Option<FeedbackFieldsIn>,
}

/// A reviewer's answer.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Answer, example = json!({"response_data": "approve", "comment": "Checked the amount against the invoice"}))]
pub struct AnswerIn {
    /// Fits the request's response type: a string, an array of strings, a
    /// number or a boolean.
    #[schema(value_type = Value)]
    pub response_data: Option<Value>,
    /// A note for the requester, up to 2,000 characters; blank is none.
    #[serde(default)]
    pub comment: Option<String>,
}
