//! Answers of `GET /requests/{id}` kept as bytes while the request they
//! show stays the same: a poll that finds nothing new, or the thousands of
//! long-polls one answer wakes, write bytes already made instead of
//! serializing the request again each.
//!
//! "The same" is the same shared state: the service hands every reader of
//! an unchanged request the same `Arc`, and a change makes a new one. An
//! answer is kept with the `Arc` it was made from (so that state cannot be
//! freed and its address reused) and the viewer it was made for (what a
//! viewer sees depends on who it is).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use actix_web::web::Bytes;
use reviewloop_domain::{RequestId, ReviewRequest, UserId};

use crate::envelope::Surface;

/// Answers kept at most.
const KEPT: usize = 1024;

struct Rendered {
    state: Arc<ReviewRequest>,
    viewer: UserId,
    surface: Surface,
    body: Bytes,
}

/// The answers kept, one per request.
#[derive(Default)]
pub(crate) struct RenderedRequests {
    kept: Mutex<HashMap<RequestId, Rendered>>,
}

impl RenderedRequests {
    /// The answer showing `state` to `viewer` in the envelope of
    /// `surface`: the one made before, or made now by `render` and kept.
    pub(crate) fn body(
        &self,
        state: &Arc<ReviewRequest>,
        viewer: &UserId,
        surface: Surface,
        render: impl FnOnce() -> Bytes,
    ) -> Bytes {
        let kept = |map: &HashMap<RequestId, Rendered>| {
            map.get(&state.id)
                .filter(|r| {
                    Arc::ptr_eq(&r.state, state) && r.viewer == *viewer && r.surface == surface
                })
                .map(|r| r.body.clone())
        };
        if let Some(body) = kept(&self.lock()) {
            return body;
        }
        // Made outside the lock: serializing a large request takes a while.
        let body = render();
        let mut map = self.lock();
        if map.len() >= KEPT && !map.contains_key(&state.id) {
            if let Some(old) = map.keys().next().copied() {
                map.remove(&old);
            }
        }
        map.insert(
            state.id,
            Rendered {
                state: state.clone(),
                viewer: *viewer,
                surface,
                body: body.clone(),
            },
        );
        body
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Rendered>> {
        // Every change under the lock is one map operation.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn request(text: &str) -> Arc<ReviewRequest> {
        let fields = reviewloop_domain::RequestInput {
            request_text: Some(text.into()),
            content_type: Some("markdown".into()),
            response_type: Some("boolean".into()),
            priority: Some("low".into()),
            processing_type: Some("deferred".into()),
            ..Default::default()
        }
        .validate()
        .unwrap();
        let id = |n| reviewloop_domain::ObjectId::from_parts(1_800_000_000, [n; 8]);
        Arc::new(ReviewRequest::create(
            RequestId::new(id(1)),
            reviewloop_domain::LoopId::new(id(2)),
            UserId::new(id(3)),
            None,
            fields,
            Vec::new(),
            chrono::Utc::now(),
        ))
    }

    #[test]
    fn an_answer_is_made_once_per_state_and_viewer() {
        let kept = RenderedRequests::default();
        let made = Cell::new(0);
        let render = |text: &'static str| {
            made.set(made.get() + 1);
            Bytes::from_static(text.as_bytes())
        };
        let first = request("first");
        let viewer = first.creator_id;
        let a = Surface::Request;
        assert_eq!(kept.body(&first, &viewer, a, || render("a")), "a");
        assert_eq!(kept.body(&first, &viewer, a, || render("b")), "a");
        assert_eq!(made.get(), 1, "the same state is not serialized again");
        // Another viewer sees the request its own way.
        let other = UserId::new(reviewloop_domain::ObjectId::from_parts(1, [9; 8]));
        assert_eq!(kept.body(&first, &other, a, || render("c")), "c");
        // A new state of the same request (even an equal one) is made anew.
        let second = Arc::new((*first).clone());
        assert_eq!(kept.body(&second, &viewer, a, || render("d")), "d");
        // Another envelope is another answer.
        let b = Surface::Alternate;
        assert_eq!(kept.body(&second, &viewer, b, || render("e")), "e");
        assert_eq!(made.get(), 4);
    }
}
