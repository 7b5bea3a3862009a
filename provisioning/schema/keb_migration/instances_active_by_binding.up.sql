-- The active instances by binding, with both owner columns: counting a
-- binding's clusters for a global account (GetInstanceCountPerBinding, and
-- the candidate table's pick) reads that binding's entries alone, not the
-- whole table. Partial: deleted rows, most of the table over the years, are
-- left out.
--
-- CONCURRENTLY: KEB goes on writing instances while it builds. It is the
-- file's only statement, so golang-migrate sends it alone and PostgreSQL
-- runs it outside a transaction, as it must. A build that fails leaves an
-- INVALID index of this name, which IF NOT EXISTS would keep: drop it
-- (the down file) and run this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS instances_active_by_binding
    ON instances (subscription_secret_name)
    INCLUDE (global_account_id, subscription_global_account_id)
    WHERE deleted_at = '0001-01-01 00:00:00+00';
