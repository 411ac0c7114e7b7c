-- A request's labels (a JSON array of texts; NULL for none), as HITL.sh's
-- clients send them on create and PATCH.
ALTER TABLE requests ADD COLUMN tags TEXT;
