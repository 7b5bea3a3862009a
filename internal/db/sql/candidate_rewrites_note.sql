-- Notes a rewrite of the candidate table, now, with the time of the
-- snapshot it came from.
INSERT INTO {{schema}}.candidate_rewrites (written_at, snapshot_at) VALUES (now(), @snapshot_at)
ON CONFLICT (written_at) DO NOTHING
