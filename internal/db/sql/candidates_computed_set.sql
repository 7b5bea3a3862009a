-- Says which snapshot the candidate table now comes from: its time,
-- @computed_at, is the table's age NextBinding measures.
INSERT INTO {{schema}}.candidates_computed (single, computed_at) VALUES (true, @computed_at)
ON CONFLICT (single) DO UPDATE SET computed_at = excluded.computed_at
