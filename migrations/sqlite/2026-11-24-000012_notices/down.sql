DROP TABLE notices;
ALTER TABLE loops DROP COLUMN reminders;
ALTER TABLE loops DROP COLUMN slack_webhook_url;
ALTER TABLE loop_members DROP COLUMN notify;
