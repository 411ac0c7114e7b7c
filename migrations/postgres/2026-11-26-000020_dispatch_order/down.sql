DROP INDEX outbox_events_undispatched;
CREATE INDEX outbox_events_undispatched ON outbox_events (created_at) WHERE dispatched_at IS NULL;
