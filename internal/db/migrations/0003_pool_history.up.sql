-- Free and claimed bindings of every dedicated pool, one row per pool and
-- run, for the exhaustion estimate. The job prunes rows past its retention.
CREATE TABLE pool_history (
    recorded_at      timestamptz NOT NULL,
    hyperscaler_type text        NOT NULL,
    eu_access        boolean     NOT NULL,
    free             integer     NOT NULL,
    claimed          integer     NOT NULL,
    PRIMARY KEY (hyperscaler_type, eu_access, recorded_at)
);
CREATE INDEX pool_history_recorded_at ON pool_history (recorded_at);
