-- Drops the samples recorded before @before.
DELETE FROM {{schema}}.pool_history WHERE recorded_at < @before
