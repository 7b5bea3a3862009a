-- The pick answers at the moment KEB asks, not at the job's snapshot.
--
-- snapshot_instances holds every active instance of KEB's table as the
-- rewrite that wrote the candidate table saw it, with the binding it was on
-- ('' for none yet) and the GA whose count it is in (KEB's owner: the
-- subscription GA when set, else the instance's GA; '' for none). A pick
-- joins a GA's rows with KEB's table by instance id, so it sees the
-- clusters deleted since, and it finds the clusters placed since among the
-- instances created after instances_read_at (KEB's created_at index) and
-- those listed here without a binding.
CREATE TABLE snapshot_instances (
    instance_id  text NOT NULL PRIMARY KEY,
    binding_name text NOT NULL,
    owner        text NOT NULL
);
CREATE INDEX snapshot_instances_binding
    ON snapshot_instances (binding_name, owner);

-- When snapshot_instances was taken, by the database's clock. NULL: never,
-- and the table is not answered from.
ALTER TABLE candidates_computed
    ADD COLUMN instances_read_at timestamptz NULL;

-- Claims KEB recorded (provisioning.RecordClaim). A rewrite whose snapshot
-- was taken before a claim keeps the claimed row as RecordClaim wrote it;
-- one taken after the claim decides the row again and ends the record.
CREATE TABLE recorded_claims (
    binding_name      text        NOT NULL PRIMARY KEY,
    global_account_id text        NOT NULL,
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    claimed_at        timestamptz NOT NULL
);

-- Every pick and recorded claim bumps picks, and nothing else ever changes
-- it. A pick that waited for another on a row compares the row's picks now
-- with the value its snapshot read: exactly the picks committed meanwhile,
-- whatever a rewrite did to reserved at the same time.
ALTER TABLE binding_candidates
    ADD COLUMN picks bigint NOT NULL DEFAULT 0;
