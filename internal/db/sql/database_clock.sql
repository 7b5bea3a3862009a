-- The database's clock, now (not as of the transaction's start).
SELECT clock_timestamp()
