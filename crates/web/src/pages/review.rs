//! `/app/requests/{id}`: one request. Reviewers read it (Markdown rendered
//! safely, the image, the context), claim or release it and answer it
//! with the widget of its response type; its requester sees the answer,
//! cancels it while open and rates it once answered.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use reviewloop_domain::{
    Action, ContentType, QuorumRule, RequestId, RequestStatus, ReviewRequest, ReviewerHints,
    ESCALATION_ROLE,
};
use reviewloop_ports::InboxView;
use reviewloop_service::{Failure, ServiceError};
use serde_json::Value;

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, csrf_field, priority_badge, status_badge, Nav};
use crate::markdown::{self, subject};
use crate::pages::{widgets, Problems};
use crate::session::Person;
use crate::state::WebState;

fn parse_id(raw: &str) -> Result<RequestId, PageError> {
    RequestId::parse(raw).map_err(|_| PageError::NotFound("Request not found".into()))
}

fn context(value: &Value) -> Markup {
    html! {
        @match value {
            Value::Object(map) => {
                dl.context {
                    @for (key, v) in map {
                        dt { (key) }
                        dd {
                            @match v {
                                Value::String(s) => { (s) }
                                Value::Null => { em { "none" } }
                                other => { code { (other.to_string()) } }
                            }
                        }
                    }
                }
            }
            other => { pre { code { (serde_json::to_string_pretty(other).unwrap_or_default()) } } }
        }
    }
}

/// Where a quorum stands: "2 of 3 approvals", whether I have answered
/// (or may not, as its requester), and for the requester every answer.
fn quorum_box(
    r: &ReviewRequest,
    me: &reviewloop_domain::UserId,
    now: chrono::DateTime<Utc>,
) -> Markup {
    let Some(quorum) = r.quorum else {
        return html! {};
    };
    let responses = r.responses();
    let progress = quorum.progress(responses.iter().map(|a| a.response_data));
    let mine = responses.iter().find(|a| &a.user_id == me);
    let excluded = quorum.exclude_requester && &r.creator_id == me;
    let rule = match quorum.rule {
        QuorumRule::AllAgree => format!("Decided when {} reviewers give the same answer.", quorum.count),
        QuorumRule::Majority => format!(
            "Decided by the most common answer once {} reviewers have answered; a tie waits for one more.",
            quorum.count
        ),
    };
    html! {
        section.quorum #quorum {
            p.quorum-progress {
                strong { (progress) " of " (quorum.count) " approvals" }
                " · " (responses.len()) " answered"
            }
            p.hint { (rule) }
            @if let Some(answer) = mine {
                p.quorum-mine { "You answered " strong { (r.answer_words(answer.response_data)) } " " (layout::time(answer.response_at, now)) "." }
            } @else if excluded {
                p.quorum-mine { "You sent this request, so you may not answer it." }
            } @else if r.status.is_open() && r.was_broadcast_to(me) {
                p.quorum-mine { "You have not answered yet." }
            }
            @if r.creator_id == *me && !responses.is_empty() {
                ul.quorum-answers {
                    @for answer in &responses {
                        li {
                            (answer.email.as_str()) ": " strong { (r.answer_words(answer.response_data)) } " " (layout::time(answer.response_at, now))
                            @if let Some(comment) = answer.comment { blockquote.comment { (comment) } }
                        }
                    }
                }
            }
        }
    }
}

/// Neighbours of this request in the reviewer's Available list, for `j`/`k`
/// and the "next request" button.
async fn neighbours(
    state: &WebState,
    person: &Person,
    id: &RequestId,
) -> Result<(Option<RequestId>, Option<RequestId>), PageError> {
    let list = state
        .requests
        .inbox(person.principal(), InboxView::Available, Some(200), None)
        .await?;
    let ids: Vec<RequestId> = list.iter().map(|r| r.id).collect();
    Ok(match ids.iter().position(|i| i == id) {
        Some(at) => (
            at.checked_sub(1).and_then(|p| ids.get(p)).copied(),
            ids.get(at + 1).copied(),
        ),
        None => (None, ids.first().copied()),
    })
}

struct View<'a> {
    problems: Problems,
    previous: FormData,
    notice: Option<&'a str>,
}

