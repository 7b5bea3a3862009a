-- When KEB ran the step that wrote the instance's binding. KEB writes the
-- binding in the resolve step
-- (internal/process/provisioning/resolve_credentials_binding.go,
-- ResolveCredentialsBindingStep.Run, updateInstance), and the row's
-- updated_at of that write is overwritten by a later step
-- (generate_runtime_id_step.go updates the row again). What survives is
-- KEB's event log: its staged manager (internal/process/staged_manager.go,
-- Execute and runStep) writes the event "processing step:
-- Resolve_Credentials_Binding" before each run of the step, and "step
-- Resolve_Credentials_Binding sleeping for ..." before each retry within a
-- run, on the provisioning operation, by KEB's clock. The binding is
-- written in the run that follows the last of them: every step is a stage
-- of its own, and a finished stage never runs again. Index probes only:
-- operations_by_instance_id, then events_operation_id.
LEFT JOIN LATERAL (
    SELECT max(e.created_at) AS at
    FROM operations o
    JOIN events e ON e.operation_id = o.id
    WHERE o.instance_id = i.instance_id AND o.type = 'provision'
      AND (e.message = 'processing step: Resolve_Credentials_Binding'
           OR e.message LIKE 'step Resolve\_Credentials\_Binding sleeping for %')
) r ON true
