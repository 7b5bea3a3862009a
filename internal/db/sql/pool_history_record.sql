-- Appends the samples @rows (a JSON array); a second sample of a pool at
-- the same instant replaces the first.
INSERT INTO {{schema}}.pool_history (recorded_at, hyperscaler_type, eu_access, free, claimed)
SELECT v.recorded_at, v.hyperscaler_type, v.eu_access, v.free, v.claimed
FROM jsonb_populate_recordset(NULL::{{schema}}.pool_history, (@rows)::jsonb) v
ON CONFLICT (hyperscaler_type, eu_access, recorded_at) DO UPDATE
SET free = excluded.free, claimed = excluded.claimed
