//! `/app/webhooks`: the account's webhook subscriptions. Create, edit
//! (target, events, on/off, note), new secret, delete; each one's latest
//! deliveries with every attempt and its response code, and redelivery.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use reviewloop_domain::{DeliveryId, Webhook, WebhookId};
use reviewloop_service::{Failure, WebhookInput, WebhookPatch, WebhookView};

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, csrf_field, Nav};
use crate::pages::Problems;
use crate::session::Person;
use crate::state::WebState;

fn parse_id(raw: &str) -> Result<WebhookId, PageError> {
    WebhookId::parse(raw).map_err(|_| PageError::NotFound("Webhook not found".into()))
}

fn events_of(form: &FormData) -> Option<Vec<String>> {
    let raw = form.text("events");
    let names: Vec<String> = raw
        .split([',', ' ', '\n'])
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    (!names.is_empty()).then_some(names)
}

fn secret_box(view: Option<&WebhookView>) -> Markup {
    html! {
        @if let Some(secret) = view.and_then(|v| v.secret.as_deref()) {
            section.card.created-key role="status" {
                h2 { "Signing secret" }
                p { "Receivers check each delivery's signature with it. Copy it now: it is shown only this once." }
                p { input.copy-source #webhook-secret type="text" readonly value=(secret) aria-label="Signing secret";
                    button.secondary type="button" data-copy="webhook-secret" hidden { "Copy" } }
            }
        }
    }
}

fn list_page(
    person: &Person,
    hooks: &[Webhook],
    created: Option<&WebhookView>,
    problems: &Problems,
    previous: &FormData,
) -> HttpResponse {
    let body = html! {
        h1 { "Webhooks" }
        p.hint { "Every event of your requests and loops is POSTed, signed, to each subscription's URL." }
        (secret_box(created))
        section.card {
            h2 { "Subscriptions" }
            @if hooks.is_empty() { p.empty { "No webhooks yet." } }
            ul.loops {
                @for w in hooks {
                    li { a href={ "/app/webhooks/" (w.id) } { (w.url) }
                        span.hint { " · " (w.events.names().join(", "))
                            @if !w.active { " · off" @if let Some(r) = &w.disabled_reason { " (" (r) ")" } } } }
                }
            }
        }
        section.card {
            h2 { "New webhook" }
            (problems.show())
            form method="post" action="/app/webhooks" {
                (csrf_field(person.csrf()))
                label { "URL" input type="text" name="url" value=(previous.text("url")) placeholder="https://example.com/hooks/reviewloop" required; }
                label { "Events " small { "(comma-separated, * for all)" }
                    input type="text" name="events" value=(previous.get("events").unwrap_or("*")); }
                label { "Note " small { "(optional)" } input type="text" name="description" value=(previous.text("description")); }
                button.primary type="submit" { "Create webhook" }
            }
        }
    };
    layout::respond(
        problems.status,
        layout::page("Webhooks", Some(person), Nav::Webhooks, body),
    )
}

/// `GET /app/webhooks`
pub(crate) async fn list(
    state: web::Data<WebState>,
    person: Person,
) -> Result<HttpResponse, PageError> {
    let hooks = state.webhooks.list(person.principal()).await?;
    Ok(list_page(
        &person,
        &hooks,
        None,
        &Problems::none(),
        &FormData::default(),
    ))
}

/// `POST /app/webhooks`: answered directly, so the secret is shown once.
pub(crate) async fn create(
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let (person, f) = (&posted.person, &posted.form);
    let input = WebhookInput {
        url: Some(f.text("url").trim().to_owned()),
        events: events_of(f),
        secret: None,
        description: f
            .get("description")
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned),
    };
    let (created, problems, previous) =
        Problems::outcome(state.webhooks.create(person.principal(), input).await, f)?;
    let hooks = state.webhooks.list(person.principal()).await?;
    Ok(list_page(
        person,
        &hooks,
        created.as_ref(),
        &problems,
        &previous,
    ))
}

