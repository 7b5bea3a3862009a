-- The candidate rows of global account @ga ('' is the shared pools), or of
-- every GA when @all, in pick order within each pool: byte order, as the
-- decisions compare names, whatever the collation.
SELECT * FROM {{schema}}.binding_candidates
WHERE @all OR global_account_id = @ga
ORDER BY global_account_id COLLATE "C", hyperscaler_type COLLATE "C", eu_access, rank, binding_name COLLATE "C"
