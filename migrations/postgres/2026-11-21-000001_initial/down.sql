DROP TABLE outbox_events;
DROP TABLE request_broadcasts;
DROP TABLE requests;
DROP TABLE loop_members;
DROP TABLE loops;
DROP TABLE api_keys;
DROP TABLE users;
