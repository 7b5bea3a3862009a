-- Forgets the compared picks made more than @keep seconds ago.
DELETE FROM {{schema}}.shadow_picks WHERE picked_at < now() - make_interval(secs => @keep)
