//! Sign-in, sign-out, sign-up by invitation and the one-time password link.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};

use crate::csrf::{anon_token, AnonForm, PersonForm};
use crate::error::PageError;
use crate::form::{encode, local_path, FormData};
use crate::layout::{self, csrf_field, Nav};
use crate::pages::Problems;
use crate::session::{
    expired_session_cookie, form_cookie, session_cookie, MaybePerson, SESSION_COOKIE,
};
use crate::state::WebState;

/// `/`: the inbox for people signed in, the sign-in page for others.
pub(crate) async fn root(person: MaybePerson) -> HttpResponse {
    layout::redirect(if person.0.is_some() { "/app" } else { "/login" })
}

/// A page shown before sign-in, with the form cookie set if it was missing.
fn anon_page(
    req: &HttpRequest,
    state: &WebState,
    status: StatusCode,
    title: &str,
    body: impl FnOnce(&str) -> Markup,
) -> HttpResponse {
    let (token, fresh) = anon_token(req, || state.people.form_token());
    let mut response = layout::respond(status, layout::page(title, None, Nav::None, body(&token)));
    if fresh {
        let _ = response.add_cookie(&form_cookie(&token, state.secure_cookies));
    }
    response
}

fn login_form(token: &str, email: &str, next: &str, problems: &Problems, open: bool) -> Markup {
    html! {
        section.card.narrow {
            h1 { "Sign in" }
            (problems.show())
            form method="post" action="/login" {
                (csrf_field(token))
                input type="hidden" name="next" value=(next);
                label { "Email" input type="email" name="email" value=(email) autocomplete="username" required autofocus; }
                label { "Password" input type="password" name="password" autocomplete="current-password" required; }
                button.primary type="submit" { "Sign in" }
            }
            p.hint { a href="/forgot" { "Forgot your password?" } }
            p.hint {
                "No account yet? Open the join link a loop owner sent you"
                @if open { ", or " a href="/signup" { "sign up" } }
                "."
            }
        }
    }
}

fn forgot_form(token: &str, email: &str, problems: &Problems, sent: bool) -> Markup {
    html! {
        section.card.narrow {
            h1 { "Forgot your password?" }
            @if sent {
                p.notice role="status" {
                    "If " strong { (email) } " has an account here, a link to set a new password is on its way. "
                    "It works once, for an hour."
                }
                p.hint { "Nothing arrived? Look in your spam folder, or ask again in a few minutes." }
            } @else {
                p { "Enter your email and we send you a link to set a new password." }
            }
            (problems.show())
            form method="post" action="/forgot" {
                (csrf_field(token))
                label { "Email" input type="email" name="email" value=(email) autocomplete="username" required autofocus[!sent]; }
                button.primary type="submit" { @if sent { "Send again" } @else { "Send the link" } }
            }
            p.hint { a href="/login" { "Back to sign in" } }
        }
    }
}

/// `GET /forgot`
pub(crate) async fn forgot_page(req: HttpRequest, state: web::Data<WebState>) -> HttpResponse {
    anon_page(&req, &state, StatusCode::OK, "Forgot your password?", |t| {
        forgot_form(t, "", &Problems::none(), false)
    })
}

/// `POST /forgot`: the same answer whether or not the email has an account.
pub(crate) async fn forgot(
    req: HttpRequest,
    state: web::Data<WebState>,
    posted: AnonForm,
) -> Result<HttpResponse, PageError> {
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    let email = posted.form.text("email").trim().to_owned();
    let client = state.client_of(&req);
    let (sent, problems) = match state.people.request_password_reset(&email, &client).await {
        Ok(()) => (true, Problems::none()),
        Err(error) => (false, Problems::from_service(error)?),
    };
    Ok(anon_page(
        &req,
        &state,
        problems.status,
        "Forgot your password?",
        |t| forgot_form(t, &email, &problems, sent),
    ))
}

/// `GET /login`
pub(crate) async fn login_page(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: MaybePerson,
) -> HttpResponse {
    let q = FormData::query(&req);
    let next = local_path(q.get("next"));
    if person.0.is_some() {
        return layout::redirect(&next);
    }
    let open = state.people.signup_is_open();
    anon_page(&req, &state, StatusCode::OK, "Sign in", |t| {
        login_form(t, "", &next, &Problems::none(), open)
    })
}

fn signed_in(state: &WebState, token: &str, to: &str) -> HttpResponse {
    let mut response = layout::redirect(to);
    let _ = response.add_cookie(&session_cookie(token, state.secure_cookies));
    response
}

/// `POST /login`
pub(crate) async fn login(
    req: HttpRequest,
    state: web::Data<WebState>,
    posted: AnonForm,
) -> Result<HttpResponse, PageError> {
    let f = &posted.form;
    let next = local_path(f.get("next"));
    let client = state.client_of(&req);
    match state
        .people
        .sign_in(f.text("email"), f.text("password"), &client)
        .await
    {
        Ok(done) => {
            // A new session id at every sign-in: a session planted before
            // (fixation) is ended, not reused.
            if let Some(old) = req.cookie(SESSION_COOKIE) {
                let _ = state.people.sign_out(old.value()).await;
            }
            Ok(signed_in(&state, &done.token, &next))
        }
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let open = state.people.signup_is_open();
            let email = f.text("email").to_owned();
            Ok(anon_page(&req, &state, problems.status, "Sign in", |t| {
                login_form(t, &email, &next, &problems, open)
            }))
        }
    }
}

