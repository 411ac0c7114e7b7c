//! `/app`: a reviewer's inbox in three tabs. Available (pending, sent to
//! me), Mine (claimed by me), Done (answered by me); most urgent first,
//! then oldest. The script reloads the list when the stream says it changed.

use std::collections::HashMap;

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use reviewloop_domain::{LoopId, ReviewRequest};
use reviewloop_ports::InboxView;

use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, priority_badge, Nav};
use crate::markdown::first_line;
use crate::pages::join::join_box;
use crate::session::Person;
use crate::state::WebState;

/// Rows per page.
pub(crate) const PAGE_SIZE: u32 = 25;

/// The tabs, in order: query value, label, view.
const TABS: [(&str, &str, InboxView); 3] = [
    ("available", "Available", InboxView::Available),
    ("mine", "Mine", InboxView::Claimed),
    ("done", "Done", InboxView::Answered),
];

fn tab_of(value: Option<&str>) -> (&'static str, InboxView) {
    TABS.iter()
        .find(|(v, _, _)| Some(*v) == value)
        .map(|(v, _, view)| (*v, *view))
        .unwrap_or(("available", InboxView::Available))
}

fn row(r: &ReviewRequest, loops: &HashMap<LoopId, String>, done: bool) -> Markup {
    let now = Utc::now();
    html! {
        li.request data-priority=(r.priority.as_str()) {
            a href={ "/app/requests/" (r.id) } {
                span.row-top {
                    (priority_badge(r.priority))
                    span.loop-name { (loops.get(&r.loop_id).map(String::as_str).unwrap_or("Loop")) }
                    span.kind { (r.response_type.as_str().replace('_', " ")) }
                }
                span.title { (first_line(&r.request_text, 120)) }
                span.when {
                    @if done {
                        @if let Some(at) = r.response_at { "answered " (layout::time(at, now)) }
                    } @else {
                        "times out " (layout::time(r.timeout_at, now))
                    }
                }
            }
        }
    }
}

/// The inbox's tabs with `current` marked; the last, Reviews, is a page
/// of its own (`/app/reviews`).
pub(crate) fn tabs(current: &str) -> Markup {
    html! {
        nav.tabs aria-label="Inbox views" {
            @for (value, label, _) in TABS {
                a href={ "/app?tab=" (value) } aria-current=[(value == current).then_some("page")] { (label) }
            }
            a href="/app/reviews" aria-current=[(current == "reviews").then_some("page")] { "Reviews" }
        }
    }
}

/// `GET /app[?tab=available|mine|done][&page=N]`
pub(crate) async fn page(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: Person,
) -> Result<HttpResponse, PageError> {
    let q = FormData::query(&req);
    let (tab, view) = tab_of(q.get("tab"));
    let page = q.page_number();
    let who = person.principal();
    let mut requests = state
        .requests
        .inbox(who, view, Some(PAGE_SIZE + 1), Some((page - 1) * PAGE_SIZE))
        .await?;
    let more = requests.len() > PAGE_SIZE as usize;
    requests.truncate(PAGE_SIZE as usize);
    let joined_loops = state.loops.joined(who).await?;
    let loops: HashMap<LoopId, String> = joined_loops
        .iter()
        .map(|l| (l.id, l.name.as_str().to_owned()))
        .collect();
    let welcome = q
        .get("joined")
        .and_then(|id| joined_loops.iter().find(|l| l.id.to_string() == id));
    let list = html! {
        @if requests.is_empty() {
            p.empty {
                @match view {
                    InboxView::Claimed => "You hold no requests. Claim one from Available to work on it.",
                    InboxView::Answered => "You have not answered any request yet.",
                    _ => "Nothing to review right now. New requests appear here as they arrive.",
                }
            }
        } @else {
            ol.requests { @for r in &requests { (row(r, &loops, view == InboxView::Answered)) } }
        }
        nav.pager aria-label="Pages" {
            @if page > 1 { a href={ "/app?tab=" (tab) "&page=" (page - 1) } { "← Newer page" } }
            @if more { a href={ "/app?tab=" (tab) "&page=" (page + 1) } rel="next" { "Next page →" } }
        }
    };
    // The script asks for the list alone when the stream says it changed.
    if req.headers().contains_key("x-partial") {
        return Ok(layout::ok(list));
    }
    let body = html! {
        @if let Some(lp) = welcome {
            p.notice role="status" { "You joined " strong { (lp.name.as_str()) } ". Its new requests will appear here." }
        }
        h1 { "Inbox" }
        @if joined_loops.is_empty() {
            section.card.join-first {
                p { "You are not in any loop yet, so nothing is sent to you. Join one with the code its owner gave you, or "
                    a href="/app/loops" { "create a loop" } "." }
                (join_box(person.csrf(), "", None))
            }
        }
        (tabs(tab))
        div #live-list aria-live="polite" data-stream="/app/stream" data-source={ "/app?tab=" (tab) "&page=" (page) } {
            (list)
        }
        @if !joined_loops.is_empty() {
            details.join-more {
                summary { "Join another loop" }
                (join_box(person.csrf(), "", None))
            }
        }
    };
    let label = TABS
        .iter()
        .find(|(v, _, _)| *v == tab)
        .map_or("Available", |(_, label, _)| *label);
    let title = if page > 1 {
        format!("{label}, page {page} · Inbox")
    } else {
        format!("{label} · Inbox")
    };
    Ok(layout::ok(layout::page(
        &title,
        Some(&person),
        Nav::Inbox,
        body,
    )))
}
