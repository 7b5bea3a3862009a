ALTER TABLE candidates_computed DROP COLUMN gardener_seen_at;
