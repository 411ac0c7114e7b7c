-- Free-form JSON (context, metadata, answers, event payloads) is kept
-- exactly as clients send it, and jsonb cannot hold a NUL character
-- (U+0000) in a string, which JSON allows. As text, the same document is
-- stored with the character escaped (\u0000), as on SQLite.
ALTER TABLE requests
    ALTER COLUMN context TYPE TEXT USING context::text,
    ALTER COLUMN response_config TYPE TEXT USING response_config::text,
    ALTER COLUMN default_response TYPE TEXT USING default_response::text,
    ALTER COLUMN metadata TYPE TEXT USING metadata::text,
    ALTER COLUMN response_data TYPE TEXT USING response_data::text,
    ALTER COLUMN feedback TYPE TEXT USING feedback::text;
ALTER TABLE outbox_events ALTER COLUMN payload TYPE TEXT USING payload::text;
