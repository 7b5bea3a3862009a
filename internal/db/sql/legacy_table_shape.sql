-- How many of the legacy migrator's columns the table @table has: 3 when
-- it is that migrator's table, whatever else bears its name.
SELECT count(*) FROM pg_attribute
WHERE attrelid = to_regclass(@table) AND attname IN ('version', 'name', 'applied_at') AND NOT attisdropped
