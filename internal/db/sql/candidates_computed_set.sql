-- Says which snapshot the candidate table now comes from: its time,
-- @computed_at, is the table's age NextBinding measures. How far the table
-- has seen Gardener (gardener_seen_at) can only be vouched for up to the
-- snapshot now: a rewrite from another process's snapshot may lack changes
-- the stamp counted in, and one whose bindings were listed live holds every
-- change before @computed_at. serve stamps its own rewrite again once it
-- proved it (candidates_seen_stamp.sql); a table never stamped stays so
-- (least alone would turn NULL into @computed_at).
INSERT INTO {{schema}}.candidates_computed (single, computed_at) VALUES (true, @computed_at)
ON CONFLICT (single) DO UPDATE SET computed_at = excluded.computed_at,
    gardener_seen_at = CASE WHEN candidates_computed.gardener_seen_at IS NULL THEN NULL
                            ELSE least(candidates_computed.gardener_seen_at, excluded.computed_at) END
