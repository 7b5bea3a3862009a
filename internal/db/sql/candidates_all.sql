-- The candidate table, every row, in no order: what the job writes of it.
SELECT binding_name, global_account_id, hyperscaler_type, eu_access, db_count, shoot_count, effective_count,
       cluster_limit, headroom, selectable, guarded, rank, computed_at
FROM {{schema}}.binding_candidates
