-- Ends the records of the claims made at or before @settled, which the
-- snapshot shows.
DELETE FROM {{schema}}.recorded_claims WHERE claimed_at <= @settled
