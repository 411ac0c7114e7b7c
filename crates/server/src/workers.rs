//! Background work that runs beside the HTTP server.

use std::time::Duration;

use reviewloop_service::{IdempotencyService, RequestService};
use tokio::sync::watch;

/// How many due requests one sweep takes at most.
const TIMEOUT_BATCH: u32 = 100;
/// Pause between sweeps; requests time out within about this long.
const TIMEOUT_TICK: Duration = Duration::from_millis(250);

/// Ends every open request whose timeout has passed, until told to stop.
/// It reads only due requests (through an index), so a quiet sweep costs
/// one indexed query whatever the number of pending requests.
pub(crate) async fn time_out_due_requests(
    requests: RequestService,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let full_batch = match requests.time_out_due(TIMEOUT_BATCH).await {
            Ok(ended) => {
                if ended > 0 {
                    tracing::info!(ended, "requests timed out");
                }
                ended >= TIMEOUT_BATCH as usize
            }
            Err(error) => {
                tracing::warn!(%error, "timeout sweep failed; retrying");
                false
            }
        };
        if *stop.borrow() {
            break;
        }
        if full_batch {
            // More may be due right now: sweep again without waiting.
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(TIMEOUT_TICK) => {}
            _ = stop.changed() => break,
        }
    }
}

/// How often expired idempotency records are deleted.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// Deletes idempotency records older than 24 hours, once an hour. Expired
/// records are ignored anyway; this only keeps the table small.
pub(crate) async fn purge_idempotency_records(
    idempotency: IdempotencyService,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        match idempotency.purge_expired().await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(purged, "expired idempotency records deleted"),
            Err(error) => tracing::warn!(%error, "idempotency purge failed; retrying later"),
        }
        tokio::select! {
            _ = tokio::time::sleep(PURGE_EVERY) => {}
            _ = stop.changed() => break,
        }
    }
}
