//! reviewloop's domain: the entities of a human review service, their
//! identifiers, the rules that keep them valid and the state machines that
//! move them. Pure: no IO, no clock, no randomness and no async. Callers pass
//! in the current time and random bytes, so every rule here is deterministic
//! and can be reused by other Rust services.
//!
//! The crate's README, with a runnable example, follows.
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

#[macro_use]
mod macros;

// The modules are private: every public name is reached by one path, from
// the crate root.
mod account;
mod answer_link;
mod assignment;
mod audit;
mod error;
mod event;
mod form;
mod id;
mod member;
mod notice;
mod person;
mod push;
mod quorum;
mod receipt;
mod request;
mod request_fields;
mod response;
mod retry;
mod review;
mod review_loop;
mod rules;
mod slack_app;
mod template;
mod text;
mod webhook;

pub use account::{
    AccountStatus, ApiKey, ApiKeyRecord, Email, NewApiKey, Permission, Plan, User, UserRecord,
};
pub use answer_link::{one_click_answers, AnswerLink, MAX_ONE_CLICK_OPTIONS};
pub use assignment::{Assignment, Strategy, MAX_PER_REQUEST};
pub use audit::{verify_chain, AuditEntry, AuditRecord, ChainBreak};
pub use error::{FieldError, TransitionError, ValidationError};
pub use event::{Event, EventFacts, EventType};
pub use form::{Field, FieldKind, Form, MAX_FIELDS};
pub use id::{
    ApiKeyId, DeliveryId, EventId, InvalidId, LoopId, NoticeId, ObjectId, PushSubscriptionId,
    RequestId, ReviewId, TemplateId, UserId, WebhookId,
};
pub use member::{Member, MemberRecord, MemberStatus};
pub use notice::{
    Channel, Message, NewNotice, Notice, NoticeKind, NoticeRecord, NoticeStatus, NotifyLevel,
};
pub use person::Password;
pub use push::{
    device_name, push_ttl, push_urgency, NewPushSubscription, PushPayload, PushSubscription,
    VapidKey, MAX_DEVICE_CHARS, MAX_ENDPOINT_CHARS, MAX_PUSH_TTL_SECONDS,
};
pub use receipt::Receipt;
pub use receipt::{sha256_hex, RECEIPT_ALG};
pub use request::{
    Answer, Audience, BroadcastEntry, ChangeError, ContentType, Escalation, Feedback,
    FeedbackInput, Platform, Priority, ProcessingType, QuestionKey, Quorum, QuorumRule,
    RequestInput, RequestPatch, RequestRecord, RequestStatus, Response, ReviewRequest, TestAnswer,
    Window, ESCALATION_ROLE, MAX_COALESCE_KEY_CHARS, REASSIGNED_ROLE,
};
pub use request::{ValidRequest, DEFAULT_TIMEOUT_SECONDS, MAX_QUORUM};
pub use response::{
    plain_words, RequestConfig, ResponseConfig, ResponseType, ReviewerHints, SelectOption,
};
pub use retry::{parse_retry_schedule, DEFAULT_RETRY_SCHEDULE};
pub use review::parse_assignees;
pub use review::{
    AssigneeRef, ParsedReview, Review, ReviewInput, ReviewPatch, ReviewRecord, ReviewStatus,
    Reviewer,
};
pub use review_loop::{parse_slack_webhook_url, NewLoop};
pub use review_loop::{Icon, InviteCode, Loop, LoopDescription, LoopName, LoopRecord};
pub use rules::{Action, AppliedRule, Facts, Operator, Rule, Rules, MAX_RULES};
pub use slack_app::SlackApp;
pub use template::{Template, TemplateInput, TemplatePatch};
pub use text::{parse_comment, MAX_COMMENT_CHARS};
pub use webhook::{parse_description, parse_secret, parse_target_url};
pub use webhook::{
    AttemptOutcome, Delivery, DeliveryAttempt, DeliveryRecord, DeliveryStatus, DeliveryTarget,
    EventFilter, NewWebhook, Webhook, WebhookChange, WebhookRecord,
};
