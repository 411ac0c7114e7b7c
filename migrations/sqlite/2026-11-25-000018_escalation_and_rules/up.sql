-- Escalation and rules. A request keeps its escalation (JSON: after_seconds,
-- to_loop_id, raise_priority), when it falls due (`escalate_at`, NULL once
-- it escalated or ended, so the partial index holds only what may still
-- escalate), when it escalated and to which loop (`escalated_to`, whose
-- active members may then read and answer it), and the rules that fired
-- when it was created (JSON list). A loop's rules and default escalation
-- join its default quorum in `loops.policy`.
ALTER TABLE requests ADD COLUMN escalation TEXT;
ALTER TABLE requests ADD COLUMN escalate_at TIMESTAMP;
ALTER TABLE requests ADD COLUMN escalated_at TIMESTAMP;
ALTER TABLE requests ADD COLUMN escalated_to TEXT;
ALTER TABLE requests ADD COLUMN applied_rules TEXT;
CREATE INDEX requests_to_escalate ON requests (escalate_at) WHERE escalate_at IS NOT NULL;
CREATE INDEX requests_by_escalation ON requests (escalated_to, status) WHERE escalated_to IS NOT NULL;
