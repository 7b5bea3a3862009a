-- Drops the reservations older than @ttl seconds, whose instance KEB never
-- wrote, and names the binding of each.
DELETE FROM {{schema}}.binding_reservations
WHERE reserved_at < now() - make_interval(secs => @ttl)
RETURNING binding_name
