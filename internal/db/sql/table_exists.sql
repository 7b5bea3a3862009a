-- Whether the table @table (schema-qualified) exists.
SELECT to_regclass(@table) IS NOT NULL
