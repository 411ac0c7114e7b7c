//! `/join/{code}`: where a loop's join link and QR code lead. Signed in,
//! one button joins; signed out, sign in or sign up and land in the loop.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::html;
use reviewloop_domain::MemberStatus;
use reviewloop_service::InviteCodeError;

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::encode;
use crate::layout::{self, csrf_field, Nav};
use crate::session::MaybePerson;
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
