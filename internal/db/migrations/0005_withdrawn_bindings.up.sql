-- Bindings taken out of every pick before the job's next snapshot can show
-- why: KEB's free step withdraws a binding right after marking it dirty, and
-- the release withdraws one before it marks it. NextBinding skips them. A
-- candidates run ends a withdrawal once a snapshot taken after it shows the
-- binding without dirty, or gone; RecordClaim ends it when KEB claims the
-- binding anew.
CREATE TABLE withdrawn_bindings (
    binding_name text        PRIMARY KEY,
    withdrawn_at timestamptz NOT NULL
);
