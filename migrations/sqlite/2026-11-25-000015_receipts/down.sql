DROP TABLE receipt_keys;
ALTER TABLE requests DROP COLUMN receipt;
