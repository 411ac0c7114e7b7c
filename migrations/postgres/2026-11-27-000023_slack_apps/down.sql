DROP TABLE slack_posts;
ALTER TABLE loops DROP COLUMN slack_app;
