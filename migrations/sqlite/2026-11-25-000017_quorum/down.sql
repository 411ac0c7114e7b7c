ALTER TABLE loops DROP COLUMN policy;
ALTER TABLE request_broadcasts DROP COLUMN answered_at;
ALTER TABLE request_broadcasts DROP COLUMN answer;
ALTER TABLE requests DROP COLUMN quorum;
