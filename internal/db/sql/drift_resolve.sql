-- Resolves, at @now, the findings @ids (a JSON array of row ids).
UPDATE {{schema}}.binding_drift SET resolved_at = @now
WHERE id IN (SELECT (jsonb_array_elements_text((@ids)::jsonb))::bigint)
