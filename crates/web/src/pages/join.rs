//! `/join/{code}`: where a loop's join link and QR code lead. Signed in,
//! one button joins; signed out, sign in or sign up and land in the loop.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use reviewloop_domain::MemberStatus;
use reviewloop_service::{InviteCodeError, JoinLoopError};

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::encode;
use crate::layout::{self, csrf_field, Nav};
use crate::pages::Problems;
use crate::session::{MaybePerson, Person};
use crate::state::WebState;

const BAD_CODE: &str = "This invite code is not valid: it may be mistyped, or the loop owner \
    made a new one. Ask them for the current join link.";

async fn loop_for(state: &WebState, code: &str) -> Result<reviewloop_domain::Loop, PageError> {
    match state.loops.loop_for_code(code).await {
        Err(InviteCodeError::NotFound(_)) => Err(PageError::NotFound(BAD_CODE.into())),
        other => Ok(other?),
    }
}

/// `GET /join/{code}`
pub(crate) async fn page(
    req: HttpRequest,
    state: web::Data<WebState>,
    code: web::Path<String>,
    person: MaybePerson,
) -> Result<HttpResponse, PageError> {
    // Codes can only be guessed by trying many: make trying slow.
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    let lp = loop_for(&state, &code).await?;
    let here = format!("/join/{}", encode(&code));
    let status = person
        .0
        .as_ref()
        .and_then(|p| lp.member(&p.principal().user_id))
        .map(|m| m.status);
    let body = html! {
        section.card.narrow {
            p.eyebrow { "You are invited to review in" }
            h1 { span.icon { (lp.icon.as_str()) } " " (lp.name.as_str()) }
            @if let Some(d) = &lp.description { p { (d.as_str()) } }
            p.hint { (lp.active_count()) " active reviewer" @if lp.active_count() != 1 { "s" } }
            @match (&person.0, status) {
                (Some(_), Some(MemberStatus::Active)) => {
                    p.notice { "You are a member of this loop." }
                    a.button.primary href="/app" { "Go to your inbox" }
                }
                (Some(p), _) => {
                    form method="post" action=(here) {
                        (csrf_field(p.csrf()))
                        button.primary type="submit" { "Join " (lp.name.as_str()) }
                    }
                    p.hint { "Signed in as " (p.principal().email.as_str()) "." }
                }
                (None, _) => {
                    a.button.primary href={ "/signup?code=" (encode(&code)) } { "Create an account and join" }
                    p { "Already have an account? "
                        a href={ "/login?next=" (encode(&here)) } { "Sign in to join" } }
                }
            }
        }
    };
    let who = person.0.as_ref();
    Ok(layout::respond(
        StatusCode::OK,
        layout::page(&format!("Join {}", lp.name.as_str()), who, Nav::None, body),
    ))
}

/// `POST /join/{code}`: joins as the signed-in person.
pub(crate) async fn join(
    state: web::Data<WebState>,
    code: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    loop_for(&state, &code).await?;
    let (lp, _) = state.loops.join(posted.person.principal(), &code).await?;
    Ok(layout::redirect(&format!("/app?joined={}", lp.id)))
}

/// The invite code in what a person typed or pasted: the code itself, or
/// the join link it came in (`https://…/join/CODE`).
fn code_in(typed: &str) -> &str {
    let typed = typed.trim();
    let after = typed.rsplit_once("/join/").map_or(typed, |(_, rest)| rest);
    after
        .split(['?', '#', '/'])
        .next()
        .unwrap_or_default()
        .trim()
}

/// A box that joins a loop by its code or link, for people signed in
/// already (the inbox shows it; `/app/join` shows it alone with what
/// went wrong beside it).
pub(crate) fn join_box(csrf: &str, typed: &str, problem: Option<&str>) -> Markup {
    html! {
        form.join-box method="post" action="/app/join" {
            (csrf_field(csrf))
            label for="join-code" { "Join a loop" }
            p.hint #join-code-hint { "Paste the join link or type the invite code a loop's owner gave you." }
            div.join-row {
                input #join-code type="text" name="code" value=(typed) required autocomplete="off"
                    spellcheck="false" aria-describedby="join-code-hint"
                    aria-invalid=[problem.map(|_| "true")];
                button type="submit" { "Join" }
            }
            @if let Some(problem) = problem { p.field-error role="alert" { (problem) } }
        }
    }
}

fn join_page(person: &Person, typed: &str, problem: Option<&str>) -> Markup {
    let body = html! {
        section.card.narrow {
            h1 { "Join a loop" }
            (join_box(person.csrf(), typed, problem))
        }
    };
    layout::page("Join a loop", Some(person), Nav::Inbox, body)
}

/// `GET /app/join`
pub(crate) async fn box_page(person: Person) -> HttpResponse {
    layout::ok(join_page(&person, "", None))
}

/// `POST /app/join`: joins the loop whose code or link was typed, as the
/// signed-in person; a wrong code is said beside the box.
pub(crate) async fn join_typed(
    req: HttpRequest,
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    let typed = posted.form.text("code");
    let code = code_in(typed);
    let person = &posted.person;
    let refused = |status: StatusCode, problem: &str| {
        layout::respond(status, join_page(person, typed, Some(problem)))
    };
    if code.is_empty() {
        return Ok(refused(
            StatusCode::BAD_REQUEST,
            "Type the invite code, or paste the join link.",
        ));
    }
    match state.loops.join(person.principal(), code).await {
        Ok((lp, _)) => Ok(layout::redirect(&format!("/app?joined={}", lp.id))),
        Err(JoinLoopError::NotFound(_)) => Ok(refused(StatusCode::BAD_REQUEST, BAD_CODE)),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let said = problems.messages.join(" ");
            Ok(refused(problems.status, &said))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::code_in;

    #[test]
    fn a_code_is_found_in_a_pasted_link() {
        assert_eq!(code_in("  AbC123 "), "AbC123");
        assert_eq!(code_in("https://review.example/join/AbC123"), "AbC123");
        assert_eq!(
            code_in("https://review.example/join/AbC123?x=1#top"),
            "AbC123"
        );
        assert_eq!(code_in("review.example/join/AbC123/"), "AbC123");
        assert_eq!(code_in("   "), "");
    }
}
