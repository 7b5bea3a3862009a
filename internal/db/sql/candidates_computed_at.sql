-- When the snapshot the candidate table comes from was taken; the zero
-- time before the first rewrite.
SELECT coalesce(max(computed_at), '0001-01-01') FROM {{schema}}.candidates_computed
