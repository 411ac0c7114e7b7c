DROP TABLE test_clocks;
ALTER TABLE webhooks DROP COLUMN test;
ALTER TABLE outbox_events DROP COLUMN test;
DROP INDEX requests_test_due;
ALTER TABLE requests DROP COLUMN test_due_at;
ALTER TABLE requests DROP COLUMN test_answer;
ALTER TABLE requests DROP COLUMN test;
ALTER TABLE api_keys DROP COLUMN test;
