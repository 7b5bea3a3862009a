-- Gives the rows @rows (a JSON array of candidate rows) their new values,
-- where the row still has the GA and pool it had when the rewrite read it
-- (@read, a JSON array of binding, GA, hyperscaler type and EU access):
-- RecordClaim may have given it to another GA since, and PostgreSQL
-- re-checks these columns on the row's newest version after waiting for
-- its lock. Returns the bindings updated. picks belongs to the picks and is
-- left as it is.
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
FROM jsonb_populate_recordset(NULL::{{schema}}.binding_candidates, (@rows)::jsonb) v,
     jsonb_populate_recordset(NULL::{{schema}}.binding_candidates, (@read)::jsonb) r
WHERE c.binding_name = v.binding_name AND r.binding_name = v.binding_name
  AND c.global_account_id IS NOT DISTINCT FROM r.global_account_id
  AND c.hyperscaler_type IS NOT DISTINCT FROM r.hyperscaler_type
  AND c.eu_access IS NOT DISTINCT FROM r.eu_access
RETURNING c.binding_name
