//! Wake-ups for waiting readers: a long-poll waiting for one request to
//! settle, an event stream waiting for new events. Writers in this process
//! and, on PostgreSQL, a listener for the other instances' notifications
//! say what changed; waiters sleep until then instead of reading the
//! database in a loop.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use reviewloop_domain::RequestId;
use tokio::sync::Notify;

/// Who waits for what, and the means to wake them.
#[derive(Debug, Default)]
pub struct ChangeHub {
    requests: Mutex<HashMap<RequestId, (Arc<Notify>, usize)>>,
    events: Notify,
}

/// A waiter's registration for one request; it unregisters when dropped.
#[derive(Debug)]
pub struct RequestWatcher {
    hub: Arc<ChangeHub>,
    id: RequestId,
    notify: Arc<Notify>,
}

impl RequestWatcher {
    /// The handle to wait on. Create its `notified()` future and `enable()`
    /// it before reading, so a change between the read and the wait is not
    /// missed.
    pub fn notify(&self) -> &Notify {
        &self.notify
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

    fn requests(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, (Arc<Notify>, usize)>> {
        // Every change under the lock is a single map operation.
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers interest in request `id`.
    pub fn watch_request(self: &Arc<Self>, id: RequestId) -> RequestWatcher {
        let mut requests = self.requests();
        let entry = requests
            .entry(id)
            .or_insert_with(|| (Arc::new(Notify::new()), 0));
        entry.1 += 1;
        RequestWatcher {
            hub: self.clone(),
            id,
            notify: entry.0.clone(),
        }
    }

    /// Request `id` changed: wakes whoever waits for it.
    pub fn request_changed(&self, id: &RequestId) {
        if let Some((notify, _)) = self.requests().get(id) {
            notify.notify_waiters();
        }
    }

    /// Something may have changed unseen (a lost connection to the other
    /// instances' notifications): wakes every waiter to look again.
    pub fn wake_everyone(&self) {
        for (notify, _) in self.requests().values() {
            notify.notify_waiters();
        }
        self.events.notify_waiters();
    }

    /// New events may be readable: wakes every event stream.
    pub fn events_numbered(&self) {
        self.events.notify_waiters();
    }

    /// What event streams wait on.
    pub fn events(&self) -> &Notify {
        &self.events
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
