-- The job's own tables. Names are unqualified: every migration runs with
-- search_path set to the job's schema alone (database.schema), so the same
-- files serve any schema and nothing lands in KEB's public schema.

-- Disagreements between KEB's database and Gardener. A finding stays open
-- (resolved_at IS NULL) while runs keep producing it; at most one open row per
-- (binding_name, kind, global_account_id).
CREATE TABLE binding_drift (
    id                bigserial   PRIMARY KEY,
    binding_name      text        NOT NULL,
    global_account_id text        NOT NULL DEFAULT '',
    hyperscaler_type  text        NOT NULL DEFAULT '',
    eu_access         boolean     NOT NULL DEFAULT false,
    kind              text        NOT NULL,
    db_count          integer     NOT NULL DEFAULT 0,
    shoot_count       integer     NOT NULL DEFAULT 0,
    deleting_shoots   integer     NOT NULL DEFAULT 0,
    detail            text        NOT NULL DEFAULT '',
    first_seen        timestamptz NOT NULL,
    last_seen         timestamptz NOT NULL,
    resolved_at       timestamptz NULL
);
CREATE UNIQUE INDEX binding_drift_open_key
    ON binding_drift (binding_name, kind, global_account_id)
    WHERE resolved_at IS NULL;

-- What provisioning picks from. Rewritten whole by every run; between runs
-- only provisioning touches it, bumping reserved.
CREATE TABLE binding_candidates (
    binding_name      text        PRIMARY KEY,
    global_account_id text        NOT NULL, -- '' for the rows of a shared pool
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    db_count          integer     NOT NULL,
    shoot_count       integer     NOT NULL,
    effective_count   integer     NOT NULL,
    cluster_limit     integer     NULL,     -- NULL: the GA may not use several bindings
    headroom          integer     NULL,
    selectable        boolean     NOT NULL,
    rank              integer     NOT NULL,
    reserved          integer     NOT NULL DEFAULT 0,
    computed_at       timestamptz NOT NULL
);
CREATE INDEX binding_candidates_pick
    ON binding_candidates (global_account_id, hyperscaler_type, eu_access, rank);

-- One row per instance provisioning placed since the counts were taken: it
-- counts against the binding until a run sees the instance in KEB's table.
CREATE TABLE binding_reservations (
    instance_id       text        PRIMARY KEY,
    binding_name      text        NOT NULL,
    global_account_id text        NOT NULL,
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    reserved_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX binding_reservations_binding
    ON binding_reservations (binding_name);

-- Since when a claimed binding has been seen empty, run after run.
CREATE TABLE binding_empty_since (
    binding_name      text        PRIMARY KEY,
    global_account_id text        NOT NULL,
    empty_since       timestamptz NOT NULL,
    last_seen         timestamptz NOT NULL DEFAULT now()
);

-- Every release decision and what came of it, dry runs included.
CREATE TABLE binding_releases (
    id                bigserial   PRIMARY KEY,
    binding_name      text        NOT NULL,
    global_account_id text        NOT NULL,
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    mode              text        NOT NULL,
    reason            text        NOT NULL,
    dry_run           boolean     NOT NULL,
    outcome           text        NOT NULL,
    created_at        timestamptz NOT NULL
);
CREATE INDEX binding_releases_binding
    ON binding_releases (binding_name, created_at);
