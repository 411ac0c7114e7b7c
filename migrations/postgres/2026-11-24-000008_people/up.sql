-- People sign in to the web application: a password per account (NULL
-- until set), sessions shared by every instance, and one-time links that
-- set a password (the admin's first-start link).
ALTER TABLE users ADD COLUMN password_hash TEXT;

CREATE TABLE web_sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX web_sessions_by_user ON web_sessions (user_id);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at);

CREATE TABLE password_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at TIMESTAMP NOT NULL
);

-- The inbox's Done tab: what a reviewer answered, newest first.
CREATE INDEX requests_by_responder ON requests (response_by, response_at);
