-- The pick counts KEB's instances itself at the moment KEB asks (through
-- KEB's index instances_active_by_binding), and Gardener confirms what it
-- proposes: the list of KEB's instances at the snapshot is no longer read.
-- Dropping it makes an older provisioning module, which reads it, fail and
-- KEB take its live path, rather than count from a list nobody keeps.
DROP TABLE snapshot_instances;
ALTER TABLE candidates_computed DROP COLUMN instances_read_at;

-- Why a binding is out of every pick: KEB's free step marked it dirty, or
-- Gardener rejected the table's proposal of it (another tenant, dirty,
-- another pool or provider, gone). Either ends the same way: a snapshot
-- taken after shows the binding fit, or a claim of it is recorded.
ALTER TABLE withdrawn_bindings
    ADD COLUMN reason text NOT NULL DEFAULT 'KEB''s free step marked it dirty';
ALTER TABLE withdrawn_bindings ALTER COLUMN reason DROP DEFAULT;