async fn hook_page(
    state: &WebState,
    person: &Person,
    id: &WebhookId,
    view: Option<&WebhookView>,
    problems: Problems,
    notice: Option<&str>,
) -> Result<HttpResponse, PageError> {
    let w = state.webhooks.get(person.principal(), id).await?;
    let deliveries = state.webhooks.deliveries(person.principal(), id).await?;
    let now = Utc::now();
    let action = |what: &str| format!("/app/webhooks/{}/{what}", w.id);
    let body = html! {
        nav.crumbs aria-label="Webhooks" { a href="/app/webhooks" { "← Webhooks" } }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        h1.url { (w.url) }
        @if !w.active { p.problems { "Off" @if let Some(r) = &w.disabled_reason { ": " (r) } } }
        (secret_box(view))
        (problems.show())
        section.card {
            h2 { "Settings" }
            form method="post" action=(action("edit")) {
                (csrf_field(person.csrf()))
                label { "URL" input type="text" name="url" value=(w.url) required; }
                label { "Events " small { "(comma-separated, * for all)" }
                    input type="text" name="events" value=(w.events.names().join(", ")); }
                label { "Note" input type="text" name="description" value=(w.description.as_deref().unwrap_or_default()); }
                label.check { input type="checkbox" name="active" value="true" checked[w.active]; " Deliver events" }
                button.primary type="submit" { "Save" }
            }
        }
        section.card {
            h2 { "Deliveries" }
            @if deliveries.is_empty() { p.empty { "Nothing delivered yet." } }
            @for (d, attempts) in &deliveries {
                details.delivery {
                    summary {
                        span class={ "badge delivery-" (d.status.as_str()) } { (d.status.as_str()) } " "
                        strong { (d.event_type.as_str()) } " "
                        span.hint { (d.attempts) " attempt" @if d.attempts != 1 { "s" }
                            @if let Some(code) = d.last_status_code { " · HTTP " (code) }
                            @if let Some(at) = d.last_attempt_at { " · " (layout::time(at, now)) } }
                    }
                    table {
                        thead { tr { th { "#" } th { "When" } th { "Response" } th { "Time" } } }
                        tbody {
                            @for a in attempts {
                                tr {
                                    td { (a.attempt) }
                                    td { (layout::time(a.attempted_at, now)) }
                                    td { @if let Some(code) = a.status_code { "HTTP " (code) } @else { "no answer" }
                                        @if let Some(e) = &a.error { br; small { (e) } } }
                                    td { (a.latency_ms) " ms" }
                                }
                            }
                        }
                    }
                    form method="post" action=(action("redeliver")) {
                        (csrf_field(person.csrf()))
                        input type="hidden" name="delivery_id" value=(d.id);
                        button.secondary type="submit" { "Deliver again" }
                    }
                }
            }
        }
        section.card.danger-zone {
            h2 { "Test, secret and removal" }
            form.inline method="post" action=(action("test")) {
                (csrf_field(person.csrf()))
                button.secondary type="submit" { "Send a test event" }
            }
            " "
            form.inline method="post" action=(action("rotate")) {
                (csrf_field(person.csrf()))
                button.secondary type="submit" { "Make a new secret" }
            }
            " "
            form.inline method="post" action=(action("delete")) {
                (csrf_field(person.csrf()))
                button.danger type="submit" { "Delete webhook" }
            }
        }
    };
    Ok(layout::respond(
        problems.status,
        layout::page("Webhook", Some(person), Nav::Webhooks, body),
    ))
}

/// `GET /app/webhooks/{id}`
pub(crate) async fn page(
    state: web::Data<WebState>,
    person: Person,
    id: web::Path<String>,
    query: web::Query<std::collections::HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&id)?;
    let notice = query.get("done").map(|d| match d.as_str() {
        "saved" => "Saved.",
        "redelivered" => "The delivery will be made again shortly.",
        _ => "Done.",
    });
    hook_page(&state, &person, &id, None, Problems::none(), notice).await
}

