DROP INDEX CONCURRENTLY IF EXISTS instances_active_by_binding;
