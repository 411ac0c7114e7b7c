DROP INDEX audit_entries_chain;
CREATE UNIQUE INDEX audit_entries_chain ON audit_entries (account_id, seq);
DROP INDEX outbox_events_by_account_position;
CREATE INDEX outbox_events_by_account_position ON outbox_events (account_id, position);
DROP INDEX requests_by_responder;
CREATE INDEX requests_by_responder ON requests (response_by, response_at);
