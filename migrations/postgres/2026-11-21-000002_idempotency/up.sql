-- Safe retries: the first outcome of a create call, per API key and
-- Idempotency-Key header, kept for 24 hours.
CREATE TABLE idempotency_keys (
    api_key_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    response_status INTEGER,
    response_body TEXT,
    -- When the key was first used: the record expires 24 hours later.
    created_at TIMESTAMP NOT NULL,
    -- When the current attempt started: a "running" record whose attempt
    -- is old belonged to a process that died, and a retry may take it over.
    locked_at TIMESTAMP NOT NULL,
    PRIMARY KEY (api_key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
