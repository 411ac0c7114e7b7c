DROP INDEX deliveries_due_by_url;
