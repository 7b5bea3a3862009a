ALTER TABLE binding_candidates DROP COLUMN guarded;
