-- The open findings about global account @ga, or about every GA when @all,
-- in byte order whatever the collation.
SELECT * FROM {{schema}}.binding_drift
WHERE resolved_at IS NULL AND (@all OR global_account_id = @ga)
ORDER BY global_account_id COLLATE "C", binding_name COLLATE "C", kind
