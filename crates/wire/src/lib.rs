//! reviewloop's messages on the wire: every request body, every answer of
//! both API surfaces and every event payload, as Rust types with serde
//! derives, kept apart from the domain (the domain decides what may be
//! seen; this crate decides the shape and the names). The OpenAPI document
//! is derived from these types ([`components`]), so it cannot describe a
//! shape the service does not send.
//!
//! `serde_json::Value` stands only where the wire is free-form: `context`,
//! `metadata`, an answer before it is checked against its
//! `response_config`, and the loosely read fields of bodies, which the
//! domain validates so that every mistake is named.

pub mod account;
pub mod alternate;
pub mod envelope;
pub mod events;
pub mod loops;
pub mod mcp;
mod present;
pub mod push;
pub mod requests;
pub mod schema;
pub mod webhooks;

use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// Every named schema of the API, with the schemas each refers to: what the
/// OpenAPI document's `components.schemas` holds besides the success
/// envelopes (which wrap these by name).
pub fn components() -> Vec<(String, RefOr<Schema>)> {
    let mut all = Vec::new();
    macro_rules! add {
        ($($ty:ty),+ $(,)?) => {
            $(
                all.push((<$ty as ToSchema>::name().into_owned(), <$ty as PartialSchema>::schema()));
                <$ty as ToSchema>::schemas(&mut all);
            )+
        };
    }
    add!(
        schema::Id,
        schema::Priority,
        schema::ProcessingType,
        schema::ContentType,
        schema::Platform,
        schema::RequestStatus,
        schema::ResponseType,
        schema::ReviewStatus,
        schema::EventType,
        schema::MemberStatus,
        schema::NotifyLevel,
        schema::Permission,
        schema::Plan,
        schema::QuorumRule,
        envelope::ErrorA<'static>,
        envelope::ErrorB<'static>,
        envelope::Meta,
        account::KeyCheckOut<'static>,
        account::SigningSecretOut<'static>,
        account::StatusOut,
        account::AuditLogOut<'static>,
        account::ReceiptKeysOut,
        account::TestClockOut,
        account::ClockAdvanceIn,
        loops::MemberOut<'static>,
        loops::QuorumSchema,
        loops::EscalationSchema,
        loops::RuleSchema,
        loops::LoopOut<'static>,
        loops::LoopInviteOut<'static>,
        loops::TeamOut<'static>,
        loops::LoopListOut<'static>,
        loops::OneLoopOut<'static>,
        loops::LoopDeletedOut,
        loops::MemberListOut<'static>,
        loops::LoopMemberOut<'static>,
        loops::JoinedOut<'static>,
        loops::MemberRemovedOut,
        loops::NewLoopIn,
        loops::LoopPatchIn,
        loops::InviteIn,
        loops::JoinIn,
        loops::NotifyIn,
        requests::RequestOut<'static>,
        requests::OneRequestOut<'static>,
        requests::CreatedRequestOut<'static>,
        requests::RequestPageOut<'static>,
        requests::InboxOut<'static>,
        requests::RequestCancelledOut,
        requests::FeedbackRecordedOut<'static>,
        requests::RulesTestOut<'static>,
        requests::AppliedRuleSchema,
        requests::NewRequestIn,
        requests::NewRequestInLoopIn,
        requests::RulesTestIn,
        requests::RequestPatchIn,
        requests::FeedbackIn,
        requests::AnswerIn,
        alternate::TemplateOut<'static>,
        alternate::ReviewOut<'static>,
        alternate::DeletedOut,
        alternate::NewTemplateIn,
        alternate::TemplatePatchIn,
        alternate::NewReviewIn,
        alternate::ReviewPatchIn,
        alternate::ReviewResultIn,
        alternate::NewTeamIn,
        webhooks::WebhookOut<'static>,
        webhooks::DeliveryOut<'static>,
        webhooks::OneWebhookOut<'static>,
        webhooks::WebhookListOut<'static>,
        webhooks::WebhookDeletedOut,
        webhooks::DeliveryListOut<'static>,
        webhooks::OneDeliveryOut<'static>,
        webhooks::NewWebhookIn,
        webhooks::WebhookPatchIn,
        push::VapidKeyOut,
        push::PushSubscriptionIn,
        push::PushSubscriptionOut<'static>,
        push::OnePushSubscriptionOut<'static>,
        push::PushSubscriptionListOut<'static>,
        push::PushSubscriptionDeletedOut,
        push::TestPushOut,
    );
    all
}
