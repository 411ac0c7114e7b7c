//! `/app/account`: the password, this person's Web Push devices, and the
//! secret that signs this account's callbacks.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use maud::{html, Markup};
use reviewloop_domain::{PushSubscription, PushSubscriptionId};
use reviewloop_service::TestPush;

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
    let devices = state.push.devices(person.principal()).await?;
    let body = html! {
        h1 { "Account" }
        p { "Signed in as " strong { (person.principal().email.as_str()) } }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        (devices_card(person, &devices))
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

/// The devices notified of new requests, and the button that adds this one
/// (the script turns it on where the browser can receive pushes).
fn devices_card(person: &Person, devices: &[PushSubscription]) -> Markup {
    let now = chrono::Utc::now();
    html! {
        section.card #devices {
            h2 { "Notifications on your devices" }
            p { "New requests are pushed to these devices as you chose for each loop "
                "(all, high and critical only, or none), even when no reviewloop tab is open." }
            div #push-setup data-csrf=(person.csrf()) {
                button.primary #push-enable type="button" hidden { "Notify me on this device" }
                p.hint #push-state role="status" {
                    "Turning this on needs JavaScript and a browser that receives push notifications."
                }
            }
            @if devices.is_empty() {
                p.hint { "No devices yet." }
            } @else {
                ul.devices {
                    @for device in devices {
                        li {
                            div {
                                strong { (device.device) }
                                p.hint { "Through " code { (device.push_service()) } ", added "
                                    (layout::time(device.created_at, now)) }
                            }
                            div.actions {
                                form method="post" action={ "/app/account/devices/" (device.id) "/test" } {
                                    (csrf_field(person.csrf()))
                                    button.secondary type="submit" { "Send a test" }
                                }
                                form method="post" action={ "/app/account/devices/" (device.id) "/remove" } {
                                    (csrf_field(person.csrf()))
                                    button.danger type="submit" { "Remove" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
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
        "subscribed" => "This device will be notified of new requests.",
        "push" => "Test notification sent: it should appear on that device in a few seconds.",
        "push-gone" => "That device's push service no longer knows it, so it was removed.",
        "device" => "Device removed: it is no longer notified.",
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
            StatusCode::BAD_REQUEST,
            "Unknown action".into(),
        )),
    }
}

fn device_id(raw: &str) -> Result<PushSubscriptionId, PageError> {
    PushSubscriptionId::parse(raw).map_err(|_| PageError::NotFound("Device not found".into()))
}

/// `POST /app/account/devices/{id}/test`: pushes a test notification now.
pub(crate) async fn test_device(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = device_id(&path)?;
    let person = &posted.person;
    match state.push.test(person.principal(), &id).await? {
        TestPush::Sent => Ok(layout::redirect("/app/account?done=push")),
        TestPush::Removed => Ok(layout::redirect("/app/account?done=push-gone")),
        // The page worked; the push service's answer is the news.
        TestPush::Failed(why) => {
            let said = format!("The test notification was not taken: {why}");
            render(&state, person, &Problems::none(), Some(&said)).await
        }
    }
}

/// `POST /app/account/devices/{id}/remove`
pub(crate) async fn remove_device(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = device_id(&path)?;
    state
        .push
        .unsubscribe(posted.person.principal(), &id)
        .await?;
    Ok(layout::redirect("/app/account?done=device"))
}
