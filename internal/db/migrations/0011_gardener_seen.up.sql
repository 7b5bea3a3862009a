-- How far the candidate table has seen Gardener: every change to the
-- namespace's CredentialsBindings that Gardener committed before
-- gardener_seen_at is in binding_candidates. serve's watch proves it and
-- writes it (never backwards); NULL until then, and a CronJob never does.
-- A pick whose table has seen Gardener within the Client's bound trusts the
-- table's tenant, pool and dirty state of its proposal, as KEB's live path
-- trusts a list it made a moment before; an older one has Gardener confirm.
ALTER TABLE candidates_computed ADD COLUMN gardener_seen_at timestamptz;
