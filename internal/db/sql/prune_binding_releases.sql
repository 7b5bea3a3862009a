-- Forgets the audit rows written more than @keep seconds ago, except the
-- open intents (@open, a JSON array of their ids, as
-- release_intents_open.sql read them just before): the release job still
-- settles those. A row kept is never left needing one forgotten: an outcome
-- is written after the intent it settles, so an intent younger than @keep
-- keeps its outcome, and an intent older than @keep is open (kept) or
-- settled and forgotten with its outcome.
DELETE FROM {{schema}}.binding_releases
WHERE created_at < now() - make_interval(secs => @keep)
  AND id NOT IN (SELECT (jsonb_array_elements_text((@open)::jsonb))::bigint)
