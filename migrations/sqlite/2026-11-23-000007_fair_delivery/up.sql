-- Deliveries are leased in turns per URL (each receiver's oldest due
-- first), so one receiver's backlog cannot starve the others: the lease
-- reads due deliveries by URL in time order.
CREATE INDEX deliveries_due_by_url ON deliveries (url, next_attempt_at) WHERE status = 'pending';
