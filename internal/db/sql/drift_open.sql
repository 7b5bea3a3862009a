-- Every open finding.
SELECT * FROM {{schema}}.binding_drift WHERE resolved_at IS NULL
