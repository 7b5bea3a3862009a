-- The release history is exact under faults (issue 25):
-- * rows are stamped by the database (clock_timestamp()), never by the
--   job's clock, so they order against KEB's own rows;
-- * an outcome row names the intent it settles (intent_id), so a later
--   attempt on the same binding never closes an earlier intent whose
--   update may still have landed; an intent has at most one outcome row,
--   so two runs settling it at once (one whose run lock a database restart
--   ended, and the next) record it once;
-- * an intent row keeps the resourceVersion its update is guarded by: once
--   the binding has moved past it, the update can no longer land.
-- Rows written before this migration keep intent_id and resource_version
-- NULL; their intents are settled as before (see release_intents.go).
ALTER TABLE binding_releases
    ALTER COLUMN created_at SET DEFAULT clock_timestamp(),
    ADD COLUMN intent_id bigint,
    ADD COLUMN resource_version text;
CREATE UNIQUE INDEX binding_releases_intent
    ON binding_releases (intent_id) WHERE intent_id IS NOT NULL;
