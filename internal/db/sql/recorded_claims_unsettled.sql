-- The claims KEB recorded after @settled, which the snapshot may not show
-- yet.
SELECT binding_name, global_account_id, hyperscaler_type, eu_access FROM {{schema}}.recorded_claims
WHERE claimed_at > @settled
