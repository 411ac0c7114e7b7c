-- The dispatcher reads undispatched events in `seq` order, the order the
-- numbering worker locks them in, so the two never wait on each other in
-- a cycle.
DROP INDEX outbox_events_undispatched;
CREATE INDEX outbox_events_undispatched ON outbox_events (seq) WHERE dispatched_at IS NULL;
