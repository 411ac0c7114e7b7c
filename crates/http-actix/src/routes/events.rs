//! `GET /events`: the caller's events as Server-Sent Events. Each event is
//! `id: <position>`, `event: <name>`, `data: <the webhook body>`; a client
//! that reconnects with `Last-Event-ID` gets everything after it. Between
//! looks at the outbox nothing is held and nothing is read: a listener
//! sleeps until new events are numbered (here, or on PostgreSQL by another
//! instance) or its keep-alive is due.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::http::header::{CacheControl, CacheDirective, CONTENT_TYPE};
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::stream;
use reviewloop_service::{ChangeHub, EventStream, Principal};
use reviewloop_wire::events::EventBody;
use serde::Deserialize;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// A comment is sent after this much quiet, so proxies keep the line open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// A stream ends after this long; the client reconnects with
/// `Last-Event-ID` and is authenticated again, so a revoked key or a
/// removed permission stops a listener within this time.
const LIFETIME: Duration = Duration::from_secs(300);
const BATCH: u32 = 100;

#[derive(Deserialize)]
pub(super) struct StreamQuery {
    /// For clients that cannot set headers (`EventSource` in a browser
    /// resuming by hand): the same as `Last-Event-ID`.
    last_event_id: Option<String>,
}

struct Listener {
    events: EventStream,
    changes: Arc<ChangeHub>,
    principal: Principal,
    position: i64,
    greeted: bool,
    quiet_since: Instant,
    opened: Instant,
}

impl Listener {
    /// The next chunk of the stream; `None` ends it (the client reconnects).
    async fn next_chunk(mut self) -> Option<(Result<Bytes, actix_web::Error>, Self)> {
        if !self.greeted {
            self.greeted = true;
            return Some((
                Ok(Bytes::from_static(b"retry: 2000\n: connected\n\n")),
                self,
            ));
        }
        loop {
            // Listening before the read: events numbered between the read
            // and the sleep still wake us.
            let changes = self.changes.clone();
            let numbered = changes.events().notified();
            tokio::pin!(numbered);
            numbered.as_mut().enable();
            // A stopping instance ends its streams; clients reconnect
            // (elsewhere) from their Last-Event-ID. Checked after
            // listening, so a stop between the two still wakes us.
            if self.opened.elapsed() >= LIFETIME || self.changes.is_stopping() {
                return None;
            }
            match self
                .events
                .after(&self.principal, self.position, BATCH)
                .await
            {
                Ok(batch) if !batch.is_empty() => {
                    let mut chunk = String::new();
                    for (position, event) in batch {
                        self.position = position;
                        // A test-mode key hears test events only; a live
                        // key never hears them.
                        if event.test != self.principal.test {
                            continue;
                        }
                        chunk.push_str(&format!(
                            "id: {position}\nevent: {}\ndata: {}\n\n",
                            event.event_type.as_str(),
                            serde_json::to_string(&EventBody::of(&event)).unwrap_or_default()
                        ));
                    }
                    if chunk.is_empty() {
                        continue;
                    }
                    self.quiet_since = Instant::now();
                    return Some((Ok(Bytes::from(chunk)), self));
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error, "event stream read failed; closing it");
                    return None;
                }
            }
            if self.quiet_since.elapsed() >= KEEP_ALIVE {
                self.quiet_since = Instant::now();
                return Some((Ok(Bytes::from_static(b": keep-alive\n\n")), self));
            }
            let wake = (self.quiet_since + KEEP_ALIVE).min(self.opened + LIFETIME);
            tokio::select! {
                () = numbered => {}
                () = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }
}

pub(super) async fn stream(
    state: web::Data<AppState>,
    caller: Caller,
    req: HttpRequest,
    query: web::Query<StreamQuery>,
) -> Result<HttpResponse, ApiError> {
    let resume = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.into_inner().last_event_id);
    let position = state
        .events
        .start(&caller.principal, resume.as_deref())
        .await?;
    let listener = Listener {
        changes: state.events.changes(),
        events: state.events.clone(),
        principal: caller.principal,
        position,
        greeted: false,
        quiet_since: Instant::now(),
        opened: Instant::now(),
    };
    Ok(HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "text/event-stream"))
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        // Tells nginx not to buffer the stream.
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(stream::unfold(listener, Listener::next_chunk)))
}
