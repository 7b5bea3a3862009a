-- Drops the legacy migrator's table ({{legacy}}) once its version is taken
-- over.
DROP TABLE {{schema}}.{{legacy}}
