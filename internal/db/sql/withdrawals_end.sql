-- Ends the withdrawals made before @taken_at whose binding is not among
-- @dirty (a JSON array of names). withdrawn_at decides in this one
-- statement: a withdrawal made anew since the snapshot is one the snapshot
-- cannot speak for.
DELETE FROM {{schema}}.withdrawn_bindings
WHERE withdrawn_at < @taken_at
  AND binding_name NOT IN (SELECT jsonb_array_elements_text((@dirty)::jsonb))
