-- Opens the findings @rows (a JSON array of drift rows) and refreshes those
-- already open. The conflict target is the partial unique index over open
-- findings, so a resolved finding that comes back opens a new row and its
-- history stays.
INSERT INTO {{schema}}.binding_drift (binding_name, global_account_id, hyperscaler_type, eu_access, kind,
    db_count, shoot_count, deleting_shoots, detail, first_seen, last_seen)
SELECT v.binding_name, v.global_account_id, v.hyperscaler_type, v.eu_access, v.kind,
       v.db_count, v.shoot_count, v.deleting_shoots, v.detail, v.first_seen, v.last_seen
FROM jsonb_populate_recordset(NULL::{{schema}}.binding_drift, (@rows)::jsonb) v
ON CONFLICT (binding_name, kind, global_account_id) WHERE resolved_at IS NULL DO UPDATE
SET hyperscaler_type = excluded.hyperscaler_type,
    eu_access        = excluded.eu_access,
    db_count         = excluded.db_count,
    shoot_count      = excluded.shoot_count,
    deleting_shoots  = excluded.deleting_shoots,
    detail           = excluded.detail,
    last_seen        = excluded.last_seen
