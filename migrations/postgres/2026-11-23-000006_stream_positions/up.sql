-- The event stream's cursor. `seq` is the order rows were inserted in,
-- which on PostgreSQL is not the order they were committed in: a
-- transaction that took seq 10 can commit after one that took seq 11, and
-- a reader that had passed 11 would never see 10. `position` is given to
-- committed events by one numbering transaction at a time, so it only
-- ever grows in the order events become visible.
ALTER TABLE outbox_events ADD COLUMN position BIGINT;
UPDATE outbox_events SET position = seq;
CREATE UNIQUE INDEX outbox_events_position ON outbox_events (position);
CREATE INDEX outbox_events_by_account_position ON outbox_events (account_id, position);
CREATE INDEX outbox_events_unnumbered ON outbox_events (seq) WHERE position IS NULL;
-- The stream reads by account and position now.
DROP INDEX outbox_events_by_account;
