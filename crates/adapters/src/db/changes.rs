//! Change notifications between instances on PostgreSQL: writers send a
//! `NOTIFY` inside the transaction of their change (so it is delivered
//! only if, and when, the change commits), and every instance keeps one
//! connection that `LISTEN`s and passes what it hears to its waiters.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel::PgConnection;
use reviewloop_domain::RequestId;

use super::{cache, Database};
use super::{Conn, DbConnection, DbError, Target};

/// The one channel every instance listens on.
const CHANNEL: &str = "reviewloop_changes";
/// Payload of "new events were numbered".
const EVENTS: &str = "events";
/// Payload of "many requests changed at once" (a loop was deleted).
const EVERYTHING: &str = "everything";
/// How often the listening connection looks for what arrived. Reading
/// what the socket already holds is one non-blocking system call, so this
/// costs next to nothing and bounds the added latency.
const LISTEN_POLL: Duration = Duration::from_millis(5);
/// Pause before connecting again after the connection is lost.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// What another instance (or this one) announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// This request changed.
    Request(RequestId),
    /// New events were given stream positions.
    EventsNumbered,
    /// The listener (re)connected and may have missed announcements, or
    /// many requests changed at once: every waiter should look again.
    Resumed,
}

fn notify(conn: &mut Conn, payload: &str) -> Result<(), DbError> {
    if let DbConnection::Postgres(pg) = conn {
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(CHANNEL)
            .bind::<Text, _>(payload)
            .execute(pg)?;
    }
    Ok(())
}

/// Announces, when the current transaction commits, that request `id`
/// changed. On SQLite, where one instance's waiters are woken in process,
/// it only has the request's in-memory copy dropped after the commit.
pub(super) fn request_changed(conn: &mut Conn, id: &str) -> Result<(), DbError> {
    match conn {
        DbConnection::Sqlite(_) => {
            cache::request_changed(id);
            Ok(())
        }
        DbConnection::Postgres(_) => notify(conn, id),
    }
}

/// Announces, on PostgreSQL, that each of the requests `ids` changed, in
/// one statement (the caller is on PostgreSQL: see `set_based`).
pub(super) fn requests_changed(pg: &mut PgConnection, ids: &[&str]) -> Result<(), DbError> {
    super::set_based::notify_each(pg, CHANNEL, ids)
}

/// A part of request `id` that no waiter waits for changed (whether its
/// reviewers were notified, when they were reminded): its in-memory copy
/// (SQLite) is dropped after the commit, and nobody is woken.
pub(super) fn request_touched(conn: &mut Conn, id: &str) {
    if let DbConnection::Sqlite(_) = conn {
        cache::request_changed(id);
    }
}

/// Loop `id`, or its members, changed: its in-memory copy (SQLite) is
/// dropped after the commit. Nobody waits on loops.
pub(super) fn loop_changed(conn: &mut Conn, id: &str) {
    if let DbConnection::Sqlite(_) = conn {
        cache::loop_changed(id);
    }
}

/// Announces, at commit, that requests changed that nobody listed (a
/// deleted loop took its requests with it): every waiter should look again,
/// and every in-memory copy (SQLite) is dropped.
pub(super) fn everything_changed(conn: &mut Conn) -> Result<(), DbError> {
    match conn {
        DbConnection::Sqlite(_) => {
            cache::everything_changed();
            Ok(())
        }
        DbConnection::Postgres(_) => notify(conn, EVERYTHING),
    }
}

/// Announces that events were numbered.
pub(super) fn events_numbered(conn: &mut Conn) -> Result<(), DbError> {
    notify(conn, EVENTS)
}

fn parse(payload: &str) -> Option<Change> {
    if payload == EVENTS {
        return Some(Change::EventsNumbered);
    }
    if payload == EVERYTHING {
        return Some(Change::Resumed);
    }
    payload.parse().ok().map(Change::Request)
}

/// Stops the listener when dropped.
#[derive(Debug)]
pub struct ChangeListener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for ChangeListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn listen_once(
    url: &str,
    stop: &AtomicBool,
    on_change: &(dyn Fn(Change) + Send + Sync),
) -> Result<(), String> {
    let mut conn = PgConnection::establish(url).map_err(|e| e.to_string())?;
    conn.batch_execute(&format!("LISTEN {CHANNEL}"))
        .map_err(|e| e.to_string())?;
    on_change(Change::Resumed);
    while !stop.load(Ordering::Relaxed) {
        for notification in conn.notifications_iter() {
            let notification = notification.map_err(|e| e.to_string())?;
            if let Some(change) = parse(&notification.payload) {
                on_change(change);
            }
        }
        std::thread::sleep(LISTEN_POLL);
    }
    Ok(())
}

impl Database {
    /// On PostgreSQL, starts a thread that hears every instance's change
    /// announcements and hands them to `on_change`, reconnecting when the
    /// connection is lost; `None` on SQLite, which has no other instances.
    pub fn listen_for_changes(
        &self,
        on_change: impl Fn(Change) + Send + Sync + 'static,
    ) -> Option<ChangeListener> {
        let Target::Postgres(url) = self.target.clone() else {
            return None;
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("reviewloop-listen".into())
            .spawn(move || {
                while !stopping.load(Ordering::Relaxed) {
                    if let Err(error) = listen_once(&url, &stopping, &on_change) {
                        tracing::warn!(%error, "change notifications lost; reconnecting");
                        std::thread::sleep(RECONNECT_AFTER);
                    }
                }
            })
            .ok()?;
        Some(ChangeListener {
            stop,
            thread: Some(thread),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdb::TestDb;
    use super::super::write;
    use super::*;
    use std::sync::Mutex;

    #[tokio::test]
    async fn a_change_is_heard_after_its_commit_and_never_after_a_rollback() {
        let Some(db) = TestDb::postgres() else {
            assert!(TestDb::sqlite().db.listen_for_changes(|_| {}).is_none());
            return;
        };
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let _listener = db
            .db
            .listen_for_changes(move |change| sink.lock().unwrap().push(change))
            .unwrap();
        let wait_for = |n: usize| {
            let heard = heard.clone();
            async move {
                for _ in 0..200 {
                    if heard.lock().unwrap().len() >= n {
                        return heard.lock().unwrap().clone();
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                heard.lock().unwrap().clone()
            }
        };
        assert_eq!(wait_for(1).await, [Change::Resumed]);
        let id: RequestId = "0123456789abcdef01234567".parse().unwrap();
        let rolled_back = db
            .db
            .run(|conn| {
                write(conn, |conn| -> Result<(), DbError> {
                    request_changed(conn, "aaaaaaaaaaaaaaaaaaaaaaaa")?;
                    Err(reviewloop_ports::StoreError::Conflict("undo".into()).into())
                })
            })
            .await;
        assert!(rolled_back.is_err());
        db.db
            .run(move |conn| {
                write(conn, |conn| {
                    request_changed(conn, &id.to_string())?;
                    events_numbered(conn)
                })
            })
            .await
            .unwrap();
        assert_eq!(
            wait_for(3).await,
            [Change::Resumed, Change::Request(id), Change::EventsNumbered],
            "the rolled-back announcement was never sent"
        );
    }
}
