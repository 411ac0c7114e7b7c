CREATE INDEX outbox_events_by_account ON outbox_events (account_id, seq);
DROP INDEX outbox_events_unnumbered;
DROP INDEX outbox_events_by_account_position;
DROP INDEX outbox_events_position;
ALTER TABLE outbox_events DROP COLUMN position;
