-- Drops the reservations of the instances a snapshot's database read
-- already counts (@instances, a JSON array of instance ids) and names the
-- binding of each.
DELETE FROM {{schema}}.binding_reservations
WHERE instance_id IN (SELECT jsonb_array_elements_text((@instances)::jsonb))
RETURNING binding_name
