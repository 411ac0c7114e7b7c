//! The envelopes of answers around the objects the service's wire module
//! shapes: loops with their invite links, pages and inboxes of requests.
//! Request answers are typed views borrowed from the domain objects,
//! serialized once, straight into the response body.

use base64::Engine;
use reviewloop_domain::{Loop, ReviewRequest, UserId};
use reviewloop_ports::RequestPage;
use reviewloop_service::wire::{full_request, request_view, LoopView, RequestView};
use reviewloop_service::{CreatedRequest, LoopInvite};
use serde::Serialize;
use serde_json::{json, Value};

/// A loop with its member counts.
pub(super) fn loop_json(lp: &Loop) -> Value {
    json!(LoopView::of(lp))
}

/// The loop creation result: the loop and everything needed to join it.
pub(super) fn invite_json(invite: &LoopInvite) -> Value {
    json!({
        "loop": loop_json(&invite.lp),
        "invite_code": invite.lp.invite_code.as_str(),
        // A data URI, as the reference's example shows it: it goes straight
        // into an <img src>.
        "qr_code_base64": format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&invite.qr_png)
        ),
        "qr_code_url": invite.qr_code_url,
        "join_url": invite.join_url,
    })
}

/// What a create answers (over the API and MCP alike): the request and,
/// beside it, the fields HITL.sh clients read at the top level (and `id`,
/// which some of them read instead of `request_id`).
pub(crate) fn created_json(created: &CreatedRequest) -> Value {
    let r = &created.request;
    let notified = r
        .broadcasted_to
        .iter()
        .filter(|b| b.notification_sent)
        .count();
    json!({
        "request": full_request(r),
        "request_id": r.id,
        "id": r.id,
        "status": r.status.as_str(),
        "processing_type": r.processing_type.as_str(),
        "type": r.content_type.as_str(),
        "priority": r.priority.as_str(),
        "timeout_at": r.timeout_at,
        "polling_url": created.polling_url,
        "broadcasted_to": r.broadcasted_to.len(),
        "notifications_sent": notified,
    })
}

/// A page of requests with its paging facts.
pub(super) fn page_json(page: &RequestPage, limit: u32, offset: u32) -> Value {
    let count = page.requests.len();
    let has_more = u64::from(offset) + (count as u64) < page.total;
    json!({
        "requests": page.requests.iter().map(full_request).collect::<Vec<_>>(),
        "count": count,
        "total": page.total,
        "has_more": has_more,
        "limit": limit,
        "offset": offset,
        // HITL.sh's guides page with this object; `next_offset` is null on
        // the last page.
        "pagination": {
            "limit": limit,
            "offset": offset,
            "next_offset": has_more.then(|| u64::from(offset) + count as u64),
        },
    })
}

/// `{"request": ...}`: the answer of every single-request operation.
#[derive(Serialize)]
pub(super) struct OneRequest<'a> {
    request: RequestView<'a>,
}

/// A request as `viewer` may see it (the domain decides what that is:
/// [`ReviewRequest::audience_of`]), wrapped as every single-request answer is.
pub(super) fn request_json<'a>(request: &'a ReviewRequest, viewer: &'a UserId) -> OneRequest<'a> {
    OneRequest {
        request: request_view(request, viewer),
    }
}

/// The reviewer's inbox page.
#[derive(Serialize)]
pub(super) struct Inbox<'a> {
    count: usize,
    requests: Vec<RequestView<'a>>,
}

/// The inbox as `viewer` sees it.
pub(super) fn inbox_json<'a>(requests: &'a [ReviewRequest], viewer: &'a UserId) -> Inbox<'a> {
    Inbox {
        count: requests.len(),
        requests: requests.iter().map(|r| request_view(r, viewer)).collect(),
    }
}
