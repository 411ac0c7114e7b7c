DROP INDEX requests_by_escalation;
DROP INDEX requests_to_escalate;
ALTER TABLE requests DROP COLUMN applied_rules;
ALTER TABLE requests DROP COLUMN escalated_to;
ALTER TABLE requests DROP COLUMN escalated_at;
ALTER TABLE requests DROP COLUMN escalate_at;
ALTER TABLE requests DROP COLUMN escalation;
