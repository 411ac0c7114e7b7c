ALTER TABLE requests
    ALTER COLUMN context TYPE JSONB USING context::jsonb,
    ALTER COLUMN response_config TYPE JSONB USING response_config::jsonb,
    ALTER COLUMN default_response TYPE JSONB USING default_response::jsonb,
    ALTER COLUMN metadata TYPE JSONB USING metadata::jsonb,
    ALTER COLUMN response_data TYPE JSONB USING response_data::jsonb,
    ALTER COLUMN feedback TYPE JSONB USING feedback::jsonb;
ALTER TABLE outbox_events ALTER COLUMN payload TYPE JSONB USING payload::jsonb;
