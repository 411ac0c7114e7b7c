//! `/answer/{token}`: where an email's one-click answer leads. The link
//! is the member's capability, so no sign-in is needed; a GET only shows
//! what it would do (mail scanners fetch links), and the page's button
//! POSTs the answer.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use reviewloop_domain::RequestStatus;
use reviewloop_service::{OneClick, OneClickError, OneClickState};

use crate::csrf::same_origin;
use crate::error::PageError;
use crate::layout::{self, Nav};
use crate::markdown;
use crate::state::WebState;

const GONE: &str = "This answer link is not valid: it was used already, or it was never sent. \
    Open the request from your inbox instead.";

/// A missing or spent link is a 404 page that says so; the rest is the
/// service's error as a page.
fn failed(error: OneClickError) -> PageError {
    match error {
        OneClickError::NotFound(_) => PageError::NotFound(GONE.into()),
        other => other.into(),
    }
}

/// `GET /answer/{token}`: what the link would answer, with a button to do it.
pub(crate) async fn page(
    req: HttpRequest,
    state: web::Data<WebState>,
    token: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    // Tokens can only be guessed by trying many: make trying slow.
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    let shown = state.one_click.open(&token).await.map_err(failed)?;
    Ok(render(&token, &shown))
}

/// `POST /answer/{token}`: gives the link's answer as its member.
pub(crate) async fn answer(
    req: HttpRequest,
    state: web::Data<WebState>,
    token: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    // The token is the secret; a form posted from another site is refused
    // all the same.
    if !same_origin(&req, &state.public_url) {
        return Err(PageError::Forgery);
    }
    let done = state.one_click.answer(&token).await.map_err(failed)?;
    Ok(render(&token, &done))
}

fn render(token: &str, shown: &OneClick) -> HttpResponse {
    let r = &shown.request;
    let body = html! {
        section.card.narrow.one-click {
            p.eyebrow { "A request in " (shown.lp.name.as_str()) }
            div.request-text { (markdown::render(&r.request_text)) }
            @match shown.state {
                OneClickState::Ready => {
                    p { "Answer " strong { (shown.link.label) } " as " (state_email(shown)) "?" }
                    form method="post" action={ "/answer/" (token) } {
                        button.primary type="submit" { "Answer " (shown.link.label) }
                    }
                    p.hint {
                        "Or "
                        a href={ "/app/requests/" (r.id) } { "open the request" }
                        " to answer another way or leave a comment."
                    }
                }
                OneClickState::Answered => {
                    p.notice role="status" { "Done: you answered " strong { (shown.link.label) } "." }
                    a.button href={ "/app/requests/" (r.id) } { "Open the request" }
                }
                OneClickState::Settled => {
                    p.notice role="status" { (what_happened(shown)) }
                    p.hint { "Nothing was changed." }
                    a.button href={ "/app/requests/" (r.id) } { "Open the request" }
                }
            }
        }
    };
    layout::respond(
        StatusCode::OK,
        layout::page("Answer a request", None, Nav::None, body),
    )
}

fn state_email(shown: &OneClick) -> String {
    shown
        .request
        .broadcasted_to
        .iter()
        .find(|b| b.user_id == shown.link.user_id)
        .map(|b| b.email.as_str().to_owned())
        .unwrap_or_else(|| "yourself".into())
}

/// Why the request no longer waits for this answer, in a sentence.
fn what_happened(shown: &OneClick) -> Markup {
    let r = &shown.request;
    let you = shown.link.user_id;
    let by = |user| {
        r.broadcasted_to
            .iter()
            .find(|b| b.user_id == user)
            .map(|b| b.email.as_str().to_owned())
            .unwrap_or_else(|| "another reviewer".into())
    };
    html! {
        @match r.status {
            RequestStatus::Completed if r.response_by == Some(you) => { "You answered this request already." }
            RequestStatus::Completed => {
                @if let Some(who) = r.response_by { (by(who)) } @else { "Someone" }
                " answered this request already."
            }
            RequestStatus::Timeout => { "This request timed out; its default answer stands." }
            RequestStatus::Cancelled => { "The requester cancelled this request." }
            _ if r.quorum.is_some() => { "You answered this request already; it waits for other reviewers." }
            _ => {
                @if let Some(holder) = r.claimed_by { (by(holder)) } @else { "Another reviewer" }
                " is answering this request."
            }
        }
    }
}
