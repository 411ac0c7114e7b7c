-- Quorum: a request may need answers from several reviewers. It keeps its
-- quorum (JSON: count, rule, exclude_requester); each reviewer's answer is
-- kept on that reviewer's broadcast entry, which exists once per reviewer,
-- so nobody answers twice. A loop keeps the decision policy of its new
-- requests (JSON; today its default quorum).
ALTER TABLE requests ADD COLUMN quorum TEXT;
ALTER TABLE request_broadcasts ADD COLUMN answer TEXT;
ALTER TABLE request_broadcasts ADD COLUMN answered_at TIMESTAMP;
ALTER TABLE loops ADD COLUMN policy TEXT;
