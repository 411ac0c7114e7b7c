//! How entities are shown: the domain's own serialization, plus the
//! counts and links the API adds around it.

use base64::Engine;
use reviewloop_domain::{Loop, ReviewRequest, UserId};
use reviewloop_ports::RequestPage;
use reviewloop_service::LoopInvite;
use serde_json::{json, Value};

/// A loop with its member counts.
pub(super) fn loop_json(lp: &Loop) -> Value {
    let mut value = json!(lp);
    if let Some(map) = value.as_object_mut() {
        map.insert("member_count".into(), json!(lp.member_count()));
        map.insert("pending_count".into(), json!(lp.pending_count()));
        map.insert("active_count".into(), json!(lp.active_count()));
    }
    value
}

/// The loop creation result: the loop and everything needed to join it.
pub(super) fn invite_json(invite: &LoopInvite) -> Value {
    json!({
        "loop": loop_json(&invite.lp),
        "invite_code": invite.lp.invite_code,
        "qr_code_base64": base64::engine::general_purpose::STANDARD.encode(&invite.qr_png),
        "qr_code_url": invite.qr_code_url,
        "join_url": invite.join_url,
    })
}

/// A page of requests with its paging facts.
pub(super) fn page_json(page: &RequestPage, limit: u32, offset: u32) -> Value {
    let count = page.requests.len();
    json!({
        "requests": page.requests,
        "count": count,
        "total": page.total,
        "has_more": u64::from(offset) + (count as u64) < page.total,
        "limit": limit,
        "offset": offset,
    })
}

/// Fields only the requester sees: where the answer goes (a callback URL
/// often carries a token), its own bookkeeping, and the key it used.
const REQUESTER_ONLY: [&str; 3] = ["callback_url", "metadata", "api_key_id"];

/// A request as `viewer` may see it. The requester sees all of it. A
/// reviewer sees what it needs to answer: not the requester-only fields,
/// and of the broadcast only its own entry, not the other reviewers'
/// addresses.
pub(super) fn request_view(request: &ReviewRequest, viewer: &UserId) -> Value {
    let mut value = json!(request);
    if request.creator_id == *viewer {
        return value;
    }
    if let Some(map) = value.as_object_mut() {
        for field in REQUESTER_ONLY {
            map.remove(field);
        }
        map.insert(
            "broadcasted_to".into(),
            json!(request
                .broadcasted_to
                .iter()
                .filter(|entry| entry.user_id == *viewer)
                .collect::<Vec<_>>()),
        );
    }
    value
}

/// `{"request": ...}`: the answer of every single-request operation, as
/// `viewer` may see it.
pub(super) fn request_json(request: &ReviewRequest, viewer: &UserId) -> Value {
    json!({ "request": request_view(request, viewer) })
}
