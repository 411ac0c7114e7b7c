//! Review requests: what a workflow asks of humans, and everything that
//! happens to it until it ends completed, timed out or cancelled.

mod audience;
mod coalesce;
mod escalation;
pub(crate) mod input;
mod lifecycle;
mod offers;
mod patch;
mod statement;

pub use crate::quorum::{Answer, Quorum, QuorumRule, Response, MAX_QUORUM};
pub use crate::request_fields::{
    ContentType, Platform, Priority, ProcessingType, RequestStatus, DEFAULT_TIMEOUT_SECONDS,
};
pub use audience::Audience;
pub use coalesce::{QuestionKey, Window, MAX_COALESCE_KEY_CHARS};
pub use escalation::Escalation;
pub use input::{RequestInput, RequestPatch, ValidRequest};
pub use lifecycle::{ChangeError, ESCALATION_ROLE};
pub use offers::REASSIGNED_ROLE;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::account::Email;
use crate::id::{ApiKeyId, LoopId, RequestId, UserId};

/// One reviewer a request was sent to.
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcastEntry {
    /// The reviewer's account.
    pub user_id: UserId,
    /// The reviewer's email.
    pub email: Email,
    /// The reviewer's role in the loop; `member` for everyone today.
    pub role: String,
    /// Whether a notification reached the reviewer.
    pub notification_sent: bool,
    /// Why the notification failed, if it did.
    pub notification_error: Option<String>,
    /// The reviewer's answer to a request that needs a quorum (a request
    /// one reviewer decides keeps its answer in `response_data` instead).
    pub answer: Option<Answer>,
}

/// The answer a test request is given by itself.
#[derive(Debug, Clone, PartialEq)]
pub struct TestAnswer {
    /// The answer (`test_response`).
    pub response: Value,
    /// When, on the account's test clock: creation plus `test_delay_seconds`.
    pub at: DateTime<Utc>,
}

/// The requester's rating of a completed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    /// A number from 1 to 5.
    pub rating: Option<f64>,
    /// Free text.
    pub comment: Option<String>,
    /// How right the answer was, 1 to 5.
    pub accuracy: Option<f64>,
    /// How timely, 1 to 5.
    pub timeliness: Option<f64>,
    /// How helpful, 1 to 5.
    pub helpfulness: Option<f64>,
    /// Whether the requester would ask this reviewer again.
    pub would_recommend: Option<bool>,
    /// Whether the requester means to follow up.
    pub follow_up_needed: Option<bool>,
    /// Short labels of the requester's own.
    pub tags: Vec<String>,
    /// `positive`, `constructive` or `issue`.
    pub category: Option<String>,
    /// When the feedback was given.
    pub created_at: DateTime<Utc>,
}

/// What a requester says of an answer, unchecked: every part optional, at
/// least one given (the parts HITL.sh documents).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedbackInput {
    /// 1 to 5.
    pub rating: Option<f64>,
    /// At most 5000 characters.
    pub comment: Option<String>,
    /// 1 to 5.
    pub accuracy: Option<f64>,
    /// 1 to 5.
    pub timeliness: Option<f64>,
    /// 1 to 5.
    pub helpfulness: Option<f64>,
    /// Would ask again.
    pub would_recommend: Option<bool>,
    /// Will follow up.
    pub follow_up_needed: Option<bool>,
    /// At most 20 labels of 1 to 50 characters.
    pub tags: Option<Vec<String>>,
    /// `positive`, `constructive` or `issue`.
    pub category: Option<String>,
}

impl FeedbackInput {
    /// `previous` feedback with only its rating and comment replaced: what
    /// a form that shows just those two means, so the parts an automation
    /// gave through the API (accuracy, tags, ...) are kept.
    pub fn rating_and_comment(
        previous: Option<&Feedback>,
        rating: Option<f64>,
        comment: Option<String>,
    ) -> Self {
        let mut input = previous.map_or_else(Self::default, |f| Self {
            rating: None,
            comment: None,
            accuracy: f.accuracy,
            timeliness: f.timeliness,
            helpfulness: f.helpfulness,
            would_recommend: f.would_recommend,
            follow_up_needed: f.follow_up_needed,
            tags: (!f.tags.is_empty()).then(|| f.tags.clone()),
            category: f.category.clone(),
        });
        input.rating = rating;
        input.comment = comment;
        input
    }
}

/// The categories feedback may have.
pub const FEEDBACK_CATEGORIES: [&str; 3] = ["positive", "constructive", "issue"];

