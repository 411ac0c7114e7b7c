CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
