-- The versions of the candidate rows of the global accounts @gas (a JSON
-- array) still held at @from or written since.
SELECT * FROM {{schema}}.candidate_history
WHERE (valid_to IS NULL OR valid_to > @from)
  AND global_account_id IN (SELECT jsonb_array_elements_text((@gas)::jsonb))
