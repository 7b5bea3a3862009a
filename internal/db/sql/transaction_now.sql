-- The database's clock, as of the transaction's start.
SELECT now()
