-- Forgets the pools' samples recorded more than @keep seconds ago.
DELETE FROM {{schema}}.pool_history WHERE recorded_at < now() - make_interval(secs => @keep)
