-- One claim however many of KEB's workers ask (provisioning.NextBinding):
-- the first request that finds a GA's bindings of a pool full holds the
-- claim of that GA and pool until it records the claim (RecordClaim ends
-- the lease), abandons it, or the lease expires; every other request for
-- the same GA and pool waits for it meanwhile. One row per GA and pool at
-- most: a lease past its expiry is taken over in place by the next claim.
CREATE TABLE claim_leases (
    global_account_id text        NOT NULL,
    hyperscaler_type  text        NOT NULL,
    eu_access         boolean     NOT NULL,
    instance_id       text        NOT NULL,
    expires_at        timestamptz NOT NULL,
    PRIMARY KEY (global_account_id, hyperscaler_type, eu_access)
);
