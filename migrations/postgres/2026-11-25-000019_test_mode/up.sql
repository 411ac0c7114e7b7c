-- Test mode. A test-mode key makes test requests: answered by their
-- `test_answer` (JSON: response and when, on the account's test clock),
-- never by people. `test_due_at` is the next moment such a request needs
-- the test sweep (its answer or its timeout, in account time), NULL once it
-- ended, so the partial index holds only open test requests. Test events
-- reach only test webhooks; `test_clocks` holds how far each account's test
-- clock runs ahead of the real one.
ALTER TABLE api_keys ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE requests ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE requests ADD COLUMN test_answer TEXT;
ALTER TABLE requests ADD COLUMN test_due_at TIMESTAMP;
CREATE INDEX requests_test_due ON requests (creator_id, test_due_at) WHERE test_due_at IS NOT NULL;
ALTER TABLE outbox_events ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE webhooks ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
CREATE TABLE test_clocks (
    account_id TEXT PRIMARY KEY NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    offset_seconds BIGINT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