/// The webhook's page after a change: a new secret is shown on this
/// answer only; otherwise back to the page, or the page again with the
/// service's refusal.
async fn finish(
    state: &WebState,
    person: &Person,
    id: &WebhookId,
    outcome: Result<Option<WebhookView>, impl Failure>,
) -> Result<HttpResponse, PageError> {
    match outcome {
        Ok(Some(view)) => hook_page(state, person, id, Some(&view), Problems::none(), None).await,
        Ok(None) => Ok(layout::redirect(&format!("/app/webhooks/{id}?done=saved"))),
        Err(error) => {
            let problems = Problems::from_service(error)?;
            hook_page(state, person, id, None, problems, None).await
        }
    }
}

/// `POST /app/webhooks/{id}/edit`
pub(crate) async fn edit(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let f = &posted.form;
    let patch = WebhookPatch {
        url: Some(f.text("url").trim().to_owned()),
        events: Some(events_of(f).unwrap_or_else(|| vec!["*".into()])),
        active: Some(f.checked("active")),
        description: Some(
            f.get("description")
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_owned),
        ),
        ..WebhookPatch::default()
    };
    let who = posted.person.principal();
    let outcome = state.webhooks.update(who, &id, patch).await.map(|_| None);
    finish(&state, &posted.person, &id, outcome).await
}

/// `POST /app/webhooks/{id}/rotate`: a new signing secret, shown once.
pub(crate) async fn rotate(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let patch = WebhookPatch {
        rotate_secret: true,
        ..WebhookPatch::default()
    };
    let who = posted.person.principal();
    let outcome = state.webhooks.update(who, &id, patch).await.map(Some);
    finish(&state, &posted.person, &id, outcome).await
}

/// `POST /app/webhooks/{id}/redeliver`: one delivery sent again.
pub(crate) async fn redeliver(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let delivery = DeliveryId::parse(posted.form.text("delivery_id"))
        .map_err(|_| PageError::Status(StatusCode::BAD_REQUEST, "No delivery was chosen".into()))?;
    match state
        .webhooks
        .redeliver(posted.person.principal(), &id, &delivery)
        .await
    {
        Ok(_) => Ok(layout::redirect(&format!(
            "/app/webhooks/{id}?done=redelivered"
        ))),
        Err(error) => finish(&state, &posted.person, &id, Err(error)).await,
    }
}

/// `POST /app/webhooks/{id}/test`: a test event, and what the receiver
/// answered.
pub(crate) async fn test(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    let person = &posted.person;
    let outcome = state.webhooks.send_test(person.principal(), &id).await?;
    // The page itself worked (200); the receiver's answer is news.
    let failed = |m: String| Problems::one(StatusCode::OK, m);
    let (problems, said) = match (outcome.status, &outcome.error) {
        (Some(code), _) if outcome.succeeded() => (
            Problems::none(),
            Some(format!(
                "The test event was answered HTTP {code} in {} ms.",
                outcome.latency_ms
            )),
        ),
        (Some(code), _) => (
            failed(format!(
                "The receiver answered HTTP {code}; only a 2xx answer counts as received."
            )),
            None,
        ),
        (None, Some(why)) => (failed(format!("The test event got no answer: {why}")), None),
        (None, None) => (failed("The test event got no answer.".into()), None),
    };
    hook_page(&state, person, &id, None, problems, said.as_deref()).await
}

/// `POST /app/webhooks/{id}/delete`
pub(crate) async fn delete(
    state: web::Data<WebState>,
    path: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let id = parse_id(&path)?;
    state
        .webhooks
        .delete(posted.person.principal(), &id)
        .await?;
    Ok(layout::redirect("/app/webhooks"))
}
