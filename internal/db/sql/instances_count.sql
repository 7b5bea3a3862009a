-- The one aggregate over KEB's instances table: active instances per
-- binding and owning GA. The owner ({{owner}}) is the subscription GA when
-- one is set, else the instance's GA, exactly as KEB's
-- GetInstanceCountPerBinding (internal/storage/postsql/read.go) counts:
-- its condition, "the subscription GA is not empty and is the GA, or the
-- instance's GA is the GA and the subscription GA is empty", is NULL for a
-- NULL subscription_global_account_id, so KEB counts such an instance for
-- no GA at all. Its owner here is hap.NoOwner: the binding still holds it
-- (totals, release), no GA's count includes it. KEB's table has no index on
-- subscription_secret_name, so this is one sequential scan rather than one
-- query per binding. {{owner}} and {{active}} are the provisioning module's
-- (the provisioning module's schema.Owner and schema.ActiveInstance), for this count and the pick alike.
--
-- Orderings are byte order (COLLATE "C") whatever the database's
-- collation, the order KEB's API server lists names in.
SELECT * FROM (
    SELECT coalesce(subscription_secret_name, '') AS binding_name,
           {{owner}} AS global_account_id,
           count(*) AS active,
           json_agg(runtime_id ORDER BY runtime_id COLLATE "C")::text AS runtime_ids
    FROM instances
    WHERE {{active}}
    GROUP BY 1, 2
) per_binding_and_owner
ORDER BY binding_name COLLATE "C", global_account_id COLLATE "C"
