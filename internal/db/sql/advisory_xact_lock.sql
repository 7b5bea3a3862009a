-- Waits for the transaction-scoped advisory lock @key (Store.advisoryKey).
SELECT pg_advisory_xact_lock(@key)
