-- Every release intent (outcome @intent) no outcome row settles, with its
-- age on the database's clock. An outcome row settles the intent it names
-- (intent_id). An intent written before outcome rows named theirs (its
-- resource_version is NULL) is settled, as then, by any later outcome row
-- of its binding, and only the newest such intent of a binding is open.
SELECT i.*, extract(epoch FROM clock_timestamp() - i.created_at)::float8 AS age_seconds
FROM {{schema}}.binding_releases i
WHERE i.outcome = @intent
  AND NOT EXISTS (SELECT 1 FROM {{schema}}.binding_releases o WHERE o.intent_id = i.id)
  AND (i.resource_version IS NOT NULL OR NOT EXISTS (
        SELECT 1 FROM {{schema}}.binding_releases o WHERE o.binding_name = i.binding_name AND o.id > i.id
          AND (o.outcome <> @intent OR o.resource_version IS NULL)))
ORDER BY i.id
