-- Takes binding @binding out of every pick, as KEB's free step does
-- (provisioning.WithdrawBinding): its candidate row is no longer
-- selectable, and the withdrawal, with @reason, outlives a candidates
-- rewrite decided on a snapshot taken before the release marks the binding
-- dirty.
WITH unselectable AS (
    UPDATE {{schema}}.binding_candidates SET selectable = false WHERE binding_name = @binding
)
INSERT INTO {{schema}}.withdrawn_bindings (binding_name, withdrawn_at, reason) VALUES (@binding, now(), @reason)
ON CONFLICT (binding_name) DO UPDATE SET withdrawn_at = now(), reason = excluded.reason
