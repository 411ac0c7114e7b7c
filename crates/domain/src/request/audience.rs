//! Who may see what of a request. The requester sees all of it. A reviewer
//! sees what it needs to answer: not the requester-only fields (where the
//! answer goes, since a callback URL often carries a token; the
//! requester's own metadata; the key it used), and of the broadcast only
//! its own entry, not the other reviewers' addresses. What a view may hold
//! is decided here; how it is written out is not (reviewloop's service
//! writes it in its `wire` module).

use super::{BroadcastEntry, ReviewRequest};
use crate::id::UserId;

/// Who looks at a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience<'a> {
    /// The account that created it, and its webhooks: everything.
    Requester,
    /// A reviewer: no requester-only fields, only its own broadcast entry.
    Reviewer(&'a UserId),
}

impl Audience<'_> {
    /// True when this audience sees the requester-only fields
    /// (`api_key_id`, `callback_url`, `metadata`).
    pub fn sees_requester_fields(&self) -> bool {
        matches!(self, Self::Requester)
    }

    /// True when this audience sees `entry` of the broadcast.
    pub fn sees_entry(&self, entry: &BroadcastEntry) -> bool {
        match self {
            Self::Requester => true,
            Self::Reviewer(viewer) => entry.user_id == **viewer,
        }
    }
}

impl ReviewRequest {
    /// How `viewer` sees this request (its creator sees everything).
    pub fn audience_of<'a>(&self, viewer: &'a UserId) -> Audience<'a> {
        if self.creator_id == *viewer {
            Audience::Requester
        } else {
            Audience::Reviewer(viewer)
        }
    }
}
