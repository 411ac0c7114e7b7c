//! Background work that runs beside the HTTP server.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reviewloop_adapters::SharedRateLimiter;
use reviewloop_service::{
    ChangeHub, DeliveryService, EventStream, IdempotencyService, NoticeService, PeopleService,
    RequestService,
};
use tokio::sync::watch;
use tokio::sync::Semaphore;

/// How many due requests one sweep takes at most (timed out in one
/// transaction).
const TIMEOUT_BATCH: u32 = 1000;
/// Pause between sweeps; requests time out within about this long.
const TIMEOUT_TICK: Duration = Duration::from_millis(250);

/// Runs `pass` (which handles up to `batch` rows and says how many) until
/// told to stop: again at once while passes come back full, since more
/// work is waiting, else after `tick`, or sooner when `wake` says this
/// instance wrote to the outbox.
async fn in_passes<F, Fut, E>(
    what: &'static str,
    batch: u32,
    tick: Duration,
    wake: Option<Arc<ChangeHub>>,
    mut stop: watch::Receiver<bool>,
    mut pass: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<usize, E>>,
    E: std::fmt::Display,
{
    loop {
        // Listening before the pass (a `Notified` hears `notify_waiters`
        // from its creation on): a write during the pass still wakes us.
        let notified = wake.as_ref().map(|hub| hub.outbox().notified());
        let written = async move {
            match notified {
                Some(notified) => notified.await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(written);
        let full_batch = match pass().await {
            Ok(done) => done >= batch as usize,
            Err(error) => {
                tracing::warn!(%error, "{what} failed; retrying");
                false
            }
        };
        if *stop.borrow() {
            break;
        }
        if full_batch {
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            () = &mut written => {}
            _ = stop.changed() => break,
        }
    }
}

/// Ends every open request whose timeout has passed, until told to stop.
/// It reads only due requests (through an index), so a quiet sweep costs
/// one indexed query whatever the number of pending requests.
pub(crate) async fn time_out_due_requests(requests: RequestService, stop: watch::Receiver<bool>) {
    in_passes(
        "timeout sweep",
        TIMEOUT_BATCH,
        TIMEOUT_TICK,
        None,
        stop,
        || async {
            let ended = requests.time_out_due(TIMEOUT_BATCH).await?;
            if ended > 0 {
                tracing::info!(ended, "requests timed out");
            }
            // Test requests fall due on their account's test clock.
            let settled = requests.settle_test_requests(TIMEOUT_BATCH).await?;
            if settled > 0 {
                tracing::info!(settled, "test requests answered or timed out");
            }
            // Requests left open when the one they joined ended (an
            // instance stopped between the two writes).
            let followed = requests.settle_stranded(TIMEOUT_BATCH).await?;
            if followed > 0 {
                tracing::info!(followed, "requests ended with the ones they joined");
            }
            Ok::<_, reviewloop_service::SweepError>(ended.max(settled).max(followed))
        },
    )
    .await;
}

/// Sends every pending request whose escalation is due to its other
/// loop, and offers every one nobody claimed in time to the next members
/// its loop's assignment picks, until told to stop; like the timeout
/// sweep, it reads only due requests, through an index.
pub(crate) async fn escalate_due_requests(requests: RequestService, stop: watch::Receiver<bool>) {
    in_passes(
        "escalation sweep",
        TIMEOUT_BATCH,
        TIMEOUT_TICK,
        None,
        stop,
        || async {
            let escalated = requests.escalate_due(TIMEOUT_BATCH).await?;
            if escalated > 0 {
                tracing::info!(escalated, "requests escalated");
            }
            // Requests offered to a few members that nobody claimed in time.
            let reassigned = requests.reassign_due(TIMEOUT_BATCH).await?;
            if reassigned > 0 {
                tracing::info!(reassigned, "requests offered to more members");
            }
            Ok::<_, reviewloop_ports::StoreError>(escalated.max(reassigned))
        },
    )
    .await;
}

/// Events numbered per pass.
const NUMBERING_BATCH: u32 = 500;
/// Pause between passes when nothing was new: how late, at most, a
/// listener of the event stream sees an event after its commit (plus the
/// listener's own look at the outbox).
const NUMBERING_TICK: Duration = Duration::from_millis(100);

/// Gives committed events their stream positions, until told to stop:
/// at once after this instance writes events, else every tick (events of
/// other instances, and writes that do not announce themselves).
pub(crate) async fn number_events(events: EventStream, stop: watch::Receiver<bool>) {
    let hub = events.changes();
    in_passes(
        "numbering events",
        NUMBERING_BATCH,
        NUMBERING_TICK,
        Some(hub),
        stop,
        || events.number_new_events(NUMBERING_BATCH),
    )
    .await;
}

/// Pause between linking passes when nothing was new: how long, at most,
/// an entry waits unlinked (reads of the log link what is waiting first).
const LINKING_TICK: Duration = Duration::from_millis(200);

/// Links audit entries into their accounts' chains, until told to stop.
pub(crate) async fn link_audit_entries(
    audit: reviewloop_service::AuditService,
    stop: watch::Receiver<bool>,
) {
    in_passes(
        "linking audit entries",
        reviewloop_service::LINK_BATCH,
        LINKING_TICK,
        None,
        stop,
        || audit.link(reviewloop_service::LINK_BATCH),
    )
    .await;
}

/// How often expired records are deleted.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// Once an hour, deletes idempotency records older than 24 hours (they
/// are ignored anyway) and history older than `retention_days`: the
/// tables that only grow stay as large as the horizon asks.
pub(crate) async fn purge_old_records(
    idempotency: IdempotencyService,
    deliveries: DeliveryService,
    people: PeopleService,
    retention_days: u32,
    mut stop: watch::Receiver<bool>,
) {
    let keep = chrono::Duration::days(i64::from(retention_days));
    loop {
        match idempotency.purge_expired().await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(purged, "expired idempotency records deleted"),
            Err(error) => tracing::warn!(%error, "idempotency purge failed; retrying later"),
        }
        match deliveries.purge_history(keep).await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(purged, "history past the retention horizon deleted"),
            Err(error) => tracing::warn!(%error, "history purge failed; retrying later"),
        }
        match people.purge_expired().await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(purged, "expired sessions and password links deleted"),
            Err(error) => tracing::warn!(%error, "session purge failed; retrying later"),
        }
        tokio::select! {
            _ = tokio::time::sleep(PURGE_EVERY) => {}
            _ = stop.changed() => break,
        }
    }
}

