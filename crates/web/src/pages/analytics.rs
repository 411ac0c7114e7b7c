//! `/app/analytics`: how my requests fared over 7 or 30 days, overall or
//! per loop, with charts drawn on the server as SVG (no script library).

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use reviewloop_domain::LoopId;
use reviewloop_service::{Analytics, ANALYTICS_WINDOWS};

use crate::error::PageError;
use crate::form::FormData;
use crate::layout::{self, Nav};
use crate::session::Person;
use crate::state::WebState;

fn duration(seconds: Option<f64>) -> String {
    match seconds {
        None => "—".into(),
        Some(s) if s < 90.0 => format!("{s:.0} s"),
        Some(s) if s < 5400.0 => format!("{:.0} min", s / 60.0),
        Some(s) => format!("{:.1} h", s / 3600.0),
    }
}

/// Vertical bars, one per day.
fn per_day_chart(a: &Analytics) -> Markup {
    let (w, h, pad) = (600.0, 160.0, 20.0);
    let max = a.per_day.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1) as f64;
    let slot = (w - pad) / a.per_day.len().max(1) as f64;
    html! {
        svg.chart viewBox={ "0 0 " (w) " " (h + pad) } role="img"
            aria-label={ "Requests per day over " (a.days) " days" } {
            @for (i, (day, n)) in a.per_day.iter().enumerate() {
                @let bar = (*n as f64 / max) * h;
                rect.bar x=(format!("{:.1}", pad + i as f64 * slot + slot * 0.15))
                    y=(format!("{:.1}", h - bar)) width=(format!("{:.1}", slot * 0.7))
                    height=(format!("{:.1}", bar.max(0.5))) {
                    title { (day.format("%b %-d")) ": " (n) }
                }
            }
            line.axis x1=(pad) y1=(h) x2=(w) y2=(h) {}
            text.label x=(pad) y=(h + 15.0) { (a.per_day.first().map(|d| d.0.format("%b %-d").to_string()).unwrap_or_default()) }
            text.label x=(w) y=(h + 15.0) text-anchor="end" { (a.per_day.last().map(|d| d.0.format("%b %-d").to_string()).unwrap_or_default()) }
            text.label x="0" y="12" { (max as usize) }
        }
    }
}

/// Horizontal bars with their labels and counts.
fn bars(label: &str, rows: &[(String, usize)]) -> Markup {
    let max = rows.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1) as f64;
    let row_h = 26.0;
    let height = row_h * rows.len().max(1) as f64;
    html! {
        svg.chart.hbars viewBox={ "0 0 600 " (height) } role="img" aria-label=(label) {
            @for (i, (name, n)) in rows.iter().enumerate() {
                @let y = i as f64 * row_h;
                text.label x="0" y=(format!("{:.1}", y + 17.0)) { (name) }
                rect.bar x="200" y=(format!("{:.1}", y + 4.0))
                    width=(format!("{:.1}", (*n as f64 / max) * 340.0))
                    height="18" { title { (name) ": " (n) } }
                text.label x=(format!("{:.1}", 206.0 + (*n as f64 / max) * 340.0)) y=(format!("{:.1}", y + 17.0)) { (n) }
            }
        }
    }
}

/// `GET /app/analytics[?days=7|30][&loop=ID]`
pub(crate) async fn page(
    req: HttpRequest,
    state: web::Data<WebState>,
    person: Person,
) -> Result<HttpResponse, PageError> {
    let q = FormData::query(&req);
    let days = q.get("days").and_then(|d| d.parse().ok()).unwrap_or(7);
    let loop_id = match q.get("loop").filter(|l| !l.is_empty()) {
        Some(raw) => {
            Some(LoopId::parse(raw).map_err(|_| PageError::NotFound("Loop not found".into()))?)
        }
        None => None,
    };
    let a = state
        .analytics
        .of(person.principal(), loop_id, days)
        .await?;
    let loops = state.loops.list(person.principal()).await?;
    let link = |d: u32, l: Option<LoopId>| match l {
        Some(l) => format!("/app/analytics?days={d}&loop={l}"),
        None => format!("/app/analytics?days={d}"),
    };
    let statuses: Vec<(String, usize)> = a
        .by_status
        .iter()
        .map(|(s, n)| (s.as_str().to_owned(), *n))
        .collect();
    let reviewers: Vec<(String, usize)> = a
        .answers_by_reviewer
        .iter()
        .map(|(e, n)| (e.as_str().to_owned(), *n))
        .collect();
    let body = html! {
        h1 { "Analytics" }
        nav.tabs aria-label="Periods" {
            @for d in ANALYTICS_WINDOWS {
                @if d == days { a href=(link(d, loop_id)) aria-current="page" { "Last " (d) " days" } }
                @else { a href=(link(d, loop_id)) { "Last " (d) " days" } }
            }
        }
        form.filters method="get" action="/app/analytics" {
            input type="hidden" name="days" value=(days);
            label { "Loop" select name="loop" {
                option value="" { "all my loops" }
                @for lp in &loops { option value=(lp.id) selected[Some(lp.id) == loop_id] { (lp.name.as_str()) } }
            } }
            button.secondary type="submit" { "Show" }
        }
        div.figures {
            div.figure { span.value { (a.total) } span.hint { "requests" } }
            div.figure { span.value { (duration(a.median_response_seconds)) } span.hint { "median response time" } }
            div.figure { span.value { (duration(a.p90_response_seconds)) } span.hint { "90th percentile" } }
            div.figure { span.value { (a.timeout_rate.map(|r| format!("{:.0} %", r * 100.0)).unwrap_or_else(|| "—".into())) } span.hint { "timed out" } }
            div.figure { span.value { (a.questions_saved) } span.hint { "questions nobody was asked again" } }
        }
        section.card { h2 { "Requests per day" } (per_day_chart(&a)) }
        section.card { h2 { "By status" } (bars("Requests by status", &statuses)) }
        section.card {
            h2 { "Answers per reviewer" }
            @if reviewers.is_empty() { p.empty { "No answers in this window." } }
            @else { (bars("Answers per reviewer", &reviewers)) }
        }
    };
    Ok(layout::ok(layout::page(
        "Analytics",
        Some(&person),
        Nav::Analytics,
        body,
    )))
}
