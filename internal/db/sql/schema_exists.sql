-- Whether the schema @schema exists.
SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = @schema)
