-- Due deliveries are leased per URL, through deliveries_due_by_url. With
-- this index beside it the planner, not knowing how a URL's deliveries
-- spread over time, walked every due delivery in time order looking for
-- one URL's few: with a backlog, each lease pass cost milliseconds.
DROP INDEX deliveries_due;
