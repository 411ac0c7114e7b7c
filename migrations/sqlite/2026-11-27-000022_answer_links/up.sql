-- One-click answers by email: each link gives one answer to one request
-- as one member. Only the SHA-256 of the link's token is kept; `used_at`
-- marks a link spent. The links go with their request.
CREATE TABLE answer_links (
    token_hash TEXT PRIMARY KEY NOT NULL,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    answer TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP
);
CREATE INDEX answer_links_request ON answer_links (request_id);
