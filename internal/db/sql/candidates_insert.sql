-- Inserts the rows @rows (a JSON array of candidate rows). A binding
-- claimed and recorded by KEB since the snapshot may have a row already:
-- its values are taken and its picks kept.
INSERT INTO {{schema}}.binding_candidates (binding_name, global_account_id, hyperscaler_type, eu_access, db_count,
    shoot_count, effective_count, cluster_limit, headroom, selectable, guarded, rank, computed_at)
SELECT v.binding_name, v.global_account_id, v.hyperscaler_type, v.eu_access, v.db_count,
       v.shoot_count, v.effective_count, v.cluster_limit, v.headroom, v.selectable, v.guarded, v.rank, v.computed_at
FROM jsonb_populate_recordset(NULL::{{schema}}.binding_candidates, (@rows)::jsonb) v
ON CONFLICT (binding_name) DO UPDATE
SET global_account_id = excluded.global_account_id,
    hyperscaler_type  = excluded.hyperscaler_type,
    eu_access         = excluded.eu_access,
    db_count          = excluded.db_count,
    shoot_count       = excluded.shoot_count,
    effective_count   = excluded.effective_count,
    cluster_limit     = excluded.cluster_limit,
    headroom          = excluded.headroom,
    selectable        = excluded.selectable,
    guarded           = excluded.guarded,
    rank              = excluded.rank,
    computed_at       = excluded.computed_at
