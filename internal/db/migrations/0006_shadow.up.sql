-- What the candidate table held over time, so that KEB's own picks can be
-- compared with what the table would have answered at that moment (the
-- shadow job). A rewrite closes the versions of the rows it changes or
-- removes and opens one for each row it writes; valid_to NULL is the row
-- the table holds now. Both times are the database's.
CREATE TABLE candidate_history (
    binding_name      text        NOT NULL,
    global_account_id text        NOT NULL,
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    db_count          integer     NOT NULL,
    shoot_count       integer     NOT NULL,
    effective_count   integer     NOT NULL,
    cluster_limit     integer     NULL,
    selectable        boolean     NOT NULL,
    guarded           boolean     NOT NULL,
    rank              integer     NOT NULL,
    valid_from        timestamptz NOT NULL,
    valid_to          timestamptz NULL
);
CREATE INDEX candidate_history_open
    ON candidate_history (binding_name) WHERE valid_to IS NULL;
CREATE INDEX candidate_history_group
    ON candidate_history (global_account_id, hyperscaler_type, eu_access, valid_from);

-- Every rewrite of the candidate table: when it was committed and the
-- snapshot it was computed from, so the table's age at any moment is known.
CREATE TABLE candidate_rewrites (
    written_at  timestamptz PRIMARY KEY,
    snapshot_at timestamptz NOT NULL
);

-- Each instance KEB placed, compared once with the table's answer at that
-- moment. outcome: agree, or the reason they part (deviation, drift, claim,
-- staleness).
CREATE TABLE shadow_picks (
    instance_id       text        PRIMARY KEY,
    global_account_id text        NOT NULL,
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    keb_binding       text        NOT NULL,
    table_answer      text        NOT NULL,
    outcome           text        NOT NULL,
    detail            text        NOT NULL DEFAULT '',
    picked_at         timestamptz NOT NULL,
    snapshot_at       timestamptz NULL,
    compared_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX shadow_picks_picked_at ON shadow_picks (picked_at);
