//! `/app/requests`: the requests my automations sent, filtered by status,
//! priority and loop, newest first. Each opens its page (answer, cancel,
//! feedback).

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::html;
use reviewloop_domain::{Priority, RequestStatus};
use reviewloop_service::ListRequestsInput;

use crate::error::PageError;
use crate::form::{encode, FormData};
use crate::layout::{self, priority_badge, status_badge, Nav};
use crate::markdown::first_line;
use crate::pages::Problems;
use crate::session::Person;
use crate::state::WebState;

const PAGE_SIZE: u32 = 50;

/// `GET /app/requests[?status=&priority=&loop=&page=]`
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: Person,
) -> Result<HttpResponse, PageError> {
    let q = FormData::query(&req);
    let pick = |name: &str| {
        q.get(name)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let page = q.page_number();
    let input = ListRequestsInput {
        status: pick("status"),
        priority: pick("priority"),
        loop_id: pick("loop"),
        limit: Some(PAGE_SIZE.to_string()),
        offset: Some(((page - 1) * PAGE_SIZE).to_string()),
        sort: None,
        // A person has no key: the page lists the whole account's.
        scope: None,
    };
    let loops = state.loops.list(person.principal()).await?;
    let (found, problems) = match state.requests.list(person.principal(), input).await {
        Ok((page, _)) => (Some(page), Problems::none()),
        Err(error) => (None, Problems::from_service(error)?),
    };
    let now = Utc::now();
    let selected = |name: &str, value: &str| q.get(name) == Some(value);
    let keep = |p: u32| {
        let mut s = format!("/app/requests?page={p}");
        for name in ["status", "priority", "loop"] {
            if let Some(v) = pick(name) {
                s.push_str(&format!("&{name}={}", encode(&v)));
            }
        }
        s
    };
    let body = html! {
        h1 { "Requests" }
        p.hint { "What your automations sent for review." }
        form.filters method="get" action="/app/requests" {
            label { "Status" select name="status" {
                option value="" { "any" }
                @for s in RequestStatus::ALL { option value=(s.as_str()) selected[selected("status", s.as_str())] { (s.as_str()) } }
            } }
            label { "Priority" select name="priority" {
                option value="" { "any" }
                @for p in Priority::ALL { option value=(p.as_str()) selected[selected("priority", p.as_str())] { (p.as_str()) } }
            } }
            label { "Loop" select name="loop" {
                option value="" { "any" }
                @for lp in &loops { option value=(lp.id) selected[selected("loop", &lp.id.to_string())] { (lp.name.as_str()) } }
            } }
            button.secondary type="submit" { "Filter" }
        }
        (problems.show())
        @if let Some(found) = &found {
            @if found.requests.is_empty() { p.empty { "No requests match." } }
            ol.requests {
                @for r in &found.requests {
                    li.request data-priority=(r.priority.as_str()) {
                        a href={ "/app/requests/" (r.id) } {
                            span.row-top { (priority_badge(r.priority)) " " (status_badge(r.status))
                                span.loop-name { (loops.iter().find(|l| l.id == r.loop_id).map(|l| l.name.as_str()).unwrap_or("")) } }
                            span.title { (first_line(&r.request_text, 120)) }
                            span.when { "sent " (layout::time(r.created_at, now)) }
                        }
                    }
                }
            }
            nav.pager aria-label="Pages" {
                @if page > 1 { a href=(keep(page - 1)) { "← Newer" } }
                @if u64::from(page * PAGE_SIZE) < found.total { a href=(keep(page + 1)) rel="next" { "Older →" } }
                span.hint { (found.total) " in all" }
            }
        }
    };
    Ok(layout::respond(
        problems.status,
        layout::page("Requests", Some(&person), Nav::Requests, body),
    ))
}
