-- Webhook subscriptions and the deliveries of outbox events to them and to
-- request callbacks.

-- An event is dispatched once its deliveries exist; the dispatcher reads
-- only undispatched events.
ALTER TABLE outbox_events ADD COLUMN dispatched_at TIMESTAMP;
CREATE INDEX outbox_events_undispatched ON outbox_events (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE webhooks (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    description TEXT,
    active BOOLEAN NOT NULL,
    disabled_reason TEXT,
    -- Since when every attempt has failed; cleared by any success.
    failing_since TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX webhooks_by_account ON webhooks (account_id, created_at);

CREATE TABLE deliveries (
    id TEXT PRIMARY KEY NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    account_id TEXT NOT NULL,
    target TEXT NOT NULL,
    webhook_id TEXT REFERENCES webhooks(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- The exact body sent, so every retry carries the same bytes.
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    -- Attempts made in all; attempt numbers only grow.
    attempts INTEGER NOT NULL,
    -- The attempt count when the retry schedule last (re)started: a
    -- redelivery starts the schedule afresh without renumbering attempts.
    schedule_start INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    -- A worker holds the delivery until then; a lease left by a worker that
    -- died simply runs out and another worker takes the delivery.
    leased_until TIMESTAMP,
    last_attempt_at TIMESTAMP,
    last_status_code INTEGER,
    last_error TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, created_at);

CREATE TABLE delivery_attempts (
    delivery_id TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    attempted_at TIMESTAMP NOT NULL,
    status_code INTEGER,
    latency_ms BIGINT NOT NULL,
    error TEXT,
    success BOOLEAN NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);
