-- Inserts the rows @rows (a JSON array of candidate rows). A binding
-- RecordClaim listed since the rewrite read the table has a row already:
-- that row, the claim's, stays as it is. Returns the bindings inserted.
INSERT INTO {{schema}}.binding_candidates (binding_name, global_account_id, hyperscaler_type, eu_access, db_count,
    shoot_count, effective_count, cluster_limit, headroom, selectable, guarded, rank, computed_at)
SELECT v.binding_name, v.global_account_id, v.hyperscaler_type, v.eu_access, v.db_count,
       v.shoot_count, v.effective_count, v.cluster_limit, v.headroom, v.selectable, v.guarded, v.rank, v.computed_at
FROM jsonb_populate_recordset(NULL::{{schema}}.binding_candidates, (@rows)::jsonb) v
ON CONFLICT (binding_name) DO NOTHING
RETURNING binding_name
