-- A key's plan sets its per-minute allowance on the alternate surface
-- (standard 1,000, professional 10,000, enterprise 100,000 calls).
ALTER TABLE api_keys ADD COLUMN plan TEXT NOT NULL DEFAULT 'standard';
