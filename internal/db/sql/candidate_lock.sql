-- Locks the candidate row of binding @binding, the way a pick locks it.
SELECT 1 FROM {{schema}}.binding_candidates WHERE binding_name = @binding FOR UPDATE
