//! A request as one audience may see it, serialized straight from the
//! borrowed request, with no intermediate JSON tree.

use reviewloop_domain::RECEIPT_ALG;
use reviewloop_domain::{
    Audience, BroadcastEntry, Feedback, Quorum, Receipt, ReviewRequest, UserId,
};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

/// A request as one audience may see it.
#[derive(Debug, Clone, Copy)]
pub struct RequestView<'a> {
    request: &'a ReviewRequest,
    audience: Audience<'a>,
}

/// `request` as `viewer` may see it (its creator sees everything).
pub fn request_view<'a>(request: &'a ReviewRequest, viewer: &'a UserId) -> RequestView<'a> {
    RequestView {
        request,
        audience: request.audience_of(viewer),
    }
}

/// `request` whole, as its requester, its webhooks and its events see it.
pub fn full_request(request: &ReviewRequest) -> RequestView<'_> {
    RequestView {
        request,
        audience: Audience::Requester,
    }
}

struct Entry<'a>(&'a BroadcastEntry);

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut s = serializer.serialize_struct("BroadcastEntry", 5)?;
        s.serialize_field("user_id", &e.user_id)?;
        s.serialize_field("email", e.email.as_str())?;
        s.serialize_field("role", &e.role)?;
        s.serialize_field("notification_sent", &e.notification_sent)?;
        s.serialize_field("notification_error", &e.notification_error)?;
        s.end()
    }
}

/// The broadcast entries an audience sees.
struct Broadcasts<'a>(&'a [BroadcastEntry], Audience<'a>);

impl Serialize for Broadcasts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for entry in self.0.iter().filter(|e| self.1.sees_entry(e)) {
            seq.serialize_element(&Entry(entry))?;
        }
        seq.end()
    }
}

/// The answers an audience sees: every one for the requester; a reviewer
/// only its own, so that no reviewer's answer leans on another's.
struct Responses<'a>(&'a ReviewRequest, Audience<'a>);

impl Serialize for Responses<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for r in self.0.responses() {
            if let Audience::Reviewer(viewer) = self.1 {
                if r.user_id != *viewer {
                    continue;
                }
            }
            seq.serialize_element(&serde_json::json!({
                "user_id": r.user_id,
                "email": r.email.as_str(),
                "response_data": r.response_data,
                "response_at": r.response_at,
            }))?;
        }
        seq.end()
    }
}

/// A request's quorum with how many answers are in.
struct QuorumView<'a>(&'a Quorum, usize);

impl Serialize for QuorumView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Quorum", 4)?;
        s.serialize_field("count", &self.0.count)?;
        s.serialize_field("rule", self.0.rule.as_str())?;
        s.serialize_field("exclude_requester", &self.0.exclude_requester)?;
        s.serialize_field("answered", &self.1)?;
        s.end()
    }
}

/// The requester's feedback on a request.
pub struct FeedbackView<'a>(pub &'a Feedback);

impl Serialize for FeedbackView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut s = serializer.serialize_struct("Feedback", 10)?;
        s.serialize_field("rating", &f.rating)?;
        s.serialize_field("comment", &f.comment)?;
        s.serialize_field("accuracy", &f.accuracy)?;
        s.serialize_field("timeliness", &f.timeliness)?;
        s.serialize_field("helpfulness", &f.helpfulness)?;
        s.serialize_field("would_recommend", &f.would_recommend)?;
        s.serialize_field("follow_up_needed", &f.follow_up_needed)?;
        s.serialize_field("tags", &f.tags)?;
        s.serialize_field("category", &f.category)?;
        s.serialize_field("created_at", &f.created_at)?;
        s.end()
    }
}

/// A decision receipt, with the scheme it uses.
pub struct ReceiptView<'a>(pub &'a Receipt);

impl Serialize for ReceiptView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Receipt", 4)?;
        s.serialize_field("alg", RECEIPT_ALG)?;
        s.serialize_field("key_id", &self.0.key_id)?;
        s.serialize_field("signed", &self.0.signed)?;
        s.serialize_field("signature", &self.0.signature)?;
        s.end()
    }
}

impl Serialize for RequestView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.request;
        let private = self.audience.sees_requester_fields();
        let mut s = serializer.serialize_struct("ReviewRequest", 42)?;
        s.serialize_field("id", &r.id)?;
        s.serialize_field("loop_id", &r.loop_id)?;
        s.serialize_field("creator_id", &r.creator_id)?;
        if private {
            s.serialize_field("api_key_id", &r.api_key_id)?;
        } else {
            s.skip_field("api_key_id")?;
        }
        s.serialize_field("processing_type", r.processing_type.as_str())?;
        s.serialize_field("type", r.content_type.as_str())?;
        s.serialize_field("priority", r.priority.as_str())?;
        s.serialize_field("request_text", &r.request_text)?;
        s.serialize_field("image_url", &r.image_url)?;
        s.serialize_field("context", &r.context)?;
        s.serialize_field("platform", r.platform.as_str())?;
        s.serialize_field("platform_version", &r.platform_version)?;
        s.serialize_field("response_type", r.response_type.as_str())?;
        s.serialize_field("response_config", &r.response_config)?;
        s.serialize_field("default_response", &r.default_response)?;
        s.serialize_field("timeout_seconds", &r.timeout_seconds)?;
        s.serialize_field("timeout_at", &r.timeout_at)?;
        if private {
            s.serialize_field("callback_url", &r.callback_url)?;
            s.serialize_field("metadata", &r.metadata)?;
            s.serialize_field("tags", &r.tags)?;
        } else {
            s.skip_field("callback_url")?;
            s.skip_field("metadata")?;
            s.skip_field("tags")?;
        }
        s.serialize_field(
            "broadcasted_to",
            &Broadcasts(&r.broadcasted_to, self.audience),
        )?;
        s.serialize_field("broadcasted_at", &r.broadcasted_at)?;
        s.serialize_field("status", r.status.as_str())?;
        s.serialize_field("claimed_by", &r.claimed_by)?;
        s.serialize_field("claimed_at", &r.claimed_at)?;
        s.serialize_field("response_by", &r.response_by)?;
        s.serialize_field("response_at", &r.response_at)?;
        s.serialize_field("response_data", &r.response_data)?;
        s.serialize_field("response_time_seconds", &r.response_time_seconds)?;
        s.serialize_field(
            "quorum",
            &r.quorum
                .as_ref()
                .map(|q| QuorumView(q, r.responses().len())),
        )?;
        s.serialize_field("responses", &Responses(r, self.audience))?;
        s.serialize_field("escalation", &r.escalation.map(|e| e.to_value()))?;
        s.serialize_field("escalated_at", &r.escalated_at)?;
        s.serialize_field("decided_by_rule", &r.decided_by_rule())?;
        s.serialize_field("test", &r.test)?;
        if private {
            s.serialize_field(
                "applied_rules",
                &r.applied_rules
                    .iter()
                    .map(|a| a.to_value())
                    .collect::<Vec<_>>(),
            )?;
        } else {
            s.skip_field("applied_rules")?;
        }
        s.serialize_field("cancelled_at", &r.cancelled_at)?;
        s.serialize_field("feedback", &r.feedback.as_ref().map(FeedbackView))?;
        s.serialize_field("receipt", &r.receipt.as_ref().map(ReceiptView))?;
        s.serialize_field("created_at", &r.created_at)?;
        s.serialize_field("updated_at", &r.updated_at)?;
        s.end()
    }
}

#[cfg(test)]
mod tests;
