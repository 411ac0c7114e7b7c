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

pub mod account;
pub mod audit;
pub mod error;
pub mod event;
pub mod form;
pub mod id;
pub mod member;
pub mod notice;
pub mod person;
pub mod receipt;
pub mod request;
pub mod response;
pub mod review;
pub mod review_loop;
pub mod rules;
pub mod template;
mod text;
pub mod webhook;

pub use account::{
    AccountStatus, ApiKey, ApiKeyRecord, Email, NewApiKey, Permission, Plan, User, UserRecord,
};
pub use audit::{AuditEntry, AuditRecord, ChainBreak};
pub use error::{FieldError, TransitionError, ValidationError};
pub use event::{Event, EventType};
pub use form::{Field, FieldKind, Form};
pub use id::{
    ApiKeyId, DeliveryId, EventId, InvalidId, LoopId, NoticeId, ObjectId, RequestId, ReviewId,
    TemplateId, UserId, WebhookId,
};
pub use member::{Member, MemberRecord, MemberStatus};
pub use notice::{
    Channel, Message, NewNotice, Notice, NoticeKind, NoticeRecord, NoticeStatus, NotifyLevel,
};
pub use person::Password;
pub use receipt::Receipt;
pub use request::{
    Answer, Audience, BroadcastEntry, ChangeError, ContentType, Escalation, Feedback,
    FeedbackInput, Platform, Priority, ProcessingType, Quorum, QuorumRule, RequestInput,
    RequestPatch, RequestRecord, RequestStatus, Response, ReviewRequest, TestAnswer,
    ESCALATION_ROLE,
};
pub use response::{ResponseConfig, ResponseType, ReviewerHints, SelectOption};
pub use review::{
    AssigneeRef, ParsedReview, Review, ReviewInput, ReviewPatch, ReviewRecord, ReviewStatus,
    Reviewer,
};
pub use review_loop::{Icon, InviteCode, Loop, LoopDescription, LoopName, LoopRecord};
pub use rules::{Action, AppliedRule, Facts, Rule, Rules};
pub use template::{Template, TemplateInput, TemplatePatch};
pub use webhook::{
    AttemptOutcome, Delivery, DeliveryAttempt, DeliveryRecord, DeliveryStatus, DeliveryTarget,
    EventFilter, NewWebhook, Webhook, WebhookChange, WebhookRecord,
};
