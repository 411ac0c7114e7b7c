//! `/app/account`: the password, and the secret that signs this account's
//! callbacks.

use actix_web::{web, HttpResponse};
use maud::html;

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::layout::{self, csrf_field, Nav};
use crate::pages::Problems;
use crate::session::{session_cookie, Person};
use crate::state::WebState;

async fn render(
    state: &WebState,
    person: &Person,
    problems: &Problems,
    notice: Option<&str>,
) -> Result<HttpResponse, PageError> {
    let secret = state.accounts.signing_secret(person.principal()).await?;
    let body = html! {
        h1 { "Account" }
        p { "Signed in as " strong { (person.principal().email.as_str()) } }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        section.card {
            h2 { "Password" }
            (problems.show())
            form method="post" action="/app/account" {
                (csrf_field(person.csrf()))
                input type="hidden" name="action" value="password";
                label { "Current password" input type="password" name="current_password" autocomplete="current-password" required; }
                label { "New password " small { "(at least 8 characters)" }
                    input type="password" name="new_password" autocomplete="new-password" minlength="8" required; }
                button.primary type="submit" { "Change password" }
                p.hint { "Every other browser signed in to this account is signed out." }
            }
        }
        section.card {
            h2 { "Callback signing secret" }
            p { "Callbacks of your requests carry an HMAC-SHA256 signature made with this secret." }
            p { input.copy-source #secret type="text" readonly value=(secret) aria-label="Signing secret";
                button.secondary type="button" data-copy="secret" hidden { "Copy" } }
            form method="post" action="/app/account" {
                (csrf_field(person.csrf()))
                input type="hidden" name="action" value="rotate";
                button.danger type="submit" { "Replace the secret" }
                span.hint { " Receivers must be given the new one." }
            }
        }
    };
    Ok(layout::respond(
        problems.status,
        layout::page("Account", Some(person), Nav::Account, body),
    ))
}

/// `GET /app/account`
pub(crate) async fn page(
    state: web::Data<WebState>,
    person: Person,
    query: web::Query<std::collections::HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let notice = query.get("done").map(|d| match d.as_str() {
        "password" => "Password changed.",
        "rotated" => "New signing secret made.",
        _ => "Done.",
    });
    render(&state, &person, &Problems::none(), notice).await
}

/// `POST /app/account` (`action` = `password` or `rotate`)
pub(crate) async fn act(
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let (person, f) = (&posted.person, &posted.form);
    match f.text("action") {
        "password" => match state
            .people
            .change_password(
                person.principal(),
                f.text("current_password"),
                f.text("new_password"),
            )
            .await
        {
            // The change ended every session, this one too: carry on in
            // the new one.
            Ok(done) => {
                let mut response = layout::redirect("/app/account?done=password");
                let _ = response.add_cookie(&session_cookie(&done.token, state.secure_cookies));
                Ok(response)
            }
            Err(error) => {
                let problems = Problems::from_service(error)?;
                render(&state, person, &problems, None).await
            }
        },
        "rotate" => {
            state
                .accounts
                .rotate_signing_secret(person.principal())
                .await?;
            Ok(layout::redirect("/app/account?done=rotated"))
        }
        _ => Err(PageError::Status(
            actix_web::http::StatusCode::BAD_REQUEST,
            "Unknown action".into(),
        )),
    }
}
