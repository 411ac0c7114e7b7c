-- Reminders: when a request's reminder falls due (a quarter of its time
-- left, moved when its timeout changes) and when the reminder pass handled
-- it, so each request is reminded of at most once.
ALTER TABLE requests ADD COLUMN remind_at TIMESTAMP;
ALTER TABLE requests ADD COLUMN reminded_at TIMESTAMP;
CREATE INDEX requests_to_remind ON requests (remind_at)
    WHERE reminded_at IS NULL AND status IN ('pending', 'claimed');
