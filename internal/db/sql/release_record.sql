-- Records a release decision, intent or outcome and returns its id; an
-- outcome whose intent (@intent_id) was recorded already returns none.
INSERT INTO {{schema}}.binding_releases
    (binding_name, global_account_id, hyperscaler_type, eu_access, mode, reason, dry_run, outcome, intent_id, resource_version)
VALUES (@binding_name, @global_account_id, @hyperscaler_type, @eu_access, @mode, @reason, @dry_run, @outcome, @intent_id, @resource_version)
ON CONFLICT (intent_id) WHERE intent_id IS NOT NULL DO NOTHING
RETURNING id
