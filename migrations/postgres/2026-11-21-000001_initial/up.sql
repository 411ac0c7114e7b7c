-- reviewloop's first schema. Ids are 24-hex text, JSON is jsonb, times are
-- UTC timestamps with millisecond precision.

CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    email TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    signing_secret TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT,
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    permissions TEXT NOT NULL,
    rate_limit BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP
);
CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at);

CREATE TABLE loops (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    icon TEXT NOT NULL,
    creator_id TEXT NOT NULL REFERENCES users(id),
    invite_code TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX loops_by_creator ON loops (creator_id, created_at);

CREATE TABLE loop_members (
    loop_id TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id),
    email TEXT NOT NULL,
    status TEXT NOT NULL,
    invited_at TIMESTAMP NOT NULL,
    joined_at TIMESTAMP,
    removed_at TIMESTAMP,
    PRIMARY KEY (loop_id, user_id)
);
CREATE INDEX loop_members_by_user ON loop_members (user_id, status);

CREATE TABLE requests (
    id TEXT PRIMARY KEY NOT NULL,
    loop_id TEXT NOT NULL REFERENCES loops(id) ON DELETE CASCADE,
    creator_id TEXT NOT NULL REFERENCES users(id),
    api_key_id TEXT,
    processing_type TEXT NOT NULL,
    content_type TEXT NOT NULL,
    priority TEXT NOT NULL,
    priority_rank INTEGER NOT NULL,
    request_text TEXT NOT NULL,
    image_url TEXT,
    context JSONB,
    platform TEXT NOT NULL,
    platform_version TEXT,
    response_type TEXT NOT NULL,
    response_config JSONB NOT NULL,
    default_response JSONB,
    timeout_at TIMESTAMP NOT NULL,
    callback_url TEXT,
    metadata JSONB,
    broadcasted_at TIMESTAMP,
    status TEXT NOT NULL,
    claimed_by TEXT,
    claimed_at TIMESTAMP,
    response_by TEXT,
    response_at TIMESTAMP,
    response_data JSONB,
    response_time_seconds DOUBLE PRECISION,
    cancelled_at TIMESTAMP,
    feedback JSONB,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    version BIGINT NOT NULL
);
-- The request lists: by creator (optionally by status), newest first.
CREATE INDEX requests_by_creator ON requests (creator_id, created_at);
CREATE INDEX requests_by_creator_status ON requests (creator_id, status, created_at);
-- A loop's requests by status: delete checks, and the inbox's open requests
-- of the loops a reviewer is active in.
CREATE INDEX requests_by_loop ON requests (loop_id, status);
-- The timeout sweeper reads only open requests, soonest first, so its cost
-- follows the number of due requests, not the number of requests.
CREATE INDEX requests_due ON requests (timeout_at) WHERE status IN ('pending', 'claimed');

CREATE TABLE request_broadcasts (
    request_id TEXT NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    notification_sent BOOLEAN NOT NULL,
    notification_error TEXT,
    PRIMARY KEY (request_id, user_id)
);
-- No index by user on purpose: the inbox starts from the reviewer's
-- memberships and open requests, and checks each against the primary key,
-- so it never walks everything a reviewer was ever sent.

-- Transactional outbox: every state change writes its events here in the
-- same transaction; delivery reads from here.
CREATE TABLE outbox_events (
    -- The order events were committed in: the cursor of the event stream.
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    account_id TEXT NOT NULL,
    request_id TEXT,
    loop_id TEXT,
    payload JSONB NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX outbox_events_by_account ON outbox_events (account_id, seq);
