-- When the candidate table was last brought up to date. A rewrite touches
-- only the rows that change, so the rows' own computed_at says when each
-- last changed; this one row says when the whole table was last computed.
CREATE TABLE candidates_computed (
    single      boolean     PRIMARY KEY DEFAULT true CHECK (single),
    computed_at timestamptz NOT NULL
);
