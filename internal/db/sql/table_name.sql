-- The table @table (schema-qualified) as a name, or NULL when it does not
-- exist.
SELECT to_regclass(@table)::text
