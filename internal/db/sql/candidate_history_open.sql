-- Starts, now, the versions @rows (a JSON array of candidate values).
INSERT INTO {{schema}}.candidate_history (binding_name, global_account_id, hyperscaler_type, eu_access, db_count,
    shoot_count, effective_count, cluster_limit, selectable, guarded, rank, valid_from)
SELECT v.binding_name, v.global_account_id, v.hyperscaler_type, v.eu_access, v.db_count,
       v.shoot_count, v.effective_count, v.cluster_limit, v.selectable, v.guarded, v.rank, now()
FROM jsonb_populate_recordset(NULL::{{schema}}.candidate_history, (@rows)::jsonb) v
