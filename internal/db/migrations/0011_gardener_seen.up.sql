-- How far the candidate table has seen Gardener: every change to the
-- namespace's CredentialsBindings that Gardener committed before
-- gardener_seen_at is in binding_candidates. serve's watch proves it and
-- writes it, only on the rewrite it proved it for; a rewrite from an older
-- snapshot lowers a later stamp to that snapshot's time. NULL until serve's
-- first proof; a CronJob never raises it.
-- A pick whose table has seen Gardener within the Client's bound trusts the
-- table's tenant, pool and dirty state of its proposal, as KEB's live path
-- trusts a list it made a moment before; an older one has Gardener confirm.
ALTER TABLE candidates_computed ADD COLUMN gardener_seen_at timestamptz;
