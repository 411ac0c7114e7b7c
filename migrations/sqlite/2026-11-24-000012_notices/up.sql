-- Notifications: each member chooses which requests of a loop they hear
-- of; a loop may post new requests to a Slack incoming webhook and remind
-- members of requests running out of time.
ALTER TABLE loop_members ADD COLUMN notify TEXT NOT NULL DEFAULT 'all';
ALTER TABLE loops ADD COLUMN slack_webhook_url TEXT;
ALTER TABLE loops ADD COLUMN reminders BOOLEAN NOT NULL DEFAULT FALSE;

-- The outbox of emails and Slack messages: written with the change (or the
-- event dispatch) that causes them, sent by a worker that leases them.
CREATE TABLE notices (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    channel TEXT NOT NULL,
    account_id TEXT NOT NULL,
    loop_id TEXT,
    request_id TEXT,
    recipient_id TEXT,
    recipient_email TEXT,
    subject TEXT NOT NULL,
    body_text TEXT NOT NULL,
    body_html TEXT,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at TIMESTAMP NOT NULL,
    leased_until TIMESTAMP,
    last_error TEXT,
    created_at TIMESTAMP NOT NULL,
    sent_at TIMESTAMP
);
CREATE INDEX notices_due ON notices (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notices_of_loop ON notices (loop_id, created_at);
