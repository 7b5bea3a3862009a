-- The instances KEB wrote with a binding since @since (created_at, the
-- database's clock), deleted ones included, each with its owning GA as the
-- counts read it, the moment of KEB's pick (resolved_at: the join that
-- replaces {{resolved}}, shadow_resolve_step.sql or
-- shadow_without_resolve_step.sql) and whether the shadow job compared it.
-- KEB's instances table is found on the search_path, in KEB's schema.
SELECT i.instance_id,
       CASE WHEN coalesce(i.subscription_global_account_id, '') <> ''
            THEN i.subscription_global_account_id
            ELSE i.global_account_id
       END AS global_account_id,
       i.subscription_secret_name AS binding_name,
       i.created_at,
       r.at AS resolved_at,
       s.instance_id IS NOT NULL AS compared
FROM instances i
{{resolved}}
LEFT JOIN {{schema}}.shadow_picks s ON s.instance_id = i.instance_id
WHERE i.created_at >= @since AND coalesce(i.subscription_secret_name, '') <> ''
