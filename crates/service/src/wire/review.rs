//! Reviews and templates, the alternate surface's objects, as its API and
//! its events show them.

use reviewloop_domain::{Review, Reviewer, Template};
use serde_json::{json, Value};

fn reviewer_json(reviewer: Option<&Reviewer>) -> Value {
    reviewer.map_or(
        Value::Null,
        |r| json!({"id": r.user_id, "email": r.email.as_str()}),
    )
}

/// A review as the API shows it.
pub fn review_json(review: &Review) -> Value {
    let r = review.record();
    json!({
        "id": r.id,
        "template_id": r.template_id,
        "content": {"text": r.content_text, "metadata": r.metadata},
        "fields": r.fields,
        "assignees": r.assignees.iter().map(|a| a.email.as_str()).collect::<Vec<_>>(),
        "team_id": r.team_id,
        "priority": r.priority.as_str(),
        "due_date": r.due_date,
        "status": r.status.as_str(),
        "result": r.result,
        "reviewer": reviewer_json(r.reviewer.as_ref()),
        "started_at": r.started_at,
        "completed_at": r.completed_at,
        "cancelled_at": r.cancelled_at,
        "created_at": r.created_at,
        "updated_at": r.updated_at,
    })
}

/// The review object of `review.*` events, as the surface describes it.
pub fn event_review_json(review: &Review) -> Value {
    let r = review.record();
    json!({
        "id": r.id,
        "template_id": r.template_id,
        "status": r.status.as_str(),
        "result": r.result,
        "completed_at": r.completed_at,
        "reviewer": reviewer_json(r.reviewer.as_ref()),
        "assignees": r.assignees.iter().map(|a| a.email.as_str()).collect::<Vec<_>>(),
    })
}

/// A template as the API and `template.updated` show it.
pub fn template_json(template: &Template) -> Value {
    json!({
        "id": template.id(),
        "name": template.name(),
        "description": template.description(),
        "fields": template.form().to_value(),
        "created_at": template.created_at(),
        "updated_at": template.updated_at(),
    })
}
