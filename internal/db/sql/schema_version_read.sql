-- The version golang-migrate records in the job's schema ({{migrations}}
-- is its table).
SELECT version, dirty FROM {{schema}}.{{migrations}} LIMIT 1
