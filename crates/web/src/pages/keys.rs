//! `/app/keys`: the account's API keys. A new key is shown once, in full,
//! with a copy button; afterwards only its prefix.

use actix_web::{web, HttpResponse};
use chrono::Utc;
use maud::html;
use reviewloop_domain::{ApiKey, Permission};
use reviewloop_service::{CreatedKey, NewKey};

use crate::csrf::PersonForm;
use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, csrf_field, Nav};
use crate::pages::Problems;
use crate::session::Person;
use crate::state::WebState;

fn render(
    person: &Person,
    keys: &[ApiKey],
    created: Option<&CreatedKey>,
    problems: &Problems,
    previous: &FormData,
    notice: Option<&str>,
) -> HttpResponse {
    let now = Utc::now();
    let fresh_form = previous.get("rate_limit").is_none();
    let body = html! {
        h1 { "API keys" }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        p.hint { "Programs use a key to send requests and read answers: "
            code { "Authorization: Bearer <key>" } ". The "
            a href="/docs/api" { "API reference" } " lists every operation." }
        @if let Some(c) = created {
            section.card.created-key role="status" {
                h2 { "Your new key" }
                p { "Copy it now: it is shown only this once." }
                p { input.copy-source #new-key type="text" readonly value=(c.plain) aria-label="New API key";
                    button.secondary type="button" data-copy="new-key" hidden { "Copy" } }
            }
        }
        section.card {
            h2 { "Keys" }
            @if keys.is_empty() { p.empty { "No keys yet." } }
            table.keys {
                thead { tr { th { "Name" } th { "Key" } th { "Permissions" } th { "Limit" } th { "Created" } th { span.visually-hidden { "Actions" } } } }
                tbody {
                    @for k in keys {
                        tr.revoked[k.revoked_at.is_some()] {
                            td { (k.name.as_deref().unwrap_or("—")) @if k.test { " " span.badge.test-key title="Its requests are answered by their test_response, never by people" { "test mode" } } }
                            td { code { (k.prefix) "…" } }
                            td { (Permission::join(&k.permissions)) }
                            td { (k.rate_limit) "/h" }
                            td { (layout::time(k.created_at, now)) }
                            td {
                                @if k.revoked_at.is_some() { "revoked" } @else {
                                    form.inline method="post" action={ "/app/keys/" (k.id) "/revoke" } {
                                        (csrf_field(person.csrf()))
                                        button.link.danger type="submit" { "Revoke" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        section.card {
            h2 { "New key" }
            (problems.show())
            form method="post" action="/app/keys" {
                (csrf_field(person.csrf()))
                label { "Name " small { "(what uses it)" }
                    input type="text" name="name" value=(previous.text("name")) maxlength="100" placeholder="n8n workflow"; }
                fieldset.checks {
                    legend { "Permissions" }
                    @for p in Permission::ALL {
                        label.check { input type="checkbox" name="permissions" value=(p.as_str())
                            checked[fresh_form || previous.all("permissions").contains(&p.as_str())]; " " (p.as_str()) }
                    }
                }
                label { "Calls per hour"
                    input type="number" name="rate_limit" min="1" step="1"
                        value=(previous.get("rate_limit").unwrap_or("100")) required; }
                label.check { input type="checkbox" name="test" value="true" checked[previous.checked("test")];
                    span { " Test mode: its requests are answered by their " code { "test_response" } " on the account's test clock, never sent to people, and it sees only test data" } }
                button.primary type="submit" { "Create key" }
            }
        }
    };
    layout::respond(
        problems.status,
        layout::page("API keys", Some(person), Nav::Keys, body),
    )
}

/// `GET /app/keys`
pub(crate) async fn page(
    state: web::Data<WebState>,
    person: Person,
    req: actix_web::HttpRequest,
) -> Result<HttpResponse, PageError> {
    let keys = state.accounts.own_keys(person.principal()).await?;
    let notice = match FormData::query(&req).get("done") {
        Some("revoked") => Some("The key was revoked: calls with it are refused from now on."),
        _ => None,
    };
    Ok(render(
        &person,
        &keys,
        None,
        &Problems::none(),
        &FormData::default(),
        notice,
    ))
}

/// `POST /app/keys`: the page answers directly (no redirect), so the new
/// key is never put in a URL or kept anywhere but this one response.
pub(crate) async fn create(
    state: web::Data<WebState>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    let (person, f) = (&posted.person, &posted.form);
    let permissions = f.all("permissions").join(",");
    let rate_limit = f.text("rate_limit").trim();
    let outcome = match rate_limit.parse::<u32>() {
        Ok(limit) => {
            let new = NewKey {
                email: String::new(),
                permissions: Some(permissions),
                rate_limit: Some(limit),
                name: f.get("name").map(str::to_owned),
                plan: None,
                test: f.checked("test"),
            };
            state.accounts.create_own_key(person.principal(), new).await
        }
        Err(_) => Err(reviewloop_domain::ValidationError::field(
            "rate_limit",
            "rate_limit must be a whole number of calls per hour",
        )
        .into()),
    };
    let (created, problems, previous) = Problems::outcome(outcome, f)?;
    let keys = state.accounts.own_keys(person.principal()).await?;
    Ok(render(
        person,
        &keys,
        created.as_ref(),
        &problems,
        &previous,
        None,
    ))
}

/// `POST /app/keys/{id}/revoke`
pub(crate) async fn revoke(
    state: web::Data<WebState>,
    id: web::Path<String>,
    posted: PersonForm,
) -> Result<HttpResponse, PageError> {
    if !posted.form.checked(crate::pages::CONFIRMED) {
        // Only the account's own keys are asked about: others get a 404.
        let keys = state.accounts.own_keys(posted.person.principal()).await?;
        let Some(key) = keys.iter().find(|k| k.id.to_string() == *id) else {
            return Err(PageError::NotFound("API key not found".into()));
        };
        let name = key.name.clone().unwrap_or_else(|| "without a name".into());
        let question = html! {
            p { "Revoke the key " strong { (name) } " (" code { (key.prefix) "…" } ")? "
                "Every program that uses it is refused from the next call on; this cannot be undone." }
        };
        let asked = crate::pages::Confirmation {
            title: "Revoke this key?",
            question,
            action: format!("/app/keys/{id}/revoke"),
            fields: &[],
            confirm: "Revoke key",
            back: "/app/keys".into(),
        };
        return Ok(asked.page(&posted.person, Nav::Keys));
    }
    state
        .accounts
        .revoke_own_key(posted.person.principal(), &id)
        .await?;
    Ok(layout::redirect("/app/keys?done=revoked"))
}
