-- Removes the rows @rows (a JSON array of binding, GA, hyperscaler type and
-- EU access, as the rewrite read them) where the row still has that GA and
-- pool: RecordClaim may have given it to another GA since, and PostgreSQL
-- re-checks these columns on the row's newest version after waiting for
-- its lock. Returns the bindings removed.
DELETE FROM {{schema}}.binding_candidates c
USING jsonb_populate_recordset(NULL::{{schema}}.binding_candidates, (@rows)::jsonb) r
WHERE c.binding_name = r.binding_name
  AND c.global_account_id IS NOT DISTINCT FROM r.global_account_id
  AND c.hyperscaler_type IS NOT DISTINCT FROM r.hyperscaler_type
  AND c.eu_access IS NOT DISTINCT FROM r.eu_access
RETURNING c.binding_name
