-- JSON columns were always text on SQLite; this migration changes the
-- PostgreSQL schema to match (see migrations/postgres).
SELECT 1;
