-- The reservations provisioning holds on binding @binding.
SELECT count(*) FROM {{schema}}.binding_reservations WHERE binding_name = @binding
