//! Schemas of the values the domain names itself (ids, priorities,
//! statuses): each is a string, and its allowed values are read from the
//! domain's own list, so a new priority appears in the document without an
//! edit here. Fields of the wire types point at them with
//! `#[schema(value_type = ...)]`.

use std::borrow::Cow;

use reviewloop_domain as domain;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// A string schema with `values` as its only allowed values.
fn one_of(values: impl IntoIterator<Item = &'static str>, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.into_iter().collect::<Vec<_>>()))
        .description(Some(description))
        .into()
}

macro_rules! named {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $schema:expr) => {
        $(#[$doc])*
        pub struct $ty;

        impl PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                $schema
            }
        }

        impl ToSchema for $ty {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    };
}

named!(
    /// An object's id.
    Id,
    "Id",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some("^[0-9a-f]{24}$"))
        .description(Some(
            "24 lowercase hexadecimal characters, ordered by creation time."
        ))
        .examples(["6743a1f09c1e4b2a8d3f5e61"])
        .into()
);

named!(
    /// How urgent a request is.
    Priority,
    "Priority",
    one_of(
        domain::Priority::ALL.iter().map(|p| p.as_str()),
        "How urgent the request is."
    )
);

named!(
    /// How a request is processed.
    ProcessingType,
    "ProcessingType",
    one_of(
        domain::ProcessingType::ALL.iter().map(|p| p.as_str()),
        "`time-sensitive` needs an answer within `timeout_seconds`; `deferred` can wait."
    )
);

named!(
    /// What reviewers look at.
    ContentType,
    "ContentType",
    one_of(
        domain::ContentType::ALL.iter().map(|c| c.as_str()),
        "What reviewers look at: Markdown text, or an image at `image_url`."
    )
);

named!(
    /// Where a request comes from.
    Platform,
    "Platform",
    one_of(
        domain::Platform::ALL.iter().map(|p| p.as_str()),
        "The kind of workflow that sent the request."
    )
);

named!(
    /// Where a request stands.
    RequestStatus,
    "RequestStatus",
    one_of(
        domain::RequestStatus::ALL.iter().map(|s| s.as_str()),
        "Where the request stands."
    )
);

named!(
    /// What kind of answer a request wants.
    ResponseType,
    "ResponseType",
    one_of(
        domain::ResponseType::ALL.iter().map(|r| r.as_str()),
        "What kind of answer the request wants."
    )
);

named!(
    /// Where a review stands.
    ReviewStatus,
    "ReviewStatus",
    one_of(
        domain::ReviewStatus::ALL.iter().map(|s| s.as_str()),
        "Where the review stands."
    )
);

named!(
    /// What happened.
    EventType,
    "EventType",
    one_of(
        domain::EventType::ALL.iter().map(|e| e.as_str()),
        "What happened."
    )
);

named!(
    /// A member's place in a loop.
    MemberStatus,
    "MemberStatus",
    one_of(
        [
            domain::MemberStatus::Pending,
            domain::MemberStatus::Active,
            domain::MemberStatus::Removed,
        ]
        .map(|s| s.as_str()),
        "`pending` until the invited person joins; `removed` after leaving."
    )
);

named!(
    /// Which new requests a member is told of.
    NotifyLevel,
    "NotifyLevel",
    one_of(
        domain::NotifyLevel::ALL.iter().map(|n| n.as_str()),
        "Which new requests the member is told of: every one, high and critical only, or none."
    )
);

named!(
    /// A key's permissions.
    Permission,
    "Permission",
    one_of(
        domain::Permission::ALL.iter().map(|p| p.as_str()),
        "What a key may do."
    )
);

named!(
    /// A key's plan on the alternate surface.
    Plan,
    "Plan",
    one_of(
        domain::Plan::ALL.iter().map(|p| p.as_str()),
        "The per-minute allowance of the alternate surface."
    )
);

named!(
    /// How a quorum's answers decide.
    QuorumRule,
    "QuorumRule",
    one_of(
        domain::QuorumRule::ALL.iter().map(|r| r.as_str()),
        "`all_agree`: `count` reviewers gave the same answer; `majority`: `count` answers are in and one is the most common."
    )
);
