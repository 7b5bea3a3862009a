-- Frees the session-level advisory lock @key.
SELECT pg_advisory_unlock(@key)
