-- Whether this session still holds the advisory lock @key: a bigint key is
-- stored as its high and low 32 bits, with objsubid 1.
SELECT count(*) = 1 FROM pg_locks
WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
  AND ((classid::bigint << 32) | objid::bigint) = @key
