-- Forgets the findings resolved more than @keep seconds ago. An open finding
-- (resolved_at NULL) is never touched: the drift job still updates it.
DELETE FROM {{schema}}.binding_drift
WHERE resolved_at < now() - make_interval(secs => @keep)
