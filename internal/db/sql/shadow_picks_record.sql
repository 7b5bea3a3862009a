-- Keeps each compared pick of @rows (a JSON array) once.
INSERT INTO {{schema}}.shadow_picks (instance_id, global_account_id, hyperscaler_type, eu_access, keb_binding,
    table_answer, outcome, detail, picked_at, snapshot_at)
SELECT v.instance_id, v.global_account_id, v.hyperscaler_type, v.eu_access, v.keb_binding,
       v.table_answer, v.outcome, v.detail, v.picked_at, v.snapshot_at
FROM jsonb_populate_recordset(NULL::{{schema}}.shadow_picks, (@rows)::jsonb) v
ON CONFLICT DO NOTHING
