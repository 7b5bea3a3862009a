-- The reservations whose instance KEB's table already shows on the
-- reserved binding: the counts read beside it include them.
SELECT r.instance_id FROM {{schema}}.binding_reservations r
JOIN instances i ON i.instance_id = r.instance_id AND i.subscription_secret_name = r.binding_name
ORDER BY r.instance_id COLLATE "C"
