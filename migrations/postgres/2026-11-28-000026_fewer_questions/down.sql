DROP INDEX requests_answers_by_question;
DROP INDEX requests_open_followers;
DROP INDEX requests_followers;
DROP INDEX requests_open_question;
ALTER TABLE requests DROP COLUMN reused_from;
ALTER TABLE requests DROP COLUMN coalesced_into;
ALTER TABLE requests DROP COLUMN coalesce_slot;
ALTER TABLE requests DROP COLUMN coalesce_key;
