-- The claims KEB recorded that no snapshot shows yet.
SELECT binding_name, global_account_id, hyperscaler_type, eu_access FROM {{schema}}.recorded_claims