async fn render(
    state: &WebState,
    person: &Person,
    r: &ReviewRequest,
    view: View<'_>,
) -> Result<HttpResponse, PageError> {
    let me = person.principal().user_id;
    let now = Utc::now();
    let loop_name = state
        .loops
        .get(person.principal(), &r.loop_id)
        .await
        .ok()
        .map(|l| l.name.as_str().to_owned());
    // The loop it escalates to, by name where the person may read it.
    let escalation_name = match (&r.escalation, r.creator_id == me) {
        (Some(e), true) => state
            .loops
            .get(person.principal(), &e.to_loop_id)
            .await
            .ok()
            .map(|l| l.name.as_str().to_owned()),
        _ => None,
    }
    .unwrap_or_else(|| "another loop".into());
    let joined = state.requests.joined_count(person.principal(), r).await?;
    let (prev, next) = neighbours(state, person, &r.id).await?;
    let reviewer = r.was_broadcast_to(&me);
    let requester = r.creator_id == me;
    let mine = r.claimed_by == Some(me) && r.status == RequestStatus::Claimed;
    let can_answer = r.may_answer(&me);
    let action = |what: &str| format!("/app/requests/{}/{what}", r.id);
    // A stored configuration that no longer parses shows no widget.
    let (config, hints) = (
        r.config().ok(),
        ReviewerHints::of(r.response_config.as_value()),
    );
    let (heading, text_follows) = subject(&r.request_text, "A request");
    let body = html! {
        nav.crumbs aria-label="Requests" {
            a href="/app" { "← Inbox" }
            @if let Some(p) = prev { a href={ "/app/requests/" (p) } rel="prev" data-key="k" { "Previous" } }
            @if let Some(n) = next { a href={ "/app/requests/" (n) } rel="next" data-key="j" { "Next request →" } }
        }
        @if let Some(notice) = view.notice { p.notice role="status" { (notice) } }
        article.review data-request=(r.id) data-stream="/app/stream" {
            header {
                (priority_badge(r.priority)) " " (status_badge(r.status))
                @if let Some(name) = &loop_name { span.loop-name { (name) } }
                h1.subject { (heading) }
                p.deadline {
                    @match (r.status, r.response_at, r.cancelled_at) {
                        (s, _, _) if s.is_open() => { "Times out " (layout::time(r.timeout_at, now)) }
                        (RequestStatus::Completed, Some(at), _) => { (layout::ended("Answered", at, r.timeout_at, now)) }
                        (RequestStatus::Cancelled, _, Some(at)) => { (layout::ended("Cancelled", at, r.timeout_at, now)) }
                        _ => { "Timed out " (layout::time(r.timeout_at, now)) }
                    }
                }
            }
            @if r.content_type == ContentType::Image {
                @if let Some(url) = &r.image_url {
                    figure { img src=(url) alt="The image to review" referrerpolicy="no-referrer"; }
                }
            }
            @if text_follows { div.text { (markdown::render(&r.request_text)) } }
            @if let Some(ctx) = &r.context {
                details open {
                    summary { "Context" }
                    (context(ctx))
                }
            }
        }
        @if r.quorum.is_some() { (quorum_box(r, &me, now)) }
        section.answer #answer-box {
            @if let Some(answer) = &r.response_data {
                h2 { @if r.status == RequestStatus::Timeout { "Default answer (timed out)" } @else { "Answer" } }
                p.answer-value { (r.answer_words(answer)) }
                @if let Some(comment) = &r.response_comment { blockquote.comment { (comment) } }
                @if r.response_by == Some(me) { p.hint { "You answered this request." } }
            } @else if r.status == RequestStatus::Cancelled {
                p { "The requester cancelled this request." }
            } @else if r.quorum.is_some() {
                @if can_answer {
                    h2 { "Your answer" }
                    (view.problems.show())
                    @if let Some(config) = config {
                        form.widget method="post" action=(action("respond")) data-type=(r.response_type.as_str()) {
                            (csrf_field(person.csrf()))
                            (widgets::comment_field(&view.previous))
                            (widgets::widget(config, &hints, &view.previous))
                        }
                    }
                } @else if reviewer {
                    (view.problems.show())
                }
            } @else if reviewer {
                @if r.status == RequestStatus::Claimed && !mine {
                    p { "Another reviewer is working on this request." }
                } @else {
                    h2 { "Your answer" }
                    (view.problems.show())
                    @if mine {
                        form.inline method="post" action=(action("release")) {
                            (csrf_field(person.csrf()))
                            span.hint { "You hold this request. " }
                            button.link type="submit" { "Release it" }
                        }
                    } @else {
                        form.inline method="post" action=(action("claim")) {
                            (csrf_field(person.csrf()))
                            button.secondary type="submit" { "Claim" }
                            span.hint { " so that others see you are on it, or answer right away." }
                        }
                    }
                    @if can_answer {
                        @if let Some(config) = config {
                            form.widget method="post" action=(action("respond")) data-type=(r.response_type.as_str()) {
                                (csrf_field(person.csrf()))
                                (widgets::comment_field(&view.previous))
                                (widgets::widget(config, &hints, &view.previous))
                            }
                        }
                    }
                }
            }
            @if r.status == RequestStatus::Completed && next.is_some() {
                @if let Some(n) = next { a.button.primary href={ "/app/requests/" (n) } { "Next request →" } }
            }
        }
        @if requester {
            section.owner {
                h2 { "Your request" }
                ol.timeline {
                    li { "Created " (layout::time(r.created_at, now)) }
                    @if let (Some(at), None, None) = (r.broadcasted_at, r.coalesced_into, r.reused_from) { li { "Sent to " (r.broadcasted_to.len()) " reviewer" @if r.broadcasted_to.len() != 1 { "s" } " " (layout::time(at, now)) } }
                    @for applied in &r.applied_rules {
                        @if matches!(applied.then, Action::Route(_)) { li { "Routed by rule " code { (applied.rule_id) } " to another loop" } }
                        @if matches!(applied.then, Action::Quorum(_)) { li { "Rule " code { (applied.rule_id) } " asked for a quorum" } }
                    }
                    @if let Some(rule) = r.decided_by_rule() { li { "Answered at once by rule " code { (rule) } "; nobody was asked" } }
                    @if let Some(into) = r.coalesced_into {
                        li.joined { "Asked the same question as " a href={ "/app/requests/" (into) } { "an open request" } ", so nobody was asked again: it ends when that one ends, the same way" }
                    }
                    @if let Some(from) = r.reused_from {
                        li.reused { "Answer reused from " a href={ "/app/requests/" (from) } { "an earlier request" } ", which a person answered; nobody was asked" }
                    }
                    @if joined > 0 {
                        li.joined { @if r.status.is_open() { "Open together with " } @else { "Answered together with " } (joined) " other request" @if joined != 1 { "s" } " that asked the same question" }
                    }
                    @if let Some(at) = r.escalated_at {
                        @let added = r.broadcasted_to.iter().filter(|b| b.role == ESCALATION_ROLE).count();
                        li.escalated {
                            "Escalated to " (escalation_name) ": nobody had claimed it, so "
                            @if added == 0 { "it went there too, whose members had it already" }
                            @else { "it also went to " (added) " reviewer" @if added != 1 { "s" } " there" }
                            @if r.escalation.is_some_and(|e| e.raise_priority) { ", at " (r.priority.as_str()) " priority" }
                            " " (layout::time(at, now))
                        }
                    } @else if let (Some(e), true) = (r.escalation, r.status.is_open()) {
                        li { "Escalates to " (escalation_name) " if nobody claims it " (layout::time(r.created_at + chrono::Duration::seconds(e.after_seconds), now)) }
                    }
                    @if let Some(at) = r.claimed_at { li { "Claimed " (layout::time(at, now)) } }
                    @if let Some(at) = r.response_at {
                        li { @if r.status == RequestStatus::Timeout { "Timed out; the default answer stands " } @else { "Answered " } (layout::time(at, now)) }
                    }
                    @if let Some(at) = r.cancelled_at { li { "Cancelled " (layout::time(at, now)) } }
                    @if let Some(f) = &r.feedback { li { "Feedback given " (layout::time(f.created_at, now)) } }
                }
                @if !reviewer { (view.problems.show()) }
                @if r.status.is_open() {
                    form method="post" action=(action("cancel")) {
                        (csrf_field(person.csrf()))
                        button.danger type="submit" { "Cancel request" }
                    }
                }
                @if r.status == RequestStatus::Completed {
                    form.feedback method="post" action=(action("feedback")) {
                        (csrf_field(person.csrf()))
                        h3 { "Rate this answer" }
                        @let current = r.feedback.as_ref().and_then(|f| f.rating).map(|x| x.to_string());
                        label { "Rating (1 to 5)"
                            input type="number" name="rating" min="1" max="5" step="1"
                                value=[view.previous.get("rating").map(str::to_owned).or(current)]; }
                        label { "Comment"
                            textarea name="comment" rows="2" {
                                (view.previous.get("comment").map(str::to_owned)
                                    .or_else(|| r.feedback.as_ref().and_then(|f| f.comment.clone()))
                                    .unwrap_or_default())
                            } }
                        button.secondary type="submit" { "Save feedback" }
                    }
                }
            }
        }
    };
    Ok(layout::respond(
        view.problems.status,
        layout::page(
            &layout::item_title(heading.clone(), "request", &r.id.to_string()),
            Some(person),
            Nav::Inbox,
            body,
        ),
    ))
}

