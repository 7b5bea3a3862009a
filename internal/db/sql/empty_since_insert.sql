-- Records the empty bindings @rows (a JSON array); last_seen is left to
-- its default, the database's now().
INSERT INTO {{schema}}.binding_empty_since (binding_name, global_account_id, empty_since)
SELECT v.binding_name, v.global_account_id, v.empty_since
FROM jsonb_populate_recordset(NULL::{{schema}}.binding_empty_since, (@rows)::jsonb) v
