//! How many database statements one unit of work (an HTTP request, a
//! worker pass) ran, so logs show where trips and re-preparing go. The
//! composition root opens a tally around the work with [`counting`]; the
//! store adds to whichever tally is open where it was called
//! ([`current`]), even though its statements run on other threads.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Statements run and statements prepared for the statement cache.
#[derive(Debug, Default)]
pub struct Tally {
    statements: AtomicU32,
    prepared: AtomicU32,
}

impl Tally {
    /// Adds what one store call ran.
    pub fn add(&self, statements: u32, prepared: u32) {
        self.statements.fetch_add(statements, Ordering::Relaxed);
        self.prepared.fetch_add(prepared, Ordering::Relaxed);
    }

    /// Statements run so far.
    pub fn statements(&self) -> u32 {
        self.statements.load(Ordering::Relaxed)
    }

    /// Statements prepared (first use of a cacheable statement) so far.
    pub fn prepared(&self) -> u32 {
        self.prepared.load(Ordering::Relaxed)
    }
}

tokio::task_local! {
    static TALLY: Arc<Tally>;
}

/// Runs `work` with `tally` open: store calls made inside add to it.
pub async fn counting<F: Future>(tally: Arc<Tally>, work: F) -> F::Output {
    TALLY.scope(tally, work).await
}

/// The tally open around the current task, if any.
pub fn current() -> Option<Arc<Tally>> {
    TALLY.try_with(Arc::clone).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tally_is_seen_inside_its_scope_only() {
        assert!(current().is_none());
        let tally = Arc::new(Tally::default());
        counting(tally.clone(), async {
            current().unwrap().add(3, 1);
            current().unwrap().add(2, 0);
        })
        .await;
        assert_eq!((tally.statements(), tally.prepared()), (5, 1));
        assert!(current().is_none());
    }
}
