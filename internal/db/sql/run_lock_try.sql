-- Takes the session-level advisory lock @key unless another session holds
-- it.
SELECT pg_try_advisory_lock(@key)