/// `POST /logout`
pub(crate) async fn logout(
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    state.people.sign_out(&posted.person.token).await?;
    let mut response = layout::redirect("/login");
    let _ = response.add_cookie(&expired_session_cookie(state.secure_cookies));
    Ok(response)
}

fn signup_form(
    token: &str,
    form: &FormData,
    code: Option<&str>,
    problems: &Problems,
    loop_name: Option<&str>,
) -> Markup {
    html! {
        section.card.narrow {
            h1 { "Create your account" }
            @if let Some(name) = loop_name {
                p { "You will join " strong { (name) } " and see its requests in your inbox." }
            }
            (problems.show())
            form method="post" action="/signup" {
                (csrf_field(token))
                label { "Email" input type="email" name="email" value=(form.text("email")) autocomplete="email" required autofocus; }
                label { "Password " small { "(at least 8 characters)" }
                    input type="password" name="password" autocomplete="new-password" minlength="8" required; }
                @match code {
                    Some(code) => { input type="hidden" name="code" value=(code); }
                    None => { label { "Invite code " small { "(from the join link or QR code)" }
                        input type="text" name="code" value=(form.text("code")) autocomplete="off"; } }
                }
                button.primary type="submit" { "Create account" }
            }
            p.hint { "Already have an account? " a href="/login" { "Sign in" } }
        }
    }
}

/// `GET /signup[?code=CODE]`
pub(crate) async fn signup_page(
    req: HttpRequest,
    state: web::Data<WebState>,
) -> Result<HttpResponse, PageError> {
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    let q = FormData::query(&req);
    let code = q.get("code").map(str::to_owned);
    let lp = match &code {
        Some(code) => Some(state.loops.loop_for_code(code).await?),
        None => None,
    };
    let name = lp.as_ref().map(|l| l.name.as_str().to_owned());
    Ok(anon_page(&req, &state, StatusCode::OK, "Sign up", |t| {
        signup_form(
            t,
            &FormData::default(),
            code.as_deref(),
            &Problems::none(),
            name.as_deref(),
        )
    }))
}

/// `POST /signup`
pub(crate) async fn signup(
    req: HttpRequest,
    state: web::Data<WebState>,
    posted: AnonForm,
) -> Result<HttpResponse, PageError> {
    (state.public_gate)(&req).map_err(PageError::Busy)?;
    let f = &posted.form;
    let code = f.get("code").map(str::trim).filter(|c| !c.is_empty());
    match state
        .people
        .sign_up(f.text("email"), f.text("password"), code)
        .await
    {
        Ok(done) => {
            let to = match &done.joined {
                Some(lp) => format!("/app?joined={}", lp.id),
                None => "/app".to_owned(),
            };
            Ok(signed_in(&state, &done.signed_in.token, &to))
        }
        Err(error) => {
            let problems = Problems::from_service(error)?;
            Ok(anon_page(&req, &state, problems.status, "Sign up", |t| {
                // A code that came from the join link stays hidden; one
                // typed by hand stays editable.
                signup_form(t, f, None, &problems, None)
            }))
        }
    }
}

fn setup_form(token: &str, link: &str, email: &str, problems: &Problems) -> Markup {
    html! {
        section.card.narrow {
            h1 { "Choose a password" }
            p { "For " strong { (email) } ". This link works once." }
            (problems.show())
            form method="post" action={ "/setup/" (encode(link)) } {
                (csrf_field(token))
                label { "New password " small { "(at least 8 characters)" }
                    input type="password" name="password" autocomplete="new-password" minlength="8" required autofocus; }
                button.primary type="submit" { "Set password and sign in" }
            }
        }
    }
}

/// `GET /setup/{token}`: the one-time password link.
pub(crate) async fn setup_page(
    req: HttpRequest,
    state: web::Data<WebState>,
    link: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let user = state.people.password_link_account(&link).await?;
    Ok(anon_page(
        &req,
        &state,
        StatusCode::OK,
        "Choose a password",
        |t| setup_form(t, &link, user.email.as_str(), &Problems::none()),
    ))
}

/// `POST /setup/{token}`
pub(crate) async fn setup(
    req: HttpRequest,
    state: web::Data<WebState>,
    link: web::Path<String>,
    posted: AnonForm,
) -> Result<HttpResponse, PageError> {
    match state
        .people
        .redeem_password_link(&link, posted.form.text("password"))
        .await
    {
        Ok(done) => Ok(signed_in(&state, &done.token, "/app")),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            let user = state.people.password_link_account(&link).await?;
            Ok(anon_page(
                &req,
                &state,
                problems.status,
                "Choose a password",
                |t| setup_form(t, &link, user.email.as_str(), &problems),
            ))
        }
    }
}
