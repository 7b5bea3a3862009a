-- Forgets the rewrites committed more than @keep seconds ago. The newest
-- rewrite stays whatever its age: it says how old the table is.
DELETE FROM {{schema}}.candidate_rewrites
WHERE written_at < now() - make_interval(secs => @keep)
  AND written_at < (SELECT max(written_at) FROM {{schema}}.candidate_rewrites)
