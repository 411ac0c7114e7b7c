DROP TABLE request_sweeps;
DROP TABLE rate_limit_windows;
