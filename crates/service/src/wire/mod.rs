//! Wire formats: how the domain's objects are written out, to API answers,
//! to event payloads and webhook bodies. The domain decides what each
//! audience may see ([`reviewloop_domain::Audience`]); this module decides
//! the shape and the names. It lives here, not at the HTTP edge, because
//! events are shaped when they are written to the outbox, in the same
//! transaction as the change, and the API must show the same objects the
//! same way.

mod audit;
mod events;
mod loops;
mod request;
mod review;
mod rules;
mod webhooks;

pub use audit::audit_entry_json;
pub use events::{event_body, loop_event, request_event};
pub use loops::{loop_summary, LoopView, MemberView};
pub use request::{full_request, request_view, FeedbackView, RequestView};
pub use review::{event_review_json, review_json, template_json};
pub use rules::{routing_json, summary as routing_summary};
pub use webhooks::{delivery_json, webhook_json};