/// Deliveries in flight at once. Each runs in its own task with its own
/// 10 s limit, so one slow or dead receiver holds one slot, not the queue.
const DELIVERIES_IN_FLIGHT: usize = 32;
/// Events turned into deliveries per pass.
const DISPATCH_BATCH: u32 = 100;
/// Pause between passes when there is nothing to do.
const DELIVERY_TICK: Duration = Duration::from_millis(250);

/// Turns outbox events into deliveries and makes every due attempt, until
/// told to stop. Attempts still running then are simply cut: their leases
/// run out and another pass (or the next start) makes them again, which
/// is what "at least once" allows.
pub(crate) async fn deliver_events(
    deliveries: DeliveryService,
    hub: Arc<ChangeHub>,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(DELIVERIES_IN_FLIGHT));
    // An attempt that ends frees a slot (and its receiver's share): look
    // again at once rather than at the next tick.
    let finished = Arc::new(tokio::sync::Notify::new());
    loop {
        let written = hub.outbox().notified();
        let freed = finished.notified();
        tokio::pin!(written, freed);
        written.as_mut().enable();
        freed.as_mut().enable();
        let mut busy = false;
        match deliveries.dispatch_pending(DISPATCH_BATCH).await {
            Ok(dispatched) => {
                busy |= dispatched > 0;
                // Dispatching may have queued notices: their worker looks now.
                if dispatched > 0 {
                    hub.notices_written();
                }
            }
            Err(error) => tracing::warn!(%error, "event dispatch failed; retrying"),
        }
        let free = slots.available_permits();
        if free > 0 {
            match deliveries
                .lease(u32::try_from(free).unwrap_or(u32::MAX))
                .await
            {
                Ok(leased) => {
                    busy |= !leased.is_empty();
                    for delivery in leased {
                        let Ok(slot) = slots.clone().acquire_owned().await else {
                            break;
                        };
                        let service = deliveries.clone();
                        let finished = finished.clone();
                        tokio::spawn(async move {
                            let _slot = slot;
                            if let Err(error) = service.attempt(delivery).await {
                                tracing::warn!(%error, "could not record a delivery attempt");
                            }
                            finished.notify_waiters();
                        });
                    }
                }
                Err(error) => tracing::warn!(%error, "leasing deliveries failed; retrying"),
            }
        }
        if *stop.borrow() {
            break;
        }
        if busy {
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(DELIVERY_TICK) => {}
            () = &mut written => {}
            () = &mut freed => {}
            _ = stop.changed() => break,
        }
    }
}

