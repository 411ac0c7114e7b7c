-- Kept in step with PostgreSQL's schema; one SQLite instance counts calls
-- in memory and leaves this table empty.
CREATE TABLE rate_limit_windows (
    api_key_id TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    calls INTEGER NOT NULL,
    PRIMARY KEY (api_key_id, window_start)
);

-- Which sweeper is timing a request out, until when: instances share the
-- due requests instead of all reading the same ones.
CREATE TABLE request_sweeps (
    request_id TEXT PRIMARY KEY NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
    leased_until TIMESTAMP NOT NULL
);
