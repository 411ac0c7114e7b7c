//! `/app/reviews`: reviews (forms) for people. Reviewers see the reviews
//! assigned to them or their teams, read the content and fill the form,
//! whose widgets are built from the review's own fields with editable
//! fields pre-filled; senders see the result and may cancel.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use reviewloop_domain::{
    plain_words, Field, FieldKind, Review, ReviewId, ReviewStatus, ReviewerHints,
};
use reviewloop_service::{Failure, ListReviewsInput};
use serde_json::Value;

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, csrf_field, priority_badge, Nav};
use crate::markdown::{self, first_line, subject};
use crate::pages::inbox::PAGE_SIZE;
use crate::pages::{widgets, Problems};
use crate::session::Person;
use crate::state::WebState;

fn parse_id(raw: &str) -> Result<ReviewId, PageError> {
    ReviewId::parse(raw).map_err(|_| PageError::NotFound("Review not found".into()))
}

fn status_badge(status: ReviewStatus) -> Markup {
    let word = status.as_str();
    html! { span class={ "badge review-" (word) } { (word) } }
}

fn row(review: &Review) -> Markup {
    let r = review.record();
    let now = Utc::now();
    let title = r
        .content_text
        .as_deref()
        .map(|t| first_line(t, 120))
        .unwrap_or_else(|| "Review".into());
    html! {
        li.request data-priority=(r.priority.as_str()) {
            a href={ "/app/reviews/" (r.id) } {
                span.row-top {
                    (priority_badge(r.priority)) (status_badge(r.status))
                    span.kind {
                        @let to_fill = review.form().fields().iter().filter(|f| f.takes_answer()).count();
                        (to_fill) " field" @if to_fill != 1 { "s" } " to fill"
                    }
                }
                span.title { (title) }
                span.when {
                    @if let Some(due) = r.due_date { "due " (layout::time(due, now)) }
                    @else { "sent " (layout::time(r.created_at, now)) }
                }
            }
        }
    }
}

fn listing(reviews: &[Review], empty: &str) -> Markup {
    html! {
        @if reviews.is_empty() { p.empty { (empty) } }
        @else { ol.requests { @for r in reviews { (row(r)) } } }
    }
}

/// `GET /app/reviews[?page=N]`: what I may answer, and what I sent.
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: Person,
) -> Result<HttpResponse, PageError> {
    let page = FormData::query(&req).page_number();
    let who = person.principal();
    let input = |role: &str| ListReviewsInput {
        role: Some(role.to_owned()),
        limit: Some(PAGE_SIZE),
        offset: Some((page - 1) * PAGE_SIZE),
        ..ListReviewsInput::default()
    };
    let (mine, _, _) = state.reviews.list(who, input("reviewer")).await?;
    let (sent, _, _) = state.reviews.list(who, input("sent")).await?;
    let more = u64::from(page * PAGE_SIZE) < mine.total.max(sent.total);
    let lists = html! {
        h2 { "To review" }
        (listing(&mine.reviews, "No review is waiting for you. Reviews assigned to you or your teams appear here."))
        h2 { "Sent by you" }
        (listing(&sent.reviews, "You have not sent a review. Programs send them with POST /v1/reviews."))
        nav.pager aria-label="Pages" {
            @if page > 1 { a href={ "/app/reviews?page=" (page - 1) } { "← Newer page" } }
            @if more { a href={ "/app/reviews?page=" (page + 1) } rel="next" { "Next page →" } }
        }
    };
    // The script asks for the lists alone when the stream says they changed.
    if req.headers().contains_key("x-partial") {
        return Ok(layout::ok(lists));
    }
    let body = html! {
        h1 { "Reviews" }
        (crate::pages::inbox::tabs("reviews"))
        div #live-list aria-live="polite" data-stream="/app/stream" data-source={ "/app/reviews?page=" (page) } {
            (lists)
        }
    };
    Ok(layout::ok(layout::page(
        "Reviews",
        Some(&person),
        Nav::Inbox,
        body,
    )))
}

/// A field's answer in words: a select's labels, a boolean as Yes or No
/// (a form's question asks it that way).
fn value_text(field: &Field, value: &Value) -> String {
    match (field.kind(), value) {
        (_, Value::Bool(true)) => "Yes".into(),
        (_, Value::Bool(false)) => "No".into(),
        (FieldKind::Answer(config), value) => config.answer_words(&ReviewerHints::default(), value),
        (_, value) => plain_words(value),
    }
}

/// A content-display field: its own entry of `content.metadata`, or the
/// content's text.
fn shown_content(review: &Review, field: &Field) -> Markup {
    let r = review.record();
    match r.metadata.get(field.name()) {
        Some(Value::String(text)) => markdown::render(text),
        Some(other) => {
            html! { pre { code { (serde_json::to_string_pretty(other).unwrap_or_default()) } } }
        }
        None => markdown::render(r.content_text.as_deref().unwrap_or_default()),
    }
}

struct View<'a> {
    problems: Problems,
    previous: FormData,
    notice: Option<&'a str>,
}

