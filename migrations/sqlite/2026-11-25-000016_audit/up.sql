-- The audit chain: each account's log of every change to its loops and
-- requests, each entry holding the SHA-256 of the one before. Entries are
-- only ever appended, in the transaction of the change they record.
CREATE TABLE audit_entries (
    account_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    at TIMESTAMP NOT NULL,
    action TEXT NOT NULL,
    loop_id TEXT,
    request_id TEXT,
    data TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (account_id, seq)
);
