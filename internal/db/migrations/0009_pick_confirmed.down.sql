ALTER TABLE withdrawn_bindings DROP COLUMN reason;

-- As 0008 made them. An empty list with no read time: the older pick
-- answers ErrStale until the job's next run lists KEB's instances again.
CREATE TABLE snapshot_instances (
    instance_id  text NOT NULL PRIMARY KEY,
    binding_name text NOT NULL,
    owner        text NOT NULL
);
CREATE INDEX snapshot_instances_binding
    ON snapshot_instances (binding_name, owner);
ALTER TABLE candidates_computed
    ADD COLUMN instances_read_at timestamptz NULL;
