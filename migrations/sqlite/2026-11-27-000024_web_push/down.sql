DROP TABLE push_subscriptions;
DROP TABLE vapid_keys;
