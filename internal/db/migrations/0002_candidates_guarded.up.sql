-- KEB's guard (minBindingsForGuard): every row of a guarded GA and pool
-- carries it, and provisioning neither picks from the group nor claims.
ALTER TABLE binding_candidates
    ADD COLUMN guarded boolean NOT NULL DEFAULT false;
