ALTER TABLE request_broadcasts DROP COLUMN comment;
ALTER TABLE requests DROP COLUMN response_comment;
