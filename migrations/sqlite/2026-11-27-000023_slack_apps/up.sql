-- A loop's Slack app: `{"bot_token", "signing_secret", "channel"}` as JSON,
-- NULL for none. `slack_posts` keeps where each request was posted through
-- one (a request escalated to a loop with its own app is posted there too),
-- so the message can be changed once the request ends.
ALTER TABLE loops ADD COLUMN slack_app TEXT;
CREATE TABLE slack_posts (
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    loop_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (request_id, loop_id)
);
