-- The active instances ({{active}}) and the reservations on binding
-- @binding.
SELECT (SELECT count(*) FROM instances WHERE subscription_secret_name = @binding AND {{active}})
     + (SELECT count(*) FROM {{schema}}.binding_reservations WHERE binding_name = @binding)
