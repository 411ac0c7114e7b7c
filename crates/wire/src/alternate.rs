//! The alternate surface's objects (templates and reviews) and its
//! bodies, as its API and its events show them.

use chrono::{DateTime, Utc};
use reviewloop_domain::{Review, ReviewId, Reviewer, Template, TemplateId, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::present::{present, present_text};
use crate::schema;

/// A template: a reusable form.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Template)]
pub struct TemplateOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: TemplateId,
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// Form fields: `{name, type, label, required, options, ...}`.
    #[schema(value_type = Vec<Object>)]
    pub fields: Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl<'a> TemplateOut<'a> {
    /// `template` as shown.
    pub fn of(template: &'a Template) -> Self {
        Self {
            id: template.id(),
            name: template.name(),
            description: template.description(),
            fields: template.form().to_value(),
            created_at: template.created_at(),
            updated_at: template.updated_at(),
        }
    }
}

/// Who started or completed a review.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Reviewer)]
pub struct ReviewerOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: UserId,
    pub email: &'a str,
}

impl<'a> ReviewerOut<'a> {
    fn of(reviewer: Option<&'a Reviewer>) -> Option<Self> {
        reviewer.map(|r| Self {
            id: r.user_id,
            email: r.email.as_str(),
        })
    }
}

/// What a review is about.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewContent<'a> {
    pub text: Option<&'a str>,
    #[schema(value_type = Object)]
    pub metadata: &'a serde_json::Map<String, Value>,
}

/// A review: a request whose answer is a form.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Review)]
pub struct ReviewOut<'a> {
    #[schema(value_type = schema::Id)]
    pub id: ReviewId,
    #[schema(value_type = schema::Id)]
    pub template_id: TemplateId,
    pub content: ReviewContent<'a>,
    /// The template's fields as they were when the review was made.
    #[schema(value_type = Vec<Object>)]
    pub fields: &'a Value,
    /// The assignees' emails.
    pub assignees: Vec<&'a str>,
    #[schema(value_type = Option<schema::Id>)]
    pub team_id: Option<reviewloop_domain::LoopId>,
    #[schema(value_type = schema::Priority)]
    pub priority: &'static str,
    pub due_date: Option<DateTime<Utc>>,
    #[schema(value_type = schema::ReviewStatus)]
    pub status: &'static str,
    /// One value per field, once completed.
    pub result: Option<&'a Value>,
    pub reviewer: Option<ReviewerOut<'a>>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl<'a> ReviewOut<'a> {
    /// `review` as shown.
    pub fn of(review: &'a Review) -> Self {
        let r = review.record();
        Self {
            id: r.id,
            template_id: r.template_id,
            content: ReviewContent {
                text: r.content_text.as_deref(),
                metadata: &r.metadata,
            },
            fields: &r.fields,
            assignees: r.assignees.iter().map(|a| a.email.as_str()).collect(),
            team_id: r.team_id,
            priority: r.priority.as_str(),
            due_date: r.due_date,
            status: r.status.as_str(),
            result: r.result.as_ref(),
            reviewer: ReviewerOut::of(r.reviewer.as_ref()),
            started_at: r.started_at,
            completed_at: r.completed_at,
            cancelled_at: r.cancelled_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// The review object of `review.*` events, as the surface describes it.
#[derive(Debug, Serialize)]
pub struct ReviewEventOut<'a> {
    pub id: ReviewId,
    pub template_id: TemplateId,
    pub status: &'static str,
    pub result: Option<&'a Value>,
    pub completed_at: Option<DateTime<Utc>>,
    pub reviewer: Option<ReviewerOut<'a>>,
    pub assignees: Vec<&'a str>,
}

impl<'a> ReviewEventOut<'a> {
    /// `review` as its events carry it.
    pub fn of(review: &'a Review) -> Self {
        let r = review.record();
        Self {
            id: r.id,
            template_id: r.template_id,
            status: r.status.as_str(),
            result: r.result.as_ref(),
            completed_at: r.completed_at,
            reviewer: ReviewerOut::of(r.reviewer.as_ref()),
            assignees: r.assignees.iter().map(|a| a.email.as_str()).collect(),
        }
    }
}

/// Where a page of a list stands; the alternate envelope carries it in
/// `meta.pagination`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PageMeta {
    pub total: u64,
    pub limit: u32,
    pub offset: u32,
    pub has_more: bool,
}

/// What a deletion answers on the alternate surface.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Deleted)]
pub struct DeletedOut {
    #[schema(value_type = schema::Id)]
    pub id: String,
    pub deleted: bool,
}

/// A new template.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewTemplate, example = json!({"name": "Refund", "fields": [
    {"name": "decision", "type": "select", "label": "Decision", "required": true, "options": ["approve", "deny"]}
]}))]
pub struct NewTemplateIn {
    #[schema(value_type = String)]
    pub name: Option<String>,
    pub description: Option<String>,
    /// Form fields: `{name, type, label, required, options}`.
    #[schema(value_type = Vec<Object>)]
    pub fields: Option<Value>,
}

/// A change to a template; what is absent stays.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = TemplatePatch)]
pub struct TemplatePatchIn {
    pub name: Option<String>,
    /// `null` clears it.
    #[serde(default, deserialize_with = "present_text")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub fields: Option<Value>,
}

/// What a review is about, as sent.
#[derive(Debug, ToSchema)]
#[schema(as = NewReviewContent)]
#[allow(dead_code)] // Describes `NewReviewIn::content`, which is read loosely.
pub struct ReviewContentIn {
    text: String,
    #[schema(value_type = Option<Object>)]
    metadata: Option<Value>,
}

/// A new review.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewReview)]
pub struct NewReviewIn {
    #[schema(value_type = schema::Id)]
    pub template_id: Option<Value>,
    #[schema(value_type = ReviewContentIn)]
    pub content: Option<Value>,
    /// Emails or account ids.
    #[schema(value_type = Option<Vec<String>>)]
    pub assignees: Option<Value>,
    #[schema(value_type = Option<schema::Id>)]
    pub team_id: Option<Value>,
    #[schema(value_type = Option<schema::Priority>)]
    pub priority: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub due_date: Option<Value>,
    /// Where the result is POSTed (http or https).
    #[schema(value_type = Option<String>)]
    pub callback_url: Option<Value>,
}

/// A change to a review.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ReviewPatch)]
pub struct ReviewPatchIn {
    #[schema(value_type = Option<schema::Priority>)]
    pub priority: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub due_date: Option<Value>,
    #[schema(value_type = Option<Vec<String>>)]
    pub assignees: Option<Value>,
}

/// A completed review's answers.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = ReviewResult)]
pub struct ReviewResultIn {
    /// One value per template field.
    #[schema(value_type = Object)]
    pub result: Option<Value>,
}

/// A new team (a loop).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = NewTeam)]
pub struct NewTeamIn {
    #[schema(value_type = String)]
    pub name: Option<String>,
    pub description: Option<String>,
    pub icon: Option<String>,
}
