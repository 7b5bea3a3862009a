-- The picks compared since @since, oldest first.
SELECT * FROM {{schema}}.shadow_picks WHERE picked_at >= @since ORDER BY picked_at, instance_id COLLATE "C"
