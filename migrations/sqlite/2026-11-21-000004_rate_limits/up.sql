-- Kept in step with PostgreSQL's schema; one SQLite instance counts calls
-- in memory and leaves this table empty.
CREATE TABLE rate_limit_windows (
    api_key_id TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    calls INTEGER NOT NULL,
    PRIMARY KEY (api_key_id, window_start)
);
