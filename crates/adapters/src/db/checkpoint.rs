//! SQLite's WAL checkpoints, on a thread of their own.
//!
//! By default the connection that commits a write copies the WAL back into
//! the database file (and syncs it) whenever the WAL has grown past 1,000
//! pages: here that would be the one writer thread, and every write would
//! wait while it did. A checkpoint can run beside the writer instead, on
//! its own connection, so this thread runs a passive one (it never waits
//! for readers or the writer) every [`EVERY`]. The writer still checkpoints
//! by itself if the WAL ever grows past [`WRITER_CHECKPOINT_PAGES`], so the
//! WAL stays bounded even if this thread falls behind.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;

use super::DbConnection;

/// How often the WAL is copied back.
const EVERY: Duration = Duration::from_millis(100);
/// The writer's own checkpoint, for when this thread falls behind.
pub(super) const WRITER_CHECKPOINT_PAGES: u32 = 20_000;

/// Stops the thread when the last handle goes.
pub(super) struct Checkpointer {
    stop: Arc<AtomicBool>,
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Checkpointer {
    /// Starts checkpointing on connections from `connect`.
    pub(super) fn start(
        connect: impl Fn() -> Result<DbConnection, String> + Send + 'static,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::Builder::new()
            .name("reviewloop-sqlite-checkpoint".into())
            .spawn(move || {
                let mut conn: Option<DbConnection> = None;
                while !stopping.load(Ordering::Relaxed) {
                    std::thread::sleep(EVERY);
                    let c = match conn.take().map_or_else(&connect, Ok) {
                        Ok(c) => conn.insert(c),
                        Err(error) => {
                            tracing::warn!(%error, "cannot open the database to checkpoint it");
                            continue;
                        }
                    };
                    if let Err(error) = c.batch_execute("PRAGMA wal_checkpoint(PASSIVE)") {
                        tracing::warn!(%error, "WAL checkpoint failed");
                        conn = None;
                    }
                }
            })?;
        Ok(Self { stop })
    }
}
