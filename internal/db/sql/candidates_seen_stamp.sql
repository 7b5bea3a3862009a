-- Stamps how far the candidate table has seen Gardener: every change to the
-- namespace's bindings committed before @seen_at is in the table. Only the
-- rewrite serve proved it for may be stamped, the one from the snapshot
-- taken at @computed_at; after any other rewrite, or before the first,
-- nothing is. The stamp never goes back.
UPDATE {{schema}}.candidates_computed
SET gardener_seen_at = greatest(coalesce(gardener_seen_at, '-infinity'), @seen_at)
WHERE computed_at = @computed_at
