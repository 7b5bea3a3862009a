-- Whether the job may read the columns of KEB's operations and events that
-- shadow_resolve_step.sql reads: the tables exist (KEB creates them whether
-- or not its events are enabled) and the role holds SELECT on each column,
-- granted per table or per column.
SELECT bool_and(coalesce(has_column_privilege(to_regclass(t), c, 'SELECT'), false))
FROM (VALUES ('operations', 'id'), ('operations', 'instance_id'), ('operations', 'type'),
             ('events', 'operation_id'), ('events', 'message'), ('events', 'created_at')) AS needed (t, c)
