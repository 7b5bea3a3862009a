-- Gives the rows @rows (a JSON array of candidate rows) their new values.
-- picks belongs to the picks and is left as it is.
UPDATE {{schema}}.binding_candidates c
SET global_account_id = v.global_account_id,
    hyperscaler_type  = v.hyperscaler_type,
    eu_access         = v.eu_access,
    db_count          = v.db_count,
    shoot_count       = v.shoot_count,
    effective_count   = v.effective_count,
    cluster_limit     = v.cluster_limit,
    headroom          = v.headroom,
    selectable        = v.selectable,
    guarded           = v.guarded,
    rank              = v.rank,
    computed_at       = v.computed_at
FROM jsonb_populate_recordset(NULL::{{schema}}.binding_candidates, (@rows)::jsonb) v
WHERE c.binding_name = v.binding_name
