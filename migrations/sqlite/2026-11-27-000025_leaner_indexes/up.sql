-- Rows are written at create without a responder, an event position or
-- an audit sequence number; indexing them then only to move them when
-- they get one costs every create. Every query of these indexes names a
-- value of the column (`= ?`, `> ?`, `IS NOT NULL`), so it still uses them.
DROP INDEX requests_by_responder;
CREATE INDEX requests_by_responder ON requests (response_by, response_at)
    WHERE response_by IS NOT NULL;
DROP INDEX outbox_events_by_account_position;
CREATE INDEX outbox_events_by_account_position ON outbox_events (account_id, position)
    WHERE position IS NOT NULL;
-- Also stops the audit linker's idle check (`seq IS NULL LIMIT 1`) from
-- scanning the whole chain on a database without statistics.
DROP INDEX audit_entries_chain;
CREATE UNIQUE INDEX audit_entries_chain ON audit_entries (account_id, seq)
    WHERE seq IS NOT NULL;
-- SQLite answers `position IS NULL ORDER BY seq` from the unique index on
-- position and never picked this one.
DROP INDEX outbox_events_unnumbered;
