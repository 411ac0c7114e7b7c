//! The page shell (head, navigation, footer), the response every page
//! goes out in (with its security headers), and small pieces many pages
//! show: priority badges, times, status words.

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use chrono::{DateTime, Utc};
use maud::{html, Markup, DOCTYPE};
use reviewloop_domain::{Priority, RequestStatus};

use crate::assets;
use crate::session::Person;

/// Which navigation entry is current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    None,
    Inbox,
    Loops,
    Requests,
    Templates,
    Keys,
    Analytics,
    Webhooks,
    Account,
}

/// No inline script and no inline style: everything comes from this site's
/// own files, so injected markup cannot run. Images may come from anywhere
/// over https (automations send image URLs), and from `data:` for QR codes.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data: https:; connect-src 'self'; manifest-src 'self'; \
    form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// A page as an HTTP response, with the headers every page carries.
pub(crate) fn respond(status: StatusCode, page: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(ContentType::html())
        .insert_header(("content-security-policy", CONTENT_SECURITY_POLICY))
        .insert_header(("x-frame-options", "DENY"))
        .insert_header(("x-content-type-options", "nosniff"))
        .insert_header(("referrer-policy", "same-origin"))
        // Pages show private data: never keep them in shared caches.
        .insert_header(CacheControl(vec![
            CacheDirective::NoStore,
            CacheDirective::Private,
        ]))
        .body(page.into_string())
}

/// A 200 page.
pub(crate) fn ok(page: Markup) -> HttpResponse {
    respond(StatusCode::OK, page)
}

/// A 303 to `to` (after a form).
pub(crate) fn redirect(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header(("location", to))
        .finish()
}

/// The whole page around `body`.
pub(crate) fn page(title: &str, person: Option<&Person>, nav: Nav, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · reviewloop" }
                link rel="stylesheet" href=(assets::css_path());
                link rel="icon" href="/favicon.svg" type="image/svg+xml";
                // Lets a phone keep the inbox on its home screen, which is
                // where iOS allows Web Push.
                link rel="manifest" href="/app/manifest.webmanifest";
                script src=(assets::js_path()) defer {}
            }
            body {
                header.top {
                    a.brand href="/" { "reviewloop" }
                    @if let Some(person) = person {
                        // Wide screens show every entry in one row; a phone
                        // shows the inbox and a menu that folds the rest,
                        // so the bar stays one row (works without script).
                        nav.wide aria-label="Main" {
                            (entries(person, nav))
                            (sign_out(person))
                        }
                        a.narrow-inbox href="/app" aria-current=[(nav == Nav::Inbox).then_some("page")] { "Inbox" }
                        details.menu {
                            summary { "Menu" }
                            nav aria-label="Menu" {
                                (entries(person, nav))
                                (sign_out(person))
                            }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The navigation's entries: the inbox, the loops (a reviewer's
/// notification choices live there) and the account for everyone; the
/// owner's pages (requests, templates, analytics, keys, webhooks) for an
/// account that sends requests. Anyone may still open them by address.
fn entries(person: &Person, nav: Nav) -> Markup {
    html! {
        (item("/app", "Inbox", nav == Nav::Inbox))
        (item("/app/loops", "Loops", nav == Nav::Loops))
        @if person.sends_requests {
            (item("/app/requests", "Requests", nav == Nav::Requests))
            (item("/app/templates", "Templates", nav == Nav::Templates))
            (item("/app/analytics", "Analytics", nav == Nav::Analytics))
            (item("/app/keys", "API keys", nav == Nav::Keys))
            (item("/app/webhooks", "Webhooks", nav == Nav::Webhooks))
        }
        (item("/app/account", "Account", nav == Nav::Account))
    }
}

fn sign_out(person: &Person) -> Markup {
    html! {
        form.signout method="post" action="/logout" {
            (csrf_field(person.csrf()))
            button.link type="submit" title=(person.principal().email.as_str()) { "Sign out" }
        }
    }
}

fn item(href: &str, label: &str, current: bool) -> Markup {
    html! {
        @if current {
            a href=(href) aria-current="page" { (label) }
        } @else {
            a href=(href) { (label) }
        }
    }
}

/// The hidden anti-forgery field every state-changing form carries.
pub(crate) fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name=(crate::csrf::FIELD) value=(token); }
}

/// A priority as colour and word (colour alone would not be enough).
pub(crate) fn priority_badge(priority: Priority) -> Markup {
    let word = priority.as_str();
    html! { span class={ "badge priority-" (word) } { (word) } }
}

/// A status word, coloured.
pub(crate) fn status_badge(status: RequestStatus) -> Markup {
    let word = status.as_str();
    html! { span class={ "badge status-" (word) } { (word) } }
}

/// "in 3 h 5 min", "in 40 s", "2 min ago", "just now".
pub(crate) fn relative(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (at - now).num_seconds();
    // What happened a moment ago (the page's own answer) is not "in 0 s".
    if secs.abs() < 5 {
        return "just now".into();
    }
    let span = short_span(secs.unsigned_abs());
    if secs >= 0 {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// The title of one request's or review's page: its first line, what it
/// is, and the last six characters of its id, so two that read the same
/// still get titles of their own.
pub(crate) fn item_title(heading: String, kind: &str, id: &str) -> String {
    let short = id.get(id.len().saturating_sub(6)..).unwrap_or(id);
    format!("{} · {kind} {short}", crate::markdown::shorten(heading, 60))
}

/// How long before `deadline` something ended ("12 min before its
/// deadline"), when it was more than a moment.
pub(crate) fn before_deadline(at: DateTime<Utc>, deadline: DateTime<Utc>) -> Option<String> {
    let secs = (deadline - at).num_seconds();
    (secs >= 5).then(|| format!("{} before its deadline", short_span(secs.unsigned_abs())))
}

/// "Answered 3 min ago, 12 min before its deadline".
pub(crate) fn ended(
    word: &str,
    at: DateTime<Utc>,
    deadline: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Markup {
    html! {
        (word) " " (time(at, now))
        @if let Some(ahead) = before_deadline(at, deadline) { ", " (ahead) }
    }
}

fn short_span(secs: u64) -> String {
    let (d, h, m) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{secs} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, h, _) if h > 0 => format!("{d} d {h} h"),
        (d, _, _) => format!("{d} d"),
    }
}

/// A time people read, with the exact instant for machines and tooltips.
/// The script keeps the words current ("in 24 s" ticks down); without it
/// the clock time follows, so a page read later still says when.
pub(crate) fn time(at: DateTime<Utc>, now: DateTime<Utc>) -> Markup {
    let exact = at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    html! {
        time datetime=(at.to_rfc3339()) title=(exact) data-relative { (relative(at, now)) }
        noscript { " (" (exact) ")" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn times_read_like_people_talk() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert_eq!(relative(now + Duration::seconds(40), now), "in 40 s");
        assert_eq!(relative(now + Duration::minutes(185), now), "in 3 h 5 min");
        assert_eq!(relative(now - Duration::minutes(2), now), "2 min ago");
        assert_eq!(relative(now + Duration::hours(50), now), "in 2 d 2 h");
        assert_eq!(relative(now - Duration::milliseconds(300), now), "just now");
    }

    #[test]
    fn an_end_before_the_deadline_says_how_long_before() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert_eq!(
            before_deadline(now, now + Duration::minutes(12)).as_deref(),
            Some("12 min before its deadline")
        );
        assert_eq!(before_deadline(now, now + Duration::seconds(2)), None);
        assert_eq!(before_deadline(now + Duration::minutes(1), now), None);
    }
}
