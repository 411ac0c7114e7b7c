DROP INDEX requests_by_responder;
DROP TABLE password_tokens;
DROP TABLE web_sessions;
ALTER TABLE users DROP COLUMN password_hash;
