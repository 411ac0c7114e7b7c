-- Web Push. `vapid_keys` holds the server's one VAPID key pair (hex;
-- made at the first start, replaced by `reviewloop vapid-key rotate`).
-- `push_subscriptions` holds the devices people asked to be told on: an
-- endpoint names one browser profile, so it is kept once, for whoever
-- subscribed it last. Devices' keys are hex too.
CREATE TABLE vapid_keys (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    public_key TEXT NOT NULL,
    secret_key TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE push_subscriptions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL UNIQUE,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    device TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX push_subscriptions_by_user ON push_subscriptions (user_id, created_at);
