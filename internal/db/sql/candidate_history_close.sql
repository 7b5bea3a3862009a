-- Ends, now, the open versions of the bindings @bindings (a JSON array of
-- names).
UPDATE {{schema}}.candidate_history SET valid_to = now()
WHERE valid_to IS NULL AND binding_name IN (SELECT jsonb_array_elements_text((@bindings)::jsonb))
