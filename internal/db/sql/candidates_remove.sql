-- Removes the rows of the bindings @bindings (a JSON array of names).
DELETE FROM {{schema}}.binding_candidates
WHERE binding_name IN (SELECT jsonb_array_elements_text((@bindings)::jsonb))
