-- Takes back what this transaction recorded of the bindings @bindings (a
-- JSON array of names), whose rows the rewrite left as RecordClaim wrote
-- them: the versions it started are dropped and the ones it ended are open
-- again, as if it had not touched them.
WITH started AS (
    DELETE FROM {{schema}}.candidate_history
    WHERE valid_to IS NULL AND valid_from = now() AND binding_name IN (SELECT jsonb_array_elements_text((@bindings)::jsonb))
)
UPDATE {{schema}}.candidate_history SET valid_to = NULL
WHERE valid_to = now() AND binding_name IN (SELECT jsonb_array_elements_text((@bindings)::jsonb))
