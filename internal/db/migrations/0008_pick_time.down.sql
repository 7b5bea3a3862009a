ALTER TABLE binding_candidates DROP COLUMN picks;
DROP TABLE recorded_claims;
ALTER TABLE candidates_computed DROP COLUMN instances_read_at;
DROP TABLE snapshot_instances;
