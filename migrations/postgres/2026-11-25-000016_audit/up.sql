-- The audit chain: each account's log of every change to its loops and
-- requests, each entry holding the SHA-256 of the one before. An entry is
-- written, unlinked (no seq, prev_hash or hash), in the transaction of the
-- change it records; a linking pass then gives entries their place in
-- their account's chain, in batches under one lock, so the writes of one
-- account never wait for each other.
CREATE TABLE audit_entries (
    id BIGSERIAL PRIMARY KEY,
    account_id TEXT NOT NULL,
    seq BIGINT,
    at TIMESTAMP NOT NULL,
    action TEXT NOT NULL,
    loop_id TEXT,
    request_id TEXT,
    data TEXT NOT NULL,
    prev_hash TEXT,
    hash TEXT
);
CREATE UNIQUE INDEX audit_entries_chain ON audit_entries (account_id, seq);
CREATE INDEX audit_entries_unlinked ON audit_entries (id) WHERE seq IS NULL;
