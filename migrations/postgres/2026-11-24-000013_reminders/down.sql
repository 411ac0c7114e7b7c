DROP INDEX requests_to_remind;
ALTER TABLE requests DROP COLUMN reminded_at;
ALTER TABLE requests DROP COLUMN remind_at;