/// Emails and Slack messages being sent at once, at most.
const NOTICES_IN_FLIGHT: usize = 8;
/// Pause between passes when there is nothing to send.
const NOTICE_TICK: Duration = Duration::from_millis(250);
/// How often requests are checked for due reminders.
const REMIND_EVERY: Duration = Duration::from_secs(1);
/// Requests handled per reminder transaction.
const REMIND_BATCH: u32 = 200;

/// Sends every due notice, a few at a time, until told to stop. A notice
/// cut off by the stop keeps its lease until it runs out; then this or
/// another instance sends it, so none is lost.
pub(crate) async fn send_notices(
    notices: NoticeService,
    hub: Arc<ChangeHub>,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(NOTICES_IN_FLIGHT));
    let mut reminded = tokio::time::Instant::now() - REMIND_EVERY;
    loop {
        // Listening before the pass: notices queued during it still wake us.
        let queued = hub.notices().notified();
        tokio::pin!(queued);
        queued.as_mut().enable();
        // Reminders become notices here, then go out with the rest.
        if reminded.elapsed() >= REMIND_EVERY {
            reminded = tokio::time::Instant::now();
            loop {
                match notices.remind(REMIND_BATCH).await {
                    // A full batch marked: more may be due.
                    Ok(marked) if marked == REMIND_BATCH as usize => continue,
                    Ok(_) => break,
                    Err(error) => {
                        tracing::warn!(%error, "planning reminders failed; retrying");
                        break;
                    }
                }
            }
        }
        let free = u32::try_from(slots.available_permits()).unwrap_or(u32::MAX);
        let mut busy = false;
        if free > 0 {
            match notices.lease(free).await {
                Ok(leased) => {
                    busy = !leased.is_empty();
                    for notice in leased {
                        let Ok(slot) = slots.clone().acquire_owned().await else {
                            break;
                        };
                        let service = notices.clone();
                        tokio::spawn(async move {
                            let _slot = slot;
                            if let Err(error) = service.attempt(notice).await {
                                tracing::warn!(%error, "could not record a notice attempt");
                            }
                        });
                    }
                }
                Err(error) => tracing::warn!(%error, "leasing notices failed; retrying"),
            }
        }
        if *stop.borrow() {
            break;
        }
        if busy {
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(NOTICE_TICK) => {}
            () = &mut queued => {}
            _ = stop.changed() => break,
        }
    }
}

/// How often past rate-limit windows are deleted from the shared table.
const RATE_LIMIT_PURGE_EVERY: Duration = Duration::from_secs(600);

/// Adds this instance's counted calls to the shared rate-limit counts
/// every `FLUSH_EVERY` (PostgreSQL), once more when told to stop, and now
/// and then deletes past windows.
pub(crate) async fn flush_rate_limits(
    limiter: Arc<SharedRateLimiter>,
    mut stop: watch::Receiver<bool>,
) {
    let mut last_purge = tokio::time::Instant::now();
    loop {
        if let Err(error) = limiter.flush(chrono::Utc::now()).await {
            tracing::warn!(%error, "flushing rate-limit counts failed; retrying");
        }
        if last_purge.elapsed() >= RATE_LIMIT_PURGE_EVERY {
            last_purge = tokio::time::Instant::now();
            if let Err(error) = limiter.purge_past_windows(chrono::Utc::now()).await {
                tracing::warn!(%error, "deleting past rate-limit windows failed");
            }
        }
        if *stop.borrow() {
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(reviewloop_adapters::RATE_LIMIT_FLUSH_EVERY) => {}
            // One more pass, so calls counted just before the stop are kept.
            _ = stop.changed() => {}
        }
    }
}
