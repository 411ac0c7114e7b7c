DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE webhooks;
DROP INDEX outbox_events_undispatched;
ALTER TABLE outbox_events DROP COLUMN dispatched_at;
