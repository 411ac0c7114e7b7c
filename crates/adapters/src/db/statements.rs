//! Counts the statements each connection runs (Diesel's instrumentation)
//! and adds them to the tally open where the store was called, so the log
//! line of every HTTP request says how many statements it took.

use std::cell::Cell;

use diesel::connection::{Instrumentation, InstrumentationEvent};
use reviewloop_ports::tally::Tally;

thread_local! {
    /// Statements run and prepared on this thread, ever: a store call's
    /// share is the difference across it (its connection is used by this
    /// thread alone meanwhile).
    static COUNTS: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

/// Installed on every connection the store opens.
pub(super) struct StatementCounter;

impl Instrumentation for StatementCounter {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        let bump = match event {
            InstrumentationEvent::StartQuery { .. } => (1, 0),
            InstrumentationEvent::CacheQuery { .. } => (0, 1),
            _ => return,
        };
        COUNTS.with(|c| {
            let (s, p) = c.get();
            c.set((s.wrapping_add(bump.0), p.wrapping_add(bump.1)));
        });
    }
}

/// Runs `f` (on this thread) and adds the statements it ran to `tally`.
pub(super) fn counted<T>(tally: Option<&Tally>, f: impl FnOnce() -> T) -> T {
    let before = COUNTS.with(Cell::get);
    let result = f();
    if let Some(tally) = tally {
        let after = COUNTS.with(Cell::get);
        tally.add(
            after.0.wrapping_sub(before.0),
            after.1.wrapping_sub(before.1),
        );
    }
    result
}
