-- Decision receipts: a request that ends with a decision keeps the signed
-- statement of it (JSON: key_id, signed, signature), and the instance's
-- Ed25519 key pairs are kept here, every one of them for good, so receipts
-- signed before a rotation stay verifiable.
ALTER TABLE requests ADD COLUMN receipt TEXT;

CREATE TABLE receipt_keys (
    key_id TEXT PRIMARY KEY NOT NULL,
    -- Hex of the 32-byte public key and of the 32-byte secret seed.
    public_key TEXT NOT NULL,
    secret_key TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    retired_at TIMESTAMP
);
