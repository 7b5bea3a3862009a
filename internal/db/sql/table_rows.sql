-- The rows of every table of the job's schema, exactly: each is bounded
-- (docs/operations.md#what-the-tables-hold), so counting them is cheap.
SELECT 'binding_drift' AS table_name, count(*) AS table_rows FROM {{schema}}.binding_drift
UNION ALL SELECT 'binding_candidates', count(*) FROM {{schema}}.binding_candidates
UNION ALL SELECT 'binding_reservations', count(*) FROM {{schema}}.binding_reservations
UNION ALL SELECT 'binding_empty_since', count(*) FROM {{schema}}.binding_empty_since
UNION ALL SELECT 'binding_releases', count(*) FROM {{schema}}.binding_releases
UNION ALL SELECT 'pool_history', count(*) FROM {{schema}}.pool_history
UNION ALL SELECT 'candidates_computed', count(*) FROM {{schema}}.candidates_computed
UNION ALL SELECT 'withdrawn_bindings', count(*) FROM {{schema}}.withdrawn_bindings
UNION ALL SELECT 'candidate_history', count(*) FROM {{schema}}.candidate_history
UNION ALL SELECT 'candidate_rewrites', count(*) FROM {{schema}}.candidate_rewrites
UNION ALL SELECT 'shadow_picks', count(*) FROM {{schema}}.shadow_picks
UNION ALL SELECT 'recorded_claims', count(*) FROM {{schema}}.recorded_claims
UNION ALL SELECT 'claim_leases', count(*) FROM {{schema}}.claim_leases
UNION ALL SELECT 'hap_reconciler_migrations', count(*) FROM {{schema}}.hap_reconciler_migrations
