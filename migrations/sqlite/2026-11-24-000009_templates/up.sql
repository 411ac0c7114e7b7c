-- Templates: reusable forms of the alternate surface, an account's own.
-- `fields` is the form as JSON text (like every JSON column), parsed and
-- checked again by the domain whenever it is read.
CREATE TABLE templates (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    fields TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX templates_by_account ON templates (account_id, created_at);
