-- Calls per API key per hourly window, shared by every instance.
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
