-- Fewer questions for people (DESIGN.md section 14). `coalesce_key` is
-- what makes another request the same question; `coalesce_slot` holds it
-- only while the request takes others in (open, inside its loop's
-- window), so the unique index lets one open request per key and account
-- and loop exist: two creates racing with one key cannot both ask people.
ALTER TABLE requests ADD COLUMN coalesce_key TEXT;
ALTER TABLE requests ADD COLUMN coalesce_slot TEXT;
ALTER TABLE requests ADD COLUMN coalesced_into TEXT;
ALTER TABLE requests ADD COLUMN reused_from TEXT;
CREATE UNIQUE INDEX requests_open_question ON requests (creator_id, loop_id, test, coalesce_slot)
    WHERE coalesce_slot IS NOT NULL;
-- The requests that joined one: settled when it ends, counted on its page.
CREATE INDEX requests_followers ON requests (coalesced_into)
    WHERE coalesced_into IS NOT NULL;
-- Open ones only, for the sweep that settles those an instance left open:
-- its cost follows the followers waiting, not all there ever were.
CREATE INDEX requests_open_followers ON requests (created_at)
    WHERE coalesced_into IS NOT NULL AND status IN ('pending', 'claimed');
-- A person's recent answer to the same question, for reuse.
CREATE INDEX requests_answers_by_question ON requests (creator_id, loop_id, coalesce_key, response_at)
    WHERE coalesce_key IS NOT NULL AND status = 'completed';
-- Assignment beyond broadcast: a request offered to a few members is
-- offered to the next few once `reassign_at` passes unclaimed.
ALTER TABLE requests ADD COLUMN reassign_after_seconds BIGINT;
ALTER TABLE requests ADD COLUMN offered_at TIMESTAMP;
ALTER TABLE requests ADD COLUMN reassign_at TIMESTAMP;
CREATE INDEX requests_to_reassign ON requests (reassign_at) WHERE reassign_at IS NOT NULL;
-- A loop's round-robin turn, shared by every instance: one statement
-- moves it past the members an offer took.
CREATE TABLE loop_turns (
    loop_id TEXT PRIMARY KEY NOT NULL REFERENCES loops (id) ON DELETE CASCADE,
    turn BIGINT NOT NULL
);
