DROP INDEX IF EXISTS instances_active_by_binding;
