//! `/app/stream`: server-sent events that tell an open page its content
//! changed, so the script can fetch it again. An event carries no data of
//! its own; the page reads what it shows through the same checks as any
//! page, so nothing of another account can reach it.
//!
//! The stream sleeps until some request changes or new events are
//! numbered (this instance's writes, or other instances' notifications on
//! PostgreSQL), then reads this person's inbox and reviews again and
//! speaks only if they differ.

use std::time::Duration;

use actix_web::{web, HttpResponse};
use futures_util::stream;
use reviewloop_domain::RequestId;
use reviewloop_ports::InboxView;
use sha2::{Digest, Sha256};

use crate::error::PageError;
use crate::session::Person;
use crate::state::WebState;

/// A comment line at least this often keeps proxies from closing the stream.
const KEEPALIVE: Duration = Duration::from_secs(25);
/// Changes closer together than this are read once.
const SETTLE: Duration = Duration::from_millis(250);
/// The stream ends after this; the browser reconnects (and the session is
/// checked again).
const LIFETIME: Duration = Duration::from_secs(30 * 60);

#[derive(serde::Deserialize)]
pub(crate) struct Watch {
    request: Option<String>,
}

/// What the page shows, reduced to a fingerprint.
async fn fingerprint(
    state: &WebState,
    person: &Person,
    request: Option<&RequestId>,
) -> Option<String> {
    let who = person.principal();
    let mut hash = Sha256::new();
    for view in [InboxView::Available, InboxView::Claimed] {
        for r in state
            .requests
            .inbox(who, view, Some(200), None)
            .await
            .ok()?
        {
            hash.update(r.id.to_string());
            hash.update(r.version.to_le_bytes());
        }
        hash.update(b"|");
    }
    // The reviews this person may answer (the Reviews tab).
    let mine = reviewloop_service::ListReviewsInput {
        role: Some("reviewer".into()),
        limit: Some(reviewloop_service::MAX_REVIEW_PAGE),
        ..Default::default()
    };
    let (reviews, _, _) = state.reviews.list(who, mine).await.ok()?;
    for review in &reviews.reviews {
        hash.update(review.record().id.to_string());
        hash.update(review.record().version.to_le_bytes());
    }
    hash.update(b"|");
    if let Some(id) = request {
        if let Ok(r) = state.requests.get(who, id).await {
            hash.update(r.version.to_le_bytes());
        }
    }
    Some(hex::encode(&hash.finalize()[..8]))
}

struct Cursor {
    state: web::Data<WebState>,
    person: Person,
    request: Option<RequestId>,
    last: Option<String>,
    started: tokio::time::Instant,
}

/// `GET /app/stream[?request=ID]`
pub(crate) async fn events(
    state: web::Data<WebState>,
    person: Person,
    watch: web::Query<Watch>,
) -> Result<HttpResponse, PageError> {
    let request = watch
        .request
        .as_deref()
        .map(RequestId::parse)
        .transpose()
        .map_err(|_| PageError::NotFound("Request not found".into()))?;
    let mut cursor = Cursor {
        last: None,
        started: tokio::time::Instant::now(),
        state,
        person,
        request,
    };
    cursor.last = fingerprint(&cursor.state, &cursor.person, cursor.request.as_ref()).await;
    let body = stream::unfold(Some(cursor), |cursor| async move {
        let mut c = cursor?;
        let hub = c.state.changes.clone();
        loop {
            let changed = hub.pages().notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            // Checked after listening: a stop between the two still wakes us.
            if c.started.elapsed() > LIFETIME || hub.is_stopping() {
                return None;
            }
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep(KEEPALIVE) => {
                    // Quiet: also the moment to see the session still stands.
                    let token = c.person.token.clone();
                    let alive = matches!(c.state.people.session(&token).await, Ok(Some(_)));
                    if !alive {
                        return None;
                    }
                    let line = web::Bytes::from_static(b": keepalive\n\n");
                    return Some((Ok::<_, actix_web::Error>(line), Some(c)));
                }
            }
            tokio::time::sleep(SETTLE).await;
            let now = fingerprint(&c.state, &c.person, c.request.as_ref()).await;
            if now.is_some() && now != c.last {
                c.last = now;
                let event = web::Bytes::from_static(b"event: changed\ndata: {}\n\n");
                return Some((Ok(event), Some(c)));
            }
        }
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-store"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}
