-- The candidate table's rewrites from the one in force at @from on.
SELECT written_at, snapshot_at FROM {{schema}}.candidate_rewrites
WHERE written_at >= (SELECT coalesce(max(written_at), '-infinity') FROM {{schema}}.candidate_rewrites WHERE written_at <= @from)
ORDER BY written_at
