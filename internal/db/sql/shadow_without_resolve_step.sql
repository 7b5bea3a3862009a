-- Stands in for shadow_resolve_step.sql when KEB's events cannot be read:
-- every pick is then timed by its provision request.
LEFT JOIN LATERAL (SELECT NULL::timestamptz AS at) r ON true
