//! Wake-ups for waiting readers: a long-poll waiting for one request to
//! settle, an event stream waiting for new events. Writers in this process
//! and, on PostgreSQL, a listener for the other instances' notifications
//! say what changed; waiters sleep until then instead of reading the
//! database in a loop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use reviewloop_domain::{RequestId, ReviewRequest};
use tokio::sync::Notify;

/// What the waiters of one request share: the wake-up, and the request's
/// newest state once someone has it, so that thousands of waiters woken
/// by one answer read it once, not once each.
#[derive(Debug, Default)]
pub struct Watched {
    notify: Notify,
    newest: Mutex<Option<Arc<ReviewRequest>>>,
    reading: tokio::sync::Mutex<()>,
}

impl Watched {
    /// The newest state known, if it is newer than `version`.
    pub fn newer_than(&self, version: i64) -> Option<Arc<ReviewRequest>> {
        self.newest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|r| r.version > version)
    }

    /// Records a state just read or written (kept only if newer).
    pub fn publish(&self, request: Arc<ReviewRequest>) {
        let mut newest = self.newest.lock().unwrap_or_else(PoisonError::into_inner);
        if newest.as_ref().is_none_or(|n| n.version < request.version) {
            *newest = Some(request);
        }
    }

    /// The request changed in a way not known here: the state held is
    /// forgotten (the next waiter reads the new one) and the waiters woken.
    fn changed_elsewhere(&self) {
        *self.newest.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.notify.notify_waiters();
    }

    /// One reader at a time: the others wait, then find its result in
    /// [`Watched::newer_than`].
    pub async fn reading(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.reading.lock().await
    }
}

/// Who waits for what, and the means to wake them.
#[derive(Debug, Default)]
pub struct ChangeHub {
    requests: Mutex<HashMap<RequestId, (Arc<Watched>, usize)>>,
    events: Notify,
    outbox: Notify,
    notices: Notify,
    pages: Notify,
    /// Set once the process is stopping: waiters answer with what they
    /// have, streams end, and the instance says it is not ready.
    stopping: AtomicBool,
}

/// A waiter's registration for one request; it unregisters when dropped.
#[derive(Debug)]
pub struct RequestWatcher {
    hub: Arc<ChangeHub>,
    id: RequestId,
    watched: Arc<Watched>,
}

impl RequestWatcher {
    /// The handle to wait on. Create its `notified()` future before
    /// reading, so a change between the read and the wait is not missed.
    pub fn notify(&self) -> &Notify {
        &self.watched.notify
    }

    /// What this request's waiters share.
    pub fn shared(&self) -> &Watched {
        &self.watched
    }
}

impl Drop for RequestWatcher {
    fn drop(&mut self) {
        let mut requests = self.hub.requests();
        if let Some((_, waiters)) = requests.get_mut(&self.id) {
            *waiters -= 1;
            if *waiters == 0 {
                requests.remove(&self.id);
            }
        }
    }
}

impl ChangeHub {
    /// A hub nobody waits on yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn requests(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, (Arc<Watched>, usize)>> {
        // Every change under the lock is a single map operation.
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers interest in request `id`.
    pub fn watch_request(self: &Arc<Self>, id: RequestId) -> RequestWatcher {
        let mut requests = self.requests();
        let entry = requests.entry(id).or_default();
        entry.1 += 1;
        RequestWatcher {
            hub: self.clone(),
            id,
            watched: entry.0.clone(),
        }
    }

    /// Request `id` changed (elsewhere; its new state is not known here):
    /// forgets the state held for its waiters, so the next of them reads
    /// the new one, and wakes them.
    pub fn request_changed(&self, id: &RequestId) {
        if let Some((watched, _)) = self.requests().get(id) {
            watched.changed_elsewhere();
        }
        self.pages.notify_waiters();
    }

    /// This process wrote `request`'s new state: hands it to whoever
    /// waits for it, and wakes them.
    pub fn request_written(&self, request: &ReviewRequest) {
        let watched = self.requests().get(&request.id).map(|(w, _)| w.clone());
        if let Some(watched) = watched {
            watched.publish(Arc::new(request.clone()));
            watched.notify.notify_waiters();
        }
        self.pages.notify_waiters();
    }

    /// Something may have changed unseen (a lost connection to the other
    /// instances' notifications): wakes every waiter to look again.
    pub fn wake_everyone(&self) {
        for (watched, _) in self.requests().values() {
            watched.changed_elsewhere();
        }
        self.events.notify_waiters();
        self.pages.notify_waiters();
    }

    /// The process is stopping: every long-poll answers with the request
    /// as it is, and every stream ends, so that nothing holds the shutdown.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.wake_everyone();
    }

    /// Whether [`ChangeHub::stop`] was called.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// New events may be readable: wakes every event stream.
    pub fn events_numbered(&self) {
        self.events.notify_waiters();
        self.pages.notify_waiters();
    }

    /// What open pages wait on: some request changed or was created, here
    /// or (on PostgreSQL) on another instance. A page then reads again
    /// what it shows, so nothing of another account's reaches it.
    pub fn pages(&self) -> &Notify {
        &self.pages
    }

    /// What event streams wait on.
    pub fn events(&self) -> &Notify {
        &self.events
    }

    /// This instance committed events to the outbox: wakes the workers
    /// that number and dispatch them, instead of leaving it to their tick.
    pub fn outbox_written(&self) {
        self.outbox.notify_waiters();
    }

    /// What the outbox workers wait on between passes.
    pub fn outbox(&self) -> &Notify {
        &self.outbox
    }

    /// This instance queued notices (a dispatch pass wrote some): wakes
    /// the notice worker, so a new request's email or Slack post leaves
    /// at once rather than at its next tick.
    pub fn notices_written(&self) {
        self.notices.notify_waiters();
    }

    /// What the notice worker waits on between passes.
    pub fn notices(&self) -> &Notify {
        &self.notices
    }

    /// Requests with at least one waiter.
    pub fn watched_requests(&self) -> usize {
        self.requests().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reviewloop_domain::ObjectId;
    use std::time::Duration;

    fn id(n: u8) -> RequestId {
        RequestId::new(ObjectId::from_parts(1, [n; 8]))
    }

    #[tokio::test]
    async fn a_change_wakes_the_waiters_of_that_request_only() {
        let hub = ChangeHub::new();
        let first = hub.watch_request(id(1));
        let also_first = hub.watch_request(id(1));
        let other = hub.watch_request(id(2));
        let woken = first.notify().notified();
        let also_woken = also_first.notify().notified();
        let not_woken = other.notify().notified();
        tokio::pin!(woken, also_woken, not_woken);
        for n in [woken.as_mut(), also_woken.as_mut(), not_woken.as_mut()] {
            n.enable();
        }
        hub.request_changed(&id(1));
        tokio::time::timeout(Duration::from_secs(1), woken)
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(1), also_woken)
            .await
            .unwrap();
        assert!(tokio::time::timeout(Duration::from_millis(50), not_woken)
            .await
            .is_err());
    }

    #[tokio::test]
    async fn a_waiter_that_leaves_is_forgotten() {
        let hub = ChangeHub::new();
        let a = hub.watch_request(id(1));
        let b = hub.watch_request(id(1));
        assert_eq!(hub.watched_requests(), 1);
        drop(a);
        assert_eq!(hub.watched_requests(), 1);
        drop(b);
        assert_eq!(hub.watched_requests(), 0);
        // Nobody waits: a change is a no-op.
        hub.request_changed(&id(1));
    }
}
