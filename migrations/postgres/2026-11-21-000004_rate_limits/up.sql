-- Calls per API key per hourly window, shared by every instance.
CREATE TABLE rate_limit_windows (
    api_key_id TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    calls INTEGER NOT NULL,
    PRIMARY KEY (api_key_id, window_start)
);