/// A review request's facts as a store keeps them: readable by anyone
/// (through [`ReviewRequest`], which dereferences to them), changed only
/// through [`ReviewRequest`]'s methods, which keep the state machine.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The request's id.
    pub id: RequestId,
    /// The loop it was sent to.
    pub loop_id: LoopId,
    /// The account that created it.
    pub creator_id: UserId,
    /// The key used to create it.
    pub api_key_id: Option<ApiKeyId>,
    /// `time-sensitive` or `deferred`.
    pub processing_type: ProcessingType,
    /// `markdown` or `image`.
    pub content_type: ContentType,
    /// How urgent it is.
    pub priority: Priority,
    /// What the reviewers are asked.
    pub request_text: String,
    /// The image to review, for `image` requests.
    pub image_url: Option<String>,
    /// Free-form data for reviewers.
    pub context: Option<Value>,
    /// Where the request came from.
    pub platform: Platform,
    /// Version of the sending platform.
    pub platform_version: Option<String>,
    /// What kind of answer is wanted.
    pub response_type: crate::response::ResponseType,
    /// Bounds of the answer, with defaults filled in.
    pub response_config: crate::response::RequestConfig,
    /// The answer used when nobody answers in time.
    pub default_response: Option<Value>,
    /// Seconds from creation to timeout.
    pub timeout_seconds: i64,
    /// When the request times out.
    pub timeout_at: DateTime<Utc>,
    /// URL called when the request completes or times out.
    pub callback_url: Option<String>,
    /// Free-form data for the requester, stored and returned as given.
    pub metadata: Option<Value>,
    /// Labels of the requester's own.
    pub tags: Vec<String>,
    /// The reviewers it was sent to.
    pub broadcasted_to: Vec<BroadcastEntry>,
    /// When it was sent.
    pub broadcasted_at: Option<DateTime<Utc>>,
    /// Where it stands.
    pub status: RequestStatus,
    /// Who holds the claim (kept after completion, for the record).
    pub claimed_by: Option<UserId>,
    /// When it was claimed.
    pub claimed_at: Option<DateTime<Utc>>,
    /// Who answered.
    pub response_by: Option<UserId>,
    /// When the final answer was set (by a reviewer or by the timeout).
    pub response_at: Option<DateTime<Utc>>,
    /// The final answer.
    pub response_data: Option<Value>,
    /// What the reviewer who decided it wrote with the answer.
    pub response_comment: Option<String>,
    /// Seconds from creation to a reviewer's answer.
    pub response_time_seconds: Option<f64>,
    /// When it was cancelled.
    pub cancelled_at: Option<DateTime<Utc>>,
    /// The requester's rating of the answer.
    pub feedback: Option<Feedback>,
    /// The signed statement of the decision, once there is one.
    pub receipt: Option<crate::receipt::Receipt>,
    /// How many reviewers must answer, and how their answers decide; none
    /// when the first answer decides.
    pub quorum: Option<Quorum>,
    /// Where it goes if nobody claims it in time.
    pub escalation: Option<Escalation>,
    /// When it escalated (once at most).
    pub escalated_at: Option<DateTime<Utc>>,
    /// The loops' rules that fired when it was created, in order: routes,
    /// then the rule that answered it or set its quorum, if any.
    pub applied_rules: Vec<crate::rules::AppliedRule>,
    /// What makes another request of its account and loop the same
    /// question (see [`QuestionKey`]), when it was made with one.
    pub coalesce_key: Option<QuestionKey>,
    /// Whether it takes in later requests with its key while it is open.
    pub coalescing: bool,
    /// The open request it joined, which it ends with.
    pub coalesced_into: Option<RequestId>,
    /// The earlier request whose answer it took when it was made.
    pub reused_from: Option<RequestId>,
    /// Seconds unclaimed before it is offered to more of its loop's
    /// members; none once it was offered to all of them, or when it went
    /// to every member at once.
    pub reassign_after_seconds: Option<i64>,
    /// When it was last offered to more members.
    pub offered_at: Option<DateTime<Utc>>,
    /// Made with a test-mode key: never sent to people, answered by
    /// `test_answer`, seen only by test-mode keys.
    pub test: bool,
    /// A test request's automatic answer and when it is given, on its
    /// account's test clock.
    pub test_answer: Option<TestAnswer>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Optimistic-concurrency counter: a store writes a change only if the
    /// stored version is still the one the change was made from.
    pub version: i64,
}

/// A review request: its record, which only the state machine's methods
/// change. Every fact is read through `Deref` to [`RequestRecord`]; there is
/// deliberately no `DerefMut`, so no caller can move a request into a state
/// its rules do not allow.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRequest {
    record: RequestRecord,
}

impl ReviewRequest {
    /// Marks a write: the store has bumped the stored version.
    pub fn written(&mut self) {
        self.record.version += 1;
    }
}

kept_in_record!(ReviewRequest, RequestRecord);

#[cfg(test)]
mod feedback_tests {
    use super::*;

    #[test]
    fn a_rating_and_comment_replace_only_themselves() {
        let previous = Feedback {
            rating: Some(2.0),
            comment: Some("slow".into()),
            accuracy: Some(4.0),
            timeliness: None,
            helpfulness: Some(3.0),
            would_recommend: Some(false),
            follow_up_needed: None,
            tags: vec!["late".into()],
            category: Some("issue".into()),
            created_at: DateTime::<Utc>::default(),
        };
        let input = FeedbackInput::rating_and_comment(Some(&previous), Some(5.0), None);
        assert_eq!(input.rating, Some(5.0));
        assert_eq!(input.comment, None, "a cleared comment is cleared");
        assert_eq!(input.accuracy, Some(4.0));
        assert_eq!(input.helpfulness, Some(3.0));
        assert_eq!(input.would_recommend, Some(false));
        assert_eq!(input.tags, Some(vec!["late".to_owned()]));
        assert_eq!(input.category.as_deref(), Some("issue"));
        let first = FeedbackInput::rating_and_comment(None, Some(4.0), Some("ok".into()));
        assert_eq!(
            first,
            FeedbackInput {
                rating: Some(4.0),
                comment: Some("ok".into()),
                ..FeedbackInput::default()
            }
        );
    }
}