/// `GET /app/requests/{id}`
pub(crate) async fn page(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: web::Query<std::collections::HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&id)?;
    let r = state.requests.get(person.principal(), &id).await?;
    let notice = query.get("done").map(|d| match d.as_str() {
        "answered" => "Answer sent.",
        "claimed" => "You claimed this request.",
        "released" => "Released: others can take it now.",
        "cancelled" => "Request cancelled.",
        "feedback" => "Feedback saved.",
        _ => "Done.",
    });
    let view = View {
        problems: Problems::none(),
        previous: FormData::default(),
        notice,
    };
    render(&state, &person, &r, view).await
}

/// Back to the request's page with `done` as its notice, or the page
/// again with the service's refusal beside what was posted.
async fn finish(
    state: &WebState,
    posted: &PersonForm,
    id: &RequestId,
    result: Result<&str, impl Failure>,
) -> Result<HttpResponse, PageError> {
    match result {
        Ok(done) => Ok(layout::redirect(&format!("/app/requests/{id}?done={done}"))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let r = state.requests.get(posted.person.principal(), id).await?;
            let view = View {
                problems,
                previous: posted.form.clone(),
                notice: None,
            };
            render(state, &posted.person, &r, view).await
        }
    }
}

/// `POST /app/requests/{id}/claim`
pub(crate) async fn claim(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state.requests.claim(posted.person.principal(), &id).await;
    finish(&state, &posted, &id, result.map(|_| "claimed")).await
}

