//! How a request is shown, and to whom. The requester sees all of it. A
//! reviewer sees what it needs to answer: not the requester-only fields
//! (where the answer goes, since a callback URL often carries a token; the
//! requester's own metadata; the key it used), and of the broadcast only
//! its own entry, not the other reviewers' addresses.
//!
//! Serialized straight from the borrowed request, with no intermediate
//! JSON tree.

use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::{BroadcastEntry, ReviewRequest};
use crate::id::UserId;

/// Who looks at a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience<'a> {
    /// The account that created it: everything.
    Requester,
    /// A reviewer: no requester-only fields, only its own broadcast entry.
    Reviewer(&'a UserId),
}

/// A request as one audience may see it.
#[derive(Debug, Clone, Copy)]
pub struct RequestView<'a> {
    request: &'a ReviewRequest,
    audience: Audience<'a>,
}

impl ReviewRequest {
    /// This request as `viewer` may see it (its creator sees everything).
    pub fn view_for<'a>(&'a self, viewer: &'a UserId) -> RequestView<'a> {
        let audience = if self.creator_id == *viewer {
            Audience::Requester
        } else {
            Audience::Reviewer(viewer)
        };
        RequestView {
            request: self,
            audience,
        }
    }

    /// This request whole, as its requester and its webhooks see it.
    pub fn full_view(&self) -> RequestView<'_> {
        RequestView {
            request: self,
            audience: Audience::Requester,
        }
    }
}

/// The broadcast entries an audience sees.
struct Broadcasts<'a>(&'a [BroadcastEntry], Audience<'a>);

impl Serialize for Broadcasts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let shown = |entry: &&BroadcastEntry| match self.1 {
            Audience::Requester => true,
            Audience::Reviewer(viewer) => entry.user_id == *viewer,
        };
        let mut seq = serializer.serialize_seq(None)?;
        for entry in self.0.iter().filter(shown) {
            seq.serialize_element(entry)?;
        }
        seq.end()
    }
}

impl Serialize for RequestView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.request;
        let requester = self.audience == Audience::Requester;
        let mut s = serializer.serialize_struct("ReviewRequest", 33)?;
        s.serialize_field("id", &r.id)?;
        s.serialize_field("loop_id", &r.loop_id)?;
        s.serialize_field("creator_id", &r.creator_id)?;
        if requester {
            s.serialize_field("api_key_id", &r.api_key_id)?;
        } else {
            s.skip_field("api_key_id")?;
        }
        s.serialize_field("processing_type", &r.processing_type)?;
        s.serialize_field("type", &r.content_type)?;
        s.serialize_field("priority", &r.priority)?;
        s.serialize_field("request_text", &r.request_text)?;
        s.serialize_field("image_url", &r.image_url)?;
        s.serialize_field("context", &r.context)?;
        s.serialize_field("platform", &r.platform)?;
        s.serialize_field("platform_version", &r.platform_version)?;
        s.serialize_field("response_type", &r.response_type)?;
        s.serialize_field("response_config", &r.response_config)?;
        s.serialize_field("default_response", &r.default_response)?;
        s.serialize_field("timeout_seconds", &r.timeout_seconds)?;
        s.serialize_field("timeout_at", &r.timeout_at)?;
        if requester {
            s.serialize_field("callback_url", &r.callback_url)?;
            s.serialize_field("metadata", &r.metadata)?;
        } else {
            s.skip_field("callback_url")?;
            s.skip_field("metadata")?;
        }
        s.serialize_field(
            "broadcasted_to",
            &Broadcasts(&r.broadcasted_to, self.audience),
        )?;
        s.serialize_field("broadcasted_at", &r.broadcasted_at)?;
        s.serialize_field("status", &r.status)?;
        s.serialize_field("claimed_by", &r.claimed_by)?;
        s.serialize_field("claimed_at", &r.claimed_at)?;
        s.serialize_field("response_by", &r.response_by)?;
        s.serialize_field("response_at", &r.response_at)?;
        s.serialize_field("response_data", &r.response_data)?;
        s.serialize_field("response_time_seconds", &r.response_time_seconds)?;
        s.serialize_field("cancelled_at", &r.cancelled_at)?;
        s.serialize_field("feedback", &r.feedback)?;
        s.serialize_field("created_at", &r.created_at)?;
        s.serialize_field("updated_at", &r.updated_at)?;
        s.end()
    }
}

/// The whole request: what its requester, its webhooks and its events see.
impl Serialize for ReviewRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.full_view().serialize(serializer)
    }
}
