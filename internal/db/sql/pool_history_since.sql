-- The samples recorded since @since, oldest first.
SELECT * FROM {{schema}}.pool_history WHERE recorded_at >= @since ORDER BY recorded_at