/// `POST /app/requests/{id}/release`
pub(crate) async fn release(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state.requests.release(posted.person.principal(), &id).await;
    finish(&state, &posted, &id, result.map(|_| "released")).await
}

/// `POST /app/requests/{id}/cancel`
pub(crate) async fn cancel(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let result = state.requests.cancel(posted.person.principal(), &id).await;
    finish(&state, &posted, &id, result.map(|_| "cancelled")).await
}

/// `POST /app/requests/{id}/respond`: the answer read from the request's
/// widget.
pub(crate) async fn respond(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let who = posted.person.principal();
    let r = state.requests.get(who, &id).await?;
    let answer = widgets::answer(r.config().map_err(ServiceError::from)?, &posted.form);
    let comment = posted.form.get(widgets::COMMENT_FIELD);
    let result = state
        .requests
        .respond(who, &id, Some(answer), comment)
        .await;
    finish(&state, &posted, &id, result.map(|_| "answered")).await
}

/// `POST /app/requests/{id}/feedback`: the requester's rating and comment.
pub(crate) async fn feedback(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let (person, form) = (&posted.person, &posted.form);
    let who = person.principal();
    let rating = form.get("rating").map(str::trim).filter(|r| !r.is_empty());
    let rating = match rating.map(str::parse::<f64>) {
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => {
            let r = state.requests.get(who, &id).await?;
            let view = View {
                problems: Problems::one(
                    StatusCode::BAD_REQUEST,
                    "rating must be a number from 1 to 5",
                ),
                previous: form.clone(),
                notice: None,
            };
            return render(&state, person, &r, view).await;
        }
        None => None,
    };
    let comment = form
        .get("comment")
        .map(|c| c.replace("\r\n", "\n"))
        .filter(|c| !c.trim().is_empty());
    // The form shows the rating and comment only; the rest of the
    // feedback (given through the API) is kept.
    let result = state.requests.rate(who, &id, rating, comment).await;
    finish(&state, &posted, &id, result.map(|_| "feedback")).await
}