async fn render(
    state: &WebState,
    person: &Person,
    review: &Review,
    view: View<'_>,
) -> Result<HttpResponse, PageError> {
    let who = person.principal();
    let r = review.record();
    let now = Utc::now();
    // A reviewer is whoever the service lets start it; asking it keeps the
    // rule in one place.
    let sender = review.is_sent_by(&who.user_id);
    let may_answer = state.reviews.may_answer(review, &who.user_id).await?;
    let started_by_other = r.status == ReviewStatus::Started
        && r.reviewer
            .as_ref()
            .is_some_and(|p| p.user_id != who.user_id);
    let displays: Vec<&Field> = review
        .form()
        .fields()
        .iter()
        .filter(|f| matches!(f.kind(), FieldKind::ContentDisplay))
        .collect();
    let action = |what: &str| format!("/app/reviews/{}/{what}", r.id);
    let (heading, text_follows) = subject(
        r.content_text.as_deref().unwrap_or_default(),
        "A review to fill in",
    );
    let body = html! {
        nav.crumbs aria-label="Reviews" { a href="/app/reviews" { "← Reviews" } }
        @if let Some(notice) = view.notice { p.notice role="status" { (notice) } }
        article.review {
            header {
                (priority_badge(r.priority)) " " (status_badge(r.status))
                h1.subject { (heading) }
                @if let Some(due) = r.due_date {
                    p.deadline { "Due " (layout::time(due, now)) @if review.is_overdue(now) { " — overdue" } }
                }
            }
            @if displays.is_empty() {
                @if let Some(text) = r.content_text.as_deref().filter(|_| text_follows) {
                    div.text { (markdown::render(text)) }
                }
            }
            @for field in &displays {
                section.display {
                    h2 { (field.label()) }
                    div.text { (shown_content(review, field)) }
                }
            }
        }
        section.answer #answer-box {
            @if let Some(result) = r.result.as_ref().and_then(Value::as_object) {
                h2 { "Result" }
                dl.context {
                    @for field in review.form().fields().iter().filter(|f| f.takes_answer()) {
                        dt { (field.label()) }
                        dd { @match result.get(field.name()) { Some(v) => { (value_text(field, v)) } None => { em { "left empty" } } } }
                    }
                }
                @if let Some(p) = &r.reviewer { p.hint { "Completed by " (p.email.as_str()) } }
            } @else if r.status == ReviewStatus::Cancelled {
                p { "The sender cancelled this review." }
            } @else if may_answer {
                @if started_by_other {
                    p { "Another reviewer is working on this review." }
                } @else {
                    h2 { "Your review" }
                    (view.problems.show())
                    @if r.status == ReviewStatus::Created {
                        form.inline method="post" action=(action("start")) {
                            (csrf_field(person.csrf()))
                            button.secondary type="submit" { "Start" }
                            span.hint { " so that others see you are on it, or submit right away." }
                        }
                    }
                    form.review-form method="post" action=(action("complete")) {
                        (csrf_field(person.csrf()))
                        (widgets::form_fields(review.form(), &view.previous, &review.prefill()))
                        button.primary type="submit" { "Submit review" }
                    }
                }
            }
        }
        @if sender && r.status.is_open() {
            section.owner {
                h2 { "You sent this review" }
                @if !may_answer { (view.problems.show()) }
                p { "Assigned to: " @if r.assignees.is_empty() { em { "its team" } } @else {
                    (r.assignees.iter().map(|a| a.email.as_str()).collect::<Vec<_>>().join(", ")) } }
                form method="post" action=(action("cancel")) {
                    (csrf_field(person.csrf()))
                    button.danger type="submit" { "Cancel review" }
                }
            }
        }
    };
    Ok(layout::respond(
        view.problems.status,
        layout::page(
            &layout::item_title(heading.clone(), "review", &r.id.to_string()),
            Some(person),
            Nav::Inbox,
            body,
        ),
    ))
}

/// `GET /app/reviews/{id}`
pub(crate) async fn page(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: web::Query<std::collections::HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&id)?;
    let review = state.reviews.get(person.principal(), &id).await?;
    let notice = query.get("done").map(|d| match d.as_str() {
        "completed" => "Review submitted.",
        "started" => "You started this review.",
        "cancelled" => "Review cancelled.",
        _ => "Done.",
    });
    let view = View {
        problems: Problems::none(),
        previous: FormData::default(),
        notice,
    };
    render(&state, &person, &review, view).await
}

/// Back to the review's page with `done` as its notice, or the page again
/// with the service's refusal beside what was posted.
async fn finish(
    state: &WebState,
    posted: &PersonForm,
    id: &ReviewId,
    result: Result<&str, impl Failure>,
) -> Result<HttpResponse, PageError> {
    match result {
        Ok(done) => Ok(layout::redirect(&format!("/app/reviews/{id}?done={done}"))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let review = state.reviews.get(posted.person.principal(), id).await?;
            let view = View {
                problems,
                previous: posted.form.clone(),
                notice: None,
            };
            render(state, &posted.person, &review, view).await
        }
    }
}

/// `POST /app/reviews/{id}/start`
pub(crate) async fn start(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state.reviews.start(posted.person.principal(), &id).await;
    finish(&state, &posted, &id, result.map(|_| "started")).await
}

/// `POST /app/reviews/{id}/cancel`
pub(crate) async fn cancel(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state.reviews.cancel(posted.person.principal(), &id).await;
    finish(&state, &posted, &id, result.map(|_| "cancelled")).await
}

/// `POST /app/reviews/{id}/complete`: the result read from the form's
/// controls.
pub(crate) async fn complete(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let who = posted.person.principal();
    let review = state.reviews.get(who, &id).await?;
    let result = widgets::form_result(review.form(), &posted.form);
    let result = state.reviews.complete(who, &id, &result).await;
    finish(&state, &posted, &id, result.map(|_| "completed")).await
}
