-- The candidate rows of global account @ga ('' is the shared pools), or of
-- every GA when @all, in pick order within each pool: byte order, as the
-- decisions compare names, whatever the collation. reserved is the
-- reservations held on each binding now.
SELECT c.binding_name, c.global_account_id, c.hyperscaler_type, c.eu_access, c.db_count, c.shoot_count,
       c.effective_count, c.cluster_limit, c.headroom, c.selectable, c.guarded, c.rank, c.computed_at,
       (SELECT count(*) FROM {{schema}}.binding_reservations r WHERE r.binding_name = c.binding_name) AS reserved
FROM {{schema}}.binding_candidates c
WHERE @all OR c.global_account_id = @ga
ORDER BY c.global_account_id COLLATE "C", c.hyperscaler_type COLLATE "C", c.eu_access, c.rank, c.binding_name COLLATE "C"
